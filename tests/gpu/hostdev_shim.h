// hostdev_shim.h - CUDA's built-ins for running the plugin's generated kernels on the host
// (tests/gpu/hostdev.sh): a grid-stride kernel runs as one block of one thread; a block kernel
// (reductions, softmax: TSL_BLOCK threads cooperating through shared memory) runs each block
// on a pool of 256 std::threads meeting at a std::barrier for __syncthreads, blocks one after
// another (so a function's static __shared__ array is one block's shared memory).
#include <barrier>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <thread>
#include <vector>
using std::isfinite;
using std::isinf;
using std::isnan;
#define __global__
#define __device__
#define __forceinline__ inline
#define __shared__ static
struct EmulDim { unsigned x; };
static EmulDim blockIdx = { 0 }, blockDim = { 1 }, gridDim = { 1 };
static thread_local EmulDim threadIdx = { 0 };
static std::barrier<> *emul_barrier;
inline void __syncthreads() { if (emul_barrier) emul_barrier->arrive_and_wait(); }
inline long long __double_as_longlong(double x) { long long b; std::memcpy(&b, &x, sizeof b); return b; }
inline double __longlong_as_double(long long b) { double x; std::memcpy(&x, &b, sizeof x); return x; }
inline float __int_as_float(int b) { float x; std::memcpy(&x, &b, sizeof x); return x; }
inline unsigned long long atomicMin(unsigned long long *p, unsigned long long v) { unsigned long long o = *p; if (v < o) *p = v; return o; }
inline int atomicMax(int *p, int v) { int o = *p; if (v > o) *p = v; return o; }
inline int atomicExch(int *p, int v) { int o = *p; *p = v; return o; }
inline int atomicCAS(int *p, int c, int v) { int o = *p; if (o == c) *p = v; return o; }

// 256 threads that run one block's job at a time, made on first use and stopped at exit
// (joined, so that LeakSanitizer's check at exit meets no thread waiting in a barrier)
struct EmulPool {
    std::barrier<> start{ 257 }, end{ 257 }, sync{ 256 };
    std::function<void()> job;
    std::vector<std::thread> threads;
    bool quit = false;
    EmulPool() {
        for (unsigned t = 0; t < 256; t++)
            threads.emplace_back([this, t] {
                threadIdx.x = t;
                for (;;) {
                    start.arrive_and_wait();
                    if (quit) return;
                    job();
                    end.arrive_and_wait();
                }
            });
    }
    void stop() {
        quit = true;
        start.arrive_and_wait();
        for (auto &t : threads) t.join();
    }
};
static EmulPool *emul_pool;
static void emul_pool_stop() { emul_pool->stop(); }

// items blocks of 256 threads running f, one block after another
template <typename F> static void emul_blocks(long long items, F f) {
    if (!emul_pool) {
        emul_pool = new EmulPool;
        std::atexit(emul_pool_stop);
    }
    EmulPool *pool = emul_pool;
    blockDim.x = 256;
    gridDim.x = (unsigned)items;
    emul_barrier = &pool->sync;
    pool->job = f;
    for (long long b = 0; b < items; b++) {
        blockIdx.x = (unsigned)b;
        pool->start.arrive_and_wait();
        pool->end.arrive_and_wait();
    }
    emul_barrier = nullptr;
    blockDim.x = gridDim.x = 1;
    blockIdx.x = 0;
}
