/* wire.h - little-endian byte streams for the graph file (docs/format.md).
 *
 * A Writer appends to a growing buffer. A Reader never reads past its end: every get checks
 * the bytes left first, and the first failure makes the reader "bad" (later gets return 0),
 * so a parser can read a whole record and check once. Counts are checked against the bytes
 * left before anything is allocated for them (wire_count). */
#ifndef TSL_WIRE_H
#define TSL_WIRE_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct {
    uint8_t *p;
    size_t len, cap;
} Writer;

void wire_put(Writer *w, const void *bytes, size_t n);
void wire_u8(Writer *w, uint8_t x);
void wire_u32(Writer *w, uint32_t x);
void wire_i32(Writer *w, int32_t x);
void wire_u64(Writer *w, uint64_t x);
void wire_i64(Writer *w, int64_t x);
void wire_f64(Writer *w, double x);
void wire_pad(Writer *w, size_t align);            /* zero bytes up to a multiple of align */
void wire_set_u32(Writer *w, size_t at, uint32_t x);   /* patch earlier bytes */
void wire_set_u64(Writer *w, size_t at, uint64_t x);

typedef struct {
    const uint8_t *p, *end;
    bool bad;             /* a get ran past the end, or a check failed */
} Reader;

static inline size_t wire_left(const Reader *r) { return r->bad ? 0 : (size_t)(r->end - r->p); }
uint8_t wire_get_u8(Reader *r);
uint32_t wire_get_u32(Reader *r);
int32_t wire_get_i32(Reader *r);
uint64_t wire_get_u64(Reader *r);
int64_t wire_get_i64(Reader *r);
double wire_get_f64(Reader *r);
/* A u32 count of records of at least `min_each` bytes, checked against the bytes left and
 * against `max` (the reader goes bad when it does not fit). */
uint32_t wire_count(Reader *r, size_t min_each, uint32_t max);

/* Test hook: called with the place and width of every integer field a Reader reads (the
 * loader's field sweep finds the fields this way). NULL: off. One per thread. */
typedef void (*WireFieldHook)(const uint8_t *at, int width, void *ud);
void wire_set_field_hook(WireFieldHook hook, void *ud);

uint64_t wire_le64(const uint8_t *p);
uint32_t wire_le32(const uint8_t *p);
/* FNV-1a, 64 bits: the file's checksum (detects damage, not tampering). */
uint64_t wire_fnv1a(uint64_t h, const void *bytes, size_t n);
#define WIRE_FNV_INIT 0xcbf29ce484222325ull

#endif
