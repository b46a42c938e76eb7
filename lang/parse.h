/* parse.h - recursive-descent parser from tokens to an AST. */
#ifndef TSL_PARSE_H
#define TSL_PARSE_H
#include "ast.h"

typedef struct {
    char msg[256];
    SrcLoc loc;
    int incomplete;   /* the input ended inside an open construct (REPL: read more) */
} ParseError;

/* Parse a whole source text into a BLOCK node. Returns NULL with *err filled on failure.
 * The source must stay alive while the tree is used only for error printing; the tree
 * itself copies every name and string it keeps. */
Node *parse_program(const char *src, size_t len, int max_nesting, ParseError *err);

#endif
