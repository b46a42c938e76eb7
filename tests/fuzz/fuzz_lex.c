/* fuzz_lex.c - the lexer on arbitrary bytes: it must tokenize or report, never crash. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "token.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char *src = malloc(size + 1);
    memcpy(src, data, size);
    src[size] = 0;
    TokenList tl;
    lex_source(src, size, &tl);
    lex_free(&tl);
    free(src);
    return 0;
}
