/* wire.c - little-endian writer and bounds-checked reader (see wire.h). */
#include <string.h>
#include "wire.h"
#include "mem.h"

void wire_put(Writer *w, const void *bytes, size_t n) {
    if (w->len + n > w->cap) {
        size_t cap = w->cap ? w->cap : 256;
        while (cap < w->len + n) cap *= 2;
        w->p = mem_realloc(w->p, cap);
        w->cap = cap;
    }
    if (n) memcpy(w->p + w->len, bytes, n);
    w->len += n;
}

/* The file is little-endian on every host: bytes are placed one by one. */
static void put_le(Writer *w, uint64_t x, int n) {
    uint8_t b[8];
    for (int i = 0; i < n; i++) b[i] = (uint8_t)(x >> (8 * i));
    wire_put(w, b, (size_t)n);
}

void wire_u8(Writer *w, uint8_t x) { wire_put(w, &x, 1); }
void wire_u32(Writer *w, uint32_t x) { put_le(w, x, 4); }
void wire_i32(Writer *w, int32_t x) { put_le(w, (uint32_t)x, 4); }
void wire_u64(Writer *w, uint64_t x) { put_le(w, x, 8); }
void wire_i64(Writer *w, int64_t x) { put_le(w, (uint64_t)x, 8); }
void wire_f64(Writer *w, double x) {
    uint64_t u;
    memcpy(&u, &x, 8);
    put_le(w, u, 8);
}

void wire_pad(Writer *w, size_t align) {
    static const uint8_t zeros[64];
    while (w->len % align) wire_put(w, zeros, align - w->len % align > 64 ? 64 : align - w->len % align);
}

void wire_set_u32(Writer *w, size_t at, uint32_t x) {
    for (int i = 0; i < 4; i++) w->p[at + (size_t)i] = (uint8_t)(x >> (8 * i));
}
void wire_set_u64(Writer *w, size_t at, uint64_t x) {
    for (int i = 0; i < 8; i++) w->p[at + (size_t)i] = (uint8_t)(x >> (8 * i));
}

uint64_t wire_le64(const uint8_t *p) {
    uint64_t x = 0;
    for (int i = 7; i >= 0; i--) x = x << 8 | p[i];
    return x;
}
uint32_t wire_le32(const uint8_t *p) { return (uint32_t)wire_le64((const uint8_t[8]){ p[0], p[1], p[2], p[3] }); }

static _Thread_local WireFieldHook field_hook;
static _Thread_local void *field_ud;

void wire_set_field_hook(WireFieldHook hook, void *ud) {
    field_hook = hook;
    field_ud = ud;
}

static const uint8_t *take(Reader *r, size_t n) {
    if (r->bad || (size_t)(r->end - r->p) < n) {
        r->bad = true;
        return NULL;
    }
    const uint8_t *q = r->p;
    if (field_hook) field_hook(q, (int)n, field_ud);
    r->p += n;
    return q;
}

uint8_t wire_get_u8(Reader *r) {
    const uint8_t *q = take(r, 1);
    return q ? *q : 0;
}
uint32_t wire_get_u32(Reader *r) {
    const uint8_t *q = take(r, 4);
    return q ? wire_le32(q) : 0;
}
int32_t wire_get_i32(Reader *r) { return (int32_t)wire_get_u32(r); }
uint64_t wire_get_u64(Reader *r) {
    const uint8_t *q = take(r, 8);
    return q ? wire_le64(q) : 0;
}
int64_t wire_get_i64(Reader *r) { return (int64_t)wire_get_u64(r); }
double wire_get_f64(Reader *r) {
    uint64_t u = wire_get_u64(r);
    double x;
    memcpy(&x, &u, 8);
    return x;
}

uint32_t wire_count(Reader *r, size_t min_each, uint32_t max) {
    uint32_t n = wire_get_u32(r);
    if (n > max || (min_each && n > wire_left(r) / min_each)) r->bad = true;
    return r->bad ? 0 : n;
}

uint64_t wire_fnv1a(uint64_t h, const void *bytes, size_t n) {
    const uint8_t *p = bytes;
    for (size_t i = 0; i < n; i++) {
        h ^= p[i];
        h *= 0x100000001b3ull;
    }
    return h;
}
