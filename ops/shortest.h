/* shortest.h - the shortest decimal text that reads back as a number: what print writes for a
 * number that is not an integer, format("") for an f32 element, and save_csv's elements. */
#ifndef TSL_SHORTEST_H
#define TSL_SHORTEST_H
#include <stdbool.h>
#include <stddef.h>

/* The fewest significant digits, in printf's %g style ("0.30000000000000004", "1e-07"),
 * that strtod reads back as x (f32: as the f32 x, which is then a float's value); among
 * texts of that length the nearest to x, as Python's repr and NumPy choose. */
void num_shortest(char *buf, size_t size, double x, bool f32);

#endif
