/* ast_print.h - syntax trees back to source text (lang/ast_print.c). */
#ifndef TSL_AST_PRINT_H
#define TSL_AST_PRINT_H
#include "value.h"

void ast_print_program(StrBuf *b, const Node *prog);
void ast_print_expr(StrBuf *b, const Node *n);

#endif
