/* shortest.c - the shortest decimal text that reads back as a number (shortest.h).
 *
 * printf's %.*g gives the p-digit decimal nearest to x, and the first p whose text reads back
 * is the answer, except at a power of two: there the gap to the next number below (toward
 * zero) is half the gap above, so the nearest p-digit decimal may lie below x and outside x's
 * rounding interval while the p-digit decimal just above it lies inside (2**-24 is
 * 5.960464477539063e-08, not 5.9604644775390625e-08). That one is the nearest p-digit
 * decimal to x moved a fifth of the upper gap away from zero, printed in long double. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include "shortest.h"

static bool reads_back(const char *s, double x, bool f32) {
    double b = strtod(s, NULL);
    return f32 ? (float)b == (float)x : b == x;
}

void num_shortest(char *buf, size_t size, double x, bool f32) {
    int most = f32 ? 9 : 17, e;
    bool pow2 = isfinite(x) && x != 0 && fabs(frexp(x, &e)) == 0.5;
    long double away = x;
    if (pow2) {
        double inf = x > 0 ? INFINITY : -INFINITY;
        double next = f32 ? (double)nextafterf((float)x, (float)inf) : nextafter(x, inf);
        if (isfinite(next)) away = (long double)x + 0.2L * ((long double)next - (long double)x);
    }
    for (int p = 1; p <= most; p++) {
        snprintf(buf, size, "%.*g", p, x);
        if (reads_back(buf, x, f32) || isnan(x)) return;
        if (pow2 && away != (long double)x) {
            char alt[64];
            snprintf(alt, sizeof alt, "%.*Lg", p, away);
            if (reads_back(alt, x, f32)) {
                snprintf(buf, size, "%s", alt);
                return;
            }
        }
    }
}
