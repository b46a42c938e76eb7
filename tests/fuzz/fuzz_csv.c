/* fuzz_csv.c - load_csv's readers on arbitrary files, with a header (quoted fields, columns
 * of numbers or text) and without: a table, a tensor or an error, never a crash. */
#include "fuzz_file.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    const char *path = fuzz_file("csv", data, size);
    if (!path) return 0;
    CsvOptions o = { ',', 0, false };
    CsvTable t;
    if (csv_table_load(path, &o, &t) == 0) csv_table_free(&t);
    tensor_release(csv_load(path, &o));
    return 0;
}
