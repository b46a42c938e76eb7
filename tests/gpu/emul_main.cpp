// emul_main.cpp - runs the plugin's sort/pad and integer-matmul / cuSOLVER-aid kernels on
// the host (tests/gpu/emul.sh appends this to emul_shim.h and the modules' source) with the
// launch sequences of ops/gpu/cuda/sort.c and ops/gpu/cuda/solver.c, and compares each result with a
// reference written here from the CPU's definitions (ops/cpu/axis.c, linalg.c, lapack.c):
// stable order with NaN last (first when descending) and -0 tied with +0, the first of equal
// elements in unique, wrapping i64 matmul over a broadcast batch. A machine without a GPU can
// check the kernels' index arithmetic and the bitonic network this way.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

static int failures;
#define EXPECT(cond, ...) do { if (!(cond)) { failures++; std::printf("FAIL " __VA_ARGS__); std::printf("\n"); } } while (0)

static uint64_t rng = 88172645463325252ull;
static uint64_t next() { rng ^= rng << 13; rng ^= rng >> 7; rng ^= rng << 17; return rng; }

// value order of the CPU's sort: NaN above everything, -0 == +0 (integers compared exactly)
template <typename T> static bool before(T a, T b, bool desc) {
    bool an = a != a, bn = b != b;
    if (an || bn) return desc ? an && !bn : bn && !an;
    return desc ? a > b : a < b;
}

static long long pow2(long long n) { long long p = 1; while (p < n) p <<= 1; return p; }

// ops/gpu/cuda/sort.c's network: tiles of 512 pairs in "shared memory", larger steps global
static void network(tsl_u64 *key, tsl_i64 *pos, long long total, long long P) {
    const long long T = 512, tiles = (total + T - 1) / T;
    auto tile = [&](long long k0, long long k1) {
        emul_grid = (unsigned)tiles;
        for (long long b = 0; b < tiles; b++) { emul_block = (unsigned)b; tsl_sort_tile(key, pos, total, P, k0, k1); }
        emul_block = 0;
        emul_grid = 1;
    };
    if (P > 1) tile(2, P < T ? P : T);
    for (long long k = 2 * T; k <= P; k <<= 1) {
        for (long long j = k >> 1; j >= T; j >>= 1) tsl_sort_step(key, pos, total, P, k, j);
        tile(k, k);
    }
}

// ops/gpu/cuda/sort.c sort_rows + the write: the first kout of each line
template <typename T, typename E>
static void gpu_sort(void (*keys)(const T *, long long, long long, long long, long long, tsl_u64, tsl_u64 *, tsl_i64 *),
                     void (*write)(const E *, const tsl_i64 *, long long, long long, long long, long long, long long, E *, tsl_i64 *),
                     const std::vector<T> &in, long long outer, long long n, long long inner, bool desc, long long kout,
                     std::vector<T> &vals, std::vector<long long> &idx) {
    long long P = pow2(n), total = outer * inner * P;
    std::vector<tsl_u64> key(total);
    std::vector<tsl_i64> pos(total);
    keys(in.data(), outer, n, inner, P, desc ? ~0ull : 0, key.data(), pos.data());
    network(key.data(), pos.data(), total, P);
    vals.assign(outer * kout * inner, T());
    idx.assign(outer * kout * inner, -1);
    write((const E *)in.data(), pos.data(), outer, n, inner, P, kout, (E *)vals.data(), (tsl_i64 *)idx.data());
}

template <typename T, typename E>
static void check_sort(const char *what, void (*keys)(const T *, long long, long long, long long, long long, tsl_u64, tsl_u64 *, tsl_i64 *),
                       void (*write)(const E *, const tsl_i64 *, long long, long long, long long, long long, long long, E *, tsl_i64 *),
                       T (*draw)()) {
    const long long shapes[][3] = { { 1, 1, 1 }, { 4, 7, 3 }, { 2, 37, 1 }, { 1, 64, 2 }, { 3, 5, 4 }, { 1, 300, 1 },
                                    { 1, 1500, 1 }, { 2, 700, 3 }, { 1, 4096, 1 } };
    for (auto &s : shapes)
        for (int desc = 0; desc < 2; desc++)
            for (long long kout : { s[1], s[1] / 2 }) {
                long long outer = s[0], n = s[1], inner = s[2];
                std::vector<T> in(outer * n * inner), vals;
                for (auto &x : in) x = draw();
                std::vector<long long> idx;
                gpu_sort<T, E>(keys, write, in, outer, n, inner, desc, kout, vals, idx);
                for (long long o = 0; o < outer; o++)
                    for (long long i = 0; i < inner; i++) {
                        std::vector<long long> ref(n);
                        for (long long j = 0; j < n; j++) ref[j] = j;
                        auto at = [&](long long j) { return in[(o * n + j) * inner + i]; };
                        std::stable_sort(ref.begin(), ref.end(), [&](long long a, long long b) { return before(at(a), at(b), desc); });
                        for (long long p = 0; p < kout; p++) {
                            long long t = (o * kout + p) * inner + i;
                            EXPECT(idx[t] == ref[p], "%s [%lld %lld %lld] desc=%d k=%lld: position %lld is %lld, want %lld", what,
                                   outer, n, inner, desc, kout, p, idx[t], ref[p]);
                            EXPECT(!std::memcmp(&vals[t], &in[(o * n + ref[p]) * inner + i], sizeof(T)),
                                   "%s: value at %lld differs", what, p);
                        }
                    }
            }
}

static float draw_f32() {
    uint64_t r = next() % 10;
    return r == 0 ? NAN : r == 1 ? -0.0f : r == 2 ? 0.0f : (float)((int)(next() % 7) - 3) * 0.5f;
}
static double draw_f64() { return (double)draw_f32(); }
static long long draw_i64() { return (long long)(next() % 5) - 2 + (next() % 9 == 0 ? (long long)1 << 62 : 0); }
static unsigned char draw_b8() { return next() % 2; }

// unique: sort one row, flags, one-block scan, writes (ops/gpu/cuda/sort.c cuda_unique)
static void check_unique() {
    for (long long n : { 1LL, 2LL, 9LL, 100LL, 257LL, 3000LL }) {
        std::vector<float> in(n);
        for (auto &x : in) x = draw_f32();
        long long P = pow2(n);
        std::vector<tsl_u64> key(P);
        std::vector<tsl_i64> pos(P), rank(P);
        tsl_sort_keys_f32(in.data(), 1, n, 1, P, 0, key.data(), pos.data());
        network(key.data(), pos.data(), P, P);
        std::vector<float> out(n);
        tsl_unique_flags(key.data(), n, rank.data());
        tsl_unique_scan(rank.data(), n);
        tsl_unique_write_4((const unsigned *)in.data(), key.data(), pos.data(), rank.data(), n, (unsigned *)out.data());
        long long m = rank[n - 1];
        // reference: stable order, then the first of each run of equal values (NaNs equal)
        std::vector<long long> ref(n);
        for (long long j = 0; j < n; j++) ref[j] = j;
        std::stable_sort(ref.begin(), ref.end(), [&](long long a, long long b) { return before(in[a], in[b], false); });
        std::vector<float> want;
        for (long long j = 0; j < n; j++) {
            float x = in[ref[j]];
            bool same = j > 0 && ((x != x && want.back() != want.back()) || x == want.back());
            if (!same) want.push_back(x);
        }
        EXPECT(m == (long long)want.size(), "unique n=%lld: %lld values, want %zu", n, m, want.size());
        for (long long j = 0; j < m && j < (long long)want.size(); j++)
            EXPECT(!std::memcmp(&out[j], &want[j], sizeof(float)), "unique n=%lld: value %lld differs", n, j);
    }
}

static void check_pad() {
    // [2, 3] padded by [[1, 2], [0, 1]] with 9
    std::vector<long long> in = { 1, 2, 3, 4, 5, 6 }, out(5 * 4);
    TslPadArgs a;
    std::memset(&a, 0, sizeof a);
    a.n = 20; a.ndim = 2; a.oshape[0] = 5; a.oshape[1] = 4; a.ishape[0] = 2; a.ishape[1] = 3; a.before[0] = 1; a.before[1] = 0;
    a.value = 9; a.in = in.data(); a.out = out.data();
    tsl_pad_8(a);
    const long long want[] = { 9, 9, 9, 9, 1, 2, 3, 9, 4, 5, 6, 9, 9, 9, 9, 9, 9, 9, 9, 9 };
    for (int i = 0; i < 20; i++) EXPECT(out[i] == want[i], "pad: element %d is %lld, want %lld", i, out[i], want[i]);
    float x = 2.5f, y = 0;   // a 0-d tensor is its element
    float v = -1;
    a.n = 1; a.ndim = 0; std::memcpy(&a.value, &v, 4); a.in = &x; a.out = &y;
    tsl_pad_4(a);
    EXPECT(y == 2.5f, "pad of a 0-d tensor");
}

// wrapping i64 matmul over a broadcast batch: a [2, 1, m, k] @ b [3, k, n] -> [2, 3, m, n]
static void check_imatmul() {
    const long long m = 3, k = 4, n = 5;
    for (int ta = 0; ta < 2; ta++) {
        std::vector<long long> a(2 * m * k), b(3 * k * n), c(6 * m * n);
        for (auto &x : a) x = (long long)(next() % 2001) - 1000 + (next() % 3 == 0 ? (long long)(next() >> 1) : 0);
        for (auto &x : b) x = (long long)(next() % 2001) - 1000;
        TslImatmulArgs j;
        std::memset(&j, 0, sizeof j);
        j.m = m; j.n = n; j.k = k; j.ta = ta; j.nbd = 2; j.total = 6 * m * n;
        j.bshape[0] = 2; j.bshape[1] = 3; j.astr[0] = m * k; j.astr[1] = 0; j.bstr[0] = 0; j.bstr[1] = k * n;
        j.a = a.data(); j.b = b.data(); j.c = c.data();
        tsl_imatmul(j);
        for (long long p = 0; p < 2; p++)
            for (long long q = 0; q < 3; q++)
                for (long long i = 0; i < m; i++)
                    for (long long jj = 0; jj < n; jj++) {
                        uint64_t s = 0;
                        for (long long r = 0; r < k; r++)
                            s += (uint64_t)a[p * m * k + (ta ? r * m + i : i * k + r)] * (uint64_t)b[q * k * n + r * n + jj];
                        long long got = c[((p * 3 + q) * m + i) * n + jj];
                        EXPECT(got == (long long)s, "imatmul ta=%d [%lld %lld %lld %lld]: %lld, want %lld", ta, p, q, i, jj, got, (long long)s);
                    }
    }
}

static void check_lapack_aid() {
    // det: LU diagonal 2, 3 with one row swap -> -6; singular (info 1) -> 0; 0 x 0 -> 1
    double lu[8] = { 2, 7, 7, 3, 1, 0, 0, 1 }, det[2];
    int ipiv[4] = { 2, 2, 1, 2 }, info[2] = { 0, 1 };
    tsl_det_f64(lu, ipiv, info, 2, 2, det);
    EXPECT(det[0] == -6 && det[1] == 0, "det: %g %g, want -6 0", det[0], det[1]);
    float d0 = 0;
    tsl_det_f32(nullptr, nullptr, info, 0, 1, &d0);
    EXPECT(d0 == 1, "det of a 0 x 0 matrix: %g", d0);
    // eye and tril on two 3 x 3 column-major matrices
    float e[18], l[18];
    tsl_eye_f32(e, 3, 18);
    for (int t = 0; t < 18; t++) { l[t] = 1; EXPECT(e[t] == ((t % 9) / 3 == (t % 9) % 3), "eye at %d", t); }
    tsl_tril_f32(l, 3, 18);
    for (int t = 0; t < 18; t++) EXPECT(l[t] == ((t % 9) % 3 >= (t % 9) / 3), "tril at %d: %g", t, l[t]);
    // qr's r (k x n row-major) from a 3 x 2 column-major matrix: r[p][j] = a(p, j) for j >= p
    double a[6] = { 1, 2, 3, 4, 5, 6 }, r[4];
    tsl_qr_r_f64(a, 3, 2, 2, 1, r);
    EXPECT(r[0] == 1 && r[1] == 4 && r[2] == 0 && r[3] == 5, "qr r: %g %g %g %g", r[0], r[1], r[2], r[3]);
}

int main() {
    check_sort<float, unsigned>("sort f32", tsl_sort_keys_f32, tsl_sort_write_4, draw_f32);
    check_sort<double, unsigned long long>("sort f64", tsl_sort_keys_f64, tsl_sort_write_8, draw_f64);
    check_sort<long long, unsigned long long>("sort i64", tsl_sort_keys_i64, tsl_sort_write_8, draw_i64);
    check_sort<unsigned char, unsigned char>("sort bool", tsl_sort_keys_b8, tsl_sort_write_1, draw_b8);
    check_unique();
    check_pad();
    check_imatmul();
    check_lapack_aid();
    if (failures) { std::printf("emul: %d failure(s)\n", failures); return 1; }
    std::printf("emul: sort (4 dtypes, 9 shapes up to lines of 4096, both orders, topk), unique, pad, i64 matmul, det/eye/tril/qr_r agree with the references\n");
    return 0;
}
