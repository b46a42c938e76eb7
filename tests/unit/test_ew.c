/* test_ew.c - (being written) */
#include "suites.h"

Suite *ew_suite(void) { return suite_create("ew"); }
