/* fuzz_parse.c - the parser on arbitrary text: a tree or a located error, never a crash;
 * parsing the same text twice gives the same outcome (no hidden state). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "parse.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char *src = malloc(size + 1);
    memcpy(src, data, size);
    src[size] = 0;
    ParseError e1, e2;
    Node *a = parse_program(src, size, 200, &e1);
    Node *b = parse_program(src, size, 200, &e2);
    if ((a == NULL) != (b == NULL)) abort();
    if (!a && (e1.loc.line != e2.loc.line || e1.loc.col != e2.loc.col || strcmp(e1.msg, e2.msg))) abort();
    ast_free(a);
    ast_free(b);
    free(src);
    return 0;
}
