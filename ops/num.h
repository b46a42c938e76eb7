/* num.h - the one checked conversion of a user's number (a double) to an integer.
 *
 * Every place that turns a TSL number into an index, an axis, a count or a bound goes
 * through these, so nan, inf, fractions and out-of-range values never reach a C cast
 * (which would be undefined behaviour). They only decide; the caller words the error,
 * because only it knows what the number was for. */
#ifndef TSL_NUM_H
#define TSL_NUM_H
#include <math.h>
#include <stdbool.h>
#include <stdint.h>

/* x as an int64_t when it is integral and inside [-2^63, 2^63) (both bounds are exact
 * doubles); false for nan, +-inf, fractions and anything out of range. */
static inline bool num_to_i64(double x, int64_t *out) {
    if (!(x == floor(x) && x >= -9223372036854775808.0 && x < 9223372036854775808.0)) return false;
    *out = (int64_t)x;
    return true;
}

/* For slice bounds and steps, which Python clamps rather than rejects
 * ([1, 2, 3][::2**63] is [1]): an integral x saturated to [-(2^63-1), 2^63-1] (so -x
 * never overflows); false for nan, +-inf and fractions. */
static inline bool num_to_i64_clamped(double x, int64_t *out) {
    if (isnan(x) || isinf(x) || x != floor(x)) return false;
    if (x >= 9223372036854775807.0) *out = INT64_MAX;
    else if (x <= -9223372036854775807.0) *out = -INT64_MAX;
    else *out = (int64_t)x;
    return true;
}

/* How many indices start, start+step, ... lie before stop (Python's slice length), for
 * bounds already clamped to the sequence; computed without ever forming start + k*step
 * beyond stop, so a huge step cannot overflow. */
static inline int64_t slice_length(int64_t start, int64_t stop, int64_t step) {
    if (step > 0) return stop > start ? (stop - start - 1) / step + 1 : 0;
    return start > stop ? (start - stop - 1) / (-step) + 1 : 0;
}

/* How many values range(start, stop, step) has (step != 0), in u64: stop - start overflows
 * i64 for range(-2**63, 2**62). Value k is start + k*step, also computed in u64 (range_at). */
static inline uint64_t range_count(int64_t start, int64_t stop, int64_t step) {
    uint64_t dist = step > 0 ? (stop > start ? (uint64_t)stop - (uint64_t)start : 0)
                             : (start > stop ? (uint64_t)start - (uint64_t)stop : 0);
    uint64_t mag = step > 0 ? (uint64_t)step : 0 - (uint64_t)step;
    return dist ? (dist - 1) / mag + 1 : 0;
}

/* Value k (< range_count) of a range: i * step may pass 2**63 on the way, the sum never does. */
static inline int64_t range_at(int64_t start, int64_t step, uint64_t k) {
    return (int64_t)((uint64_t)start + k * (uint64_t)step);
}

#endif
