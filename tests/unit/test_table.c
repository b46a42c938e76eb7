/* test_table.c - (being written) */
#include "suites.h"

Suite *table_suite(void) { return suite_create("table"); }
