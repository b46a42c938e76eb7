/* token.h - token kinds (one X-macro table) and the token record.
 *
 * The lexer (lex.re, compiled by re2c) turns a whole source text into an array of
 * Tokens. Every token keeps its line and column so the parser, the AST and every
 * error message can point at the user's own source. */
#ifndef TSL_TOKEN_H
#define TSL_TOKEN_H
#include <stddef.h>
#include <stdint.h>

/* X(NAME, spelling used in error messages) */
#define TOKEN_LIST(X)                                                                   \
    X(EOF, "end of input") X(NEWLINE, "newline") X(ERROR, "invalid token")                 \
    X(NUMBER, "number") X(STRING, "string") X(IDENT, "name")                               \
    X(LPAREN, "'('") X(RPAREN, "')'") X(LBRACKET, "'['") X(RBRACKET, "']'")                \
    X(LBRACE, "'{'") X(RBRACE, "'}'") X(COMMA, "','") X(DOT, "'.'") X(COLON, "':'")       \
    X(SEMI, "';'") X(ELLIPSIS, "'...'")                                                    \
    X(PLUS, "'+'") X(MINUS, "'-'") X(STAR, "'*'") X(SLASH, "'/'") X(PERCENT, "'%'")       \
    X(AT, "'@'") X(POW, "'**'") X(ASSIGN, "'='")                                           \
    X(SLASHSLASH, "'//'") X(AMP, "'&'") X(PIPE, "'|'") X(CARET, "'^'") X(TILDE, "'~'")     \
    X(PLUS_ASSIGN, "'+='") X(MINUS_ASSIGN, "'-='") X(STAR_ASSIGN, "'*='")                 \
    X(SLASH_ASSIGN, "'/='") X(SLASHSLASH_ASSIGN, "'//='") X(PERCENT_ASSIGN, "'%='")       \
    X(POW_ASSIGN, "'**='") X(AT_ASSIGN, "'@='") X(AMP_ASSIGN, "'&='")                     \
    X(PIPE_ASSIGN, "'|='") X(CARET_ASSIGN, "'^='")                                         \
    X(EQ, "'=='") X(NE, "'!='") X(LT, "'<'") X(LE, "'<='") X(GT, "'>'") X(GE, "'>='")      \
    X(FN, "'fn'") X(RETURN, "'return'") X(IF, "'if'") X(ELSE, "'else'")                   \
    X(WHILE, "'while'") X(FOR, "'for'") X(IN, "'in'") X(BREAK, "'break'")                \
    X(CONTINUE, "'continue'") X(STATIC, "'static'") X(IMPORT, "'import'")                \
    X(AND, "'and'") X(OR, "'or'") X(NOT, "'not'") X(TRUE, "'true'") X(FALSE, "'false'")   \
    X(NIL, "'nil'") X(TRY, "'try'") X(CATCH, "'catch'")                                      \
    X(NOT_IN, "'not in'")  /* made by the parser from 'not' 'in', never by the lexer */

typedef enum {
#define X(name, text) TOK_##name,
    TOKEN_LIST(X)
#undef X
    TOK__COUNT
} TokKind;

typedef struct {
    int line, col;   /* 1-based; col counts bytes */
} SrcLoc;

typedef struct {
    TokKind kind;
    SrcLoc loc;
    const char *start;  /* into the source text */
    int len;
    double num;         /* TOK_NUMBER */
    char *str;          /* TOK_STRING: decoded text, owned by the TokenList */
    int str_len;
} Token;

typedef struct {
    Token *toks;
    int count, cap;
    /* On failure: message and location; `at_eof` marks input that simply ended early
     * (the REPL then asks for another line instead of reporting). */
    char err[256];
    SrcLoc err_loc;
    int at_eof;
} TokenList;

const char *tok_name(TokKind k);
const char *tok_symbol(TokKind k);   /* "+" for TOK_PLUS: how an operator is written */
/* Tokenize src[0..len). Returns 0 on success, -1 with tl->err set. */
int lex_source(const char *src, size_t len, TokenList *tl);
void lex_free(TokenList *tl);

#endif
