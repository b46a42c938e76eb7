/* fuzz_parse.c - the parser on arbitrary text: a tree or a located error, never a crash.
 * A tree printed back as source parses again to a tree that prints the same (round trip). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ast_print.h"
#include "mem.h"
#include "parse.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char *src = malloc(size + 1);
    memcpy(src, data, size);
    src[size] = 0;
    ParseError e1, e2;
    Node *a = parse_program(src, size, 200, &e1);
    if (a) {
        StrBuf p1 = { 0 }, p2 = { 0 };
        sb_putn(&p1, "", 0);
        sb_putn(&p2, "", 0);
        ast_print_program(&p1, a);
        /* the printed form adds parentheses: allow the nesting they add */
        Node *b = parse_program(p1.s, p1.len, 100000, &e2);
        if (!b) {
            fprintf(stderr, "printed program does not parse: %s at %d:%d\n%s\n", e2.msg, e2.loc.line, e2.loc.col, p1.s);
            abort();
        }
        ast_print_program(&p2, b);
        if (strcmp(p1.s, p2.s)) {
            fprintf(stderr, "round trip differs:\n%s\n----\n%s\n", p1.s, p2.s);
            abort();
        }
        ast_free(b);
        sb_free(&p1);
        sb_free(&p2);
    }
    ast_free(a);
    free(src);
    return 0;
}
