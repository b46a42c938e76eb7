/* lex.re - the TSL lexer, compiled to C by re2c at build time.
 *
 * The re2c block holds only patterns and one-line actions; everything else (number
 * and string decoding, bracket tracking, error text) is plain C. Newlines become
 * TOK_NEWLINE except inside ( ) or [ ], where the statement cannot end. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "token.h"
#include "mem.h"

const char *tok_name(TokKind k) {
    static const char *names[] = {
#define X(name, text) text,
        TOKEN_LIST(X)
#undef X
    };
    return k < TOK__COUNT ? names[k] : "?";
}

/* An operator's text as written ("+" for TOK_PLUS): its spelling without the quotes. */
static char symbol_text[TOK__COUNT][8];   /* filled once per process, read-only afterwards */
static void symbols_build(void) {
    for (int k = 0; k < TOK__COUNT; k++) {
        const char *s = tok_name((TokKind)k);
        size_t n = strlen(s);
        if (n >= 3 && s[0] == '\'' && n - 2 < sizeof symbol_text[k]) memcpy(symbol_text[k], s + 1, n - 2);
        else snprintf(symbol_text[k], sizeof symbol_text[k], "?");
    }
}

const char *tok_symbol(TokKind k) {
    if (k >= TOK__COUNT) return "?";
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, symbols_build);
    return symbol_text[k];
}

typedef struct {
    const unsigned char *base, *line_start;
    int line;
    char *brackets;        /* open ( [ { ; newlines inside ( [ are not statement ends */
    int depth, cap;
} LexState;

static int lex_fail(TokenList *tl, LexState *s, const unsigned char *at, const char *msg) {
    snprintf(tl->err, sizeof tl->err, "%s", msg);
    tl->err_loc.line = s->line;
    tl->err_loc.col = (int)(at - s->line_start) + 1;
    return -1;
}

static Token *push_token(TokenList *tl, TokKind k, LexState *s, const unsigned char *start,
                         const unsigned char *end) {
    if (tl->count == tl->cap) {
        tl->cap = tl->cap ? tl->cap * 2 : 256;
        tl->toks = mem_realloc(tl->toks, sizeof(Token) * (size_t)tl->cap);
    }
    Token *t = &tl->toks[tl->count++];
    memset(t, 0, sizeof *t);
    t->kind = k;
    t->start = (const char *)start;
    t->len = (int)(end - start);
    t->loc.line = s->line;
    t->loc.col = (int)(start - s->line_start) + 1;
    return t;
}

/* Numbers: 12 1.5 .5 1e-3 0x1F 1_000 (underscores are dropped before conversion). Every form,
 * hex included, goes through strtod, which rounds the exact value of all its digits to the
 * nearest f64 (inf past the largest): no integer type in between to wrap or saturate at 2^64,
 * and no fixed buffer to cut a long literal short. */
static double decode_number(const unsigned char *p, const unsigned char *end) {
    char small[128];
    size_t len = (size_t)(end - p);
    char *buf = len < sizeof small ? small : mem_alloc(len + 1);
    size_t n = 0;
    for (; p < end; p++)
        if (*p != '_') buf[n++] = (char)*p;
    buf[n] = 0;
    double x = strtod(buf, NULL);
    if (buf != small) mem_free(buf);
    return x;
}

static int hexval(int c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

static int put_utf8(char *out, unsigned cp) {
    if (cp < 0x80) { out[0] = (char)cp; return 1; }
    if (cp < 0x800) { out[0] = (char)(0xC0 | cp >> 6); out[1] = (char)(0x80 | (cp & 63)); return 2; }
    if (cp < 0x10000) {
        out[0] = (char)(0xE0 | cp >> 12); out[1] = (char)(0x80 | ((cp >> 6) & 63));
        out[2] = (char)(0x80 | (cp & 63)); return 3;
    }
    out[0] = (char)(0xF0 | cp >> 18); out[1] = (char)(0x80 | ((cp >> 12) & 63));
    out[2] = (char)(0x80 | ((cp >> 6) & 63)); out[3] = (char)(0x80 | (cp & 63)); return 4;
}

/* Decode the body of a quoted string (between the quotes) into t->str. */
static int decode_string(TokenList *tl, LexState *s, Token *t, const unsigned char *p,
                         const unsigned char *end) {
    char *out = mem_alloc((size_t)(end - p) + 1);
    int n = 0;
    while (p < end) {
        if (*p != '\\') { out[n++] = (char)*p++; continue; }
        const unsigned char *esc = p++;
        switch (*p++) {
        case 'n': out[n++] = '\n'; break;
        case 't': out[n++] = '\t'; break;
        case 'r': out[n++] = '\r'; break;
        case '0': out[n++] = '\0'; break;
        case '\\': out[n++] = '\\'; break;
        case '"': out[n++] = '"'; break;
        case '\'': out[n++] = '\''; break;
        case 'u': {
            unsigned cp = 0;
            int digits = 0;
            if (*p != '{') goto bad;
            for (p++; p < end && *p != '}'; p++, digits++) {
                int h = hexval(*p);
                if (h < 0 || digits >= 6) goto bad;
                cp = cp * 16 + (unsigned)h;
            }
            if (p >= end || digits == 0 || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) goto bad;
            p++;
            n += put_utf8(out + n, cp);
            break;
        }
        default:
        bad:
            mem_free(out);
            return lex_fail(tl, s, esc, "invalid escape sequence in string");
        }
    }
    out[n] = 0;
    t->str = out;
    t->str_len = n;
    return 0;
}

/* Returns the byte offset of the first invalid UTF-8 sequence, or -1 if valid. */
static long utf8_invalid_at(const unsigned char *p, size_t len) {
    size_t i = 0;
    while (i < len) {
        unsigned c = p[i];
        int extra;
        unsigned min;
        if (c < 0x80) { i++; continue; }
        else if ((c & 0xE0) == 0xC0) { extra = 1; min = 0x80; c &= 0x1F; }
        else if ((c & 0xF0) == 0xE0) { extra = 2; min = 0x800; c &= 0x0F; }
        else if ((c & 0xF8) == 0xF0) { extra = 3; min = 0x10000; c &= 0x07; }
        else return (long)i;
        for (int k = 1; k <= extra; k++) {
            if (i + (size_t)k >= len || (p[i + k] & 0xC0) != 0x80) return (long)i;
            c = (c << 6) | (p[i + k] & 0x3F);
        }
        if (c < min || c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF)) return (long)i;
        i += (size_t)extra + 1;
    }
    return -1;
}

static void note_newlines(LexState *s, const unsigned char *p, const unsigned char *end) {
    for (; p < end; p++)
        if (*p == '\n') { s->line++; s->line_start = p + 1; }
}

static int lex_scan(LexState *s, size_t len, TokenList *tl) {
    const unsigned char *YYCURSOR = s->base, *YYLIMIT = s->base + len, *YYMARKER = NULL;
    long bad = utf8_invalid_at(s->base, len);
    const unsigned char *nul = memchr(s->base, 0, len);
    if (nul && (bad < 0 || nul - s->base < bad)) {
        /* reported where it is, even inside a string or a comment */
        note_newlines(s, s->base, nul);
        return lex_fail(tl, s, nul, "NUL byte in source");
    }
    if (bad >= 0) {
        note_newlines(s, s->base, s->base + bad);
        return lex_fail(tl, s, s->base + bad, "invalid UTF-8 in source");
    }
    for (;;) {
        const unsigned char *tok = YYCURSOR;
        TokKind k;
        /*!re2c
        re2c:define:YYCTYPE = "unsigned char";
        re2c:yyfill:enable = 0;
        re2c:eof = 0;

        dec    = [0-9] ("_"? [0-9])*;
        exp    = [eE] [+-]? dec;
        number = dec ("." dec?)? exp? | "." dec exp? | "0" [xX] [0-9a-fA-F] ("_"? [0-9a-fA-F])*;
        ident  = [A-Za-z_] [A-Za-z0-9_]*;
        dq     = "\"" ([^"\\\n\x00] | "\\" [^\n\x00])* "\"";
        sq     = "'" ([^'\\\n\x00] | "\\" [^\n\x00])* "'";
        dq_open = "\"" ([^"\\\n\x00] | "\\" [^\n\x00])* "\\"?;
        sq_open = "'" ([^'\\\n\x00] | "\\" [^\n\x00])* "\\"?;

        $               { push_token(tl, TOK_EOF, s, tok, tok); return 0; }
        [ \t\r]+        { continue; }
        "#" [^\n\x00]*  { continue; }
        "\n"            { k = TOK_NEWLINE; goto newline; }
        number          { Token *t = push_token(tl, TOK_NUMBER, s, tok, YYCURSOR);
                          t->num = decode_number(tok, YYCURSOR); continue; }
        number ident    { return lex_fail(tl, s, tok, "malformed number"); }
        dq | sq         { Token *t = push_token(tl, TOK_STRING, s, tok, YYCURSOR);
                          if (decode_string(tl, s, t, tok + 1, YYCURSOR - 1)) return -1;
                          continue; }
        dq_open | sq_open { return lex_fail(tl, s, tok, "unterminated string"); }
        "fn"       { k = TOK_FN; goto emit; }
        "return"   { k = TOK_RETURN; goto emit; }
        "if"       { k = TOK_IF; goto emit; }
        "else"     { k = TOK_ELSE; goto emit; }
        "while"    { k = TOK_WHILE; goto emit; }
        "for"      { k = TOK_FOR; goto emit; }
        "in"       { k = TOK_IN; goto emit; }
        "break"    { k = TOK_BREAK; goto emit; }
        "continue" { k = TOK_CONTINUE; goto emit; }
        "static"   { k = TOK_STATIC; goto emit; }
        "import"   { k = TOK_IMPORT; goto emit; }
        "and"      { k = TOK_AND; goto emit; }
        "or"       { k = TOK_OR; goto emit; }
        "not"      { k = TOK_NOT; goto emit; }
        "true"     { k = TOK_TRUE; goto emit; }
        "false"    { k = TOK_FALSE; goto emit; }
        "nil"      { k = TOK_NIL; goto emit; }
        "try"      { k = TOK_TRY; goto emit; }
        "catch"    { k = TOK_CATCH; goto emit; }
        ident      { k = TOK_IDENT; goto emit; }
        "("  { k = TOK_LPAREN; goto open; }
        "["  { k = TOK_LBRACKET; goto open; }
        "{"  { k = TOK_LBRACE; goto open; }
        ")"  { k = TOK_RPAREN; goto close; }
        "]"  { k = TOK_RBRACKET; goto close; }
        "}"  { k = TOK_RBRACE; goto close; }
        "..." { k = TOK_ELLIPSIS; goto emit; }
        ","  { k = TOK_COMMA; goto emit; }
        "."  { k = TOK_DOT; goto emit; }
        ":"  { k = TOK_COLON; goto emit; }
        ";"  { k = TOK_SEMI; goto emit; }
        "+=" { k = TOK_PLUS_ASSIGN; goto emit; }
        "-=" { k = TOK_MINUS_ASSIGN; goto emit; }
        "*=" { k = TOK_STAR_ASSIGN; goto emit; }
        "/=" { k = TOK_SLASH_ASSIGN; goto emit; }
        "//=" { k = TOK_SLASHSLASH_ASSIGN; goto emit; }
        "%=" { k = TOK_PERCENT_ASSIGN; goto emit; }
        "**=" { k = TOK_POW_ASSIGN; goto emit; }
        "@=" { k = TOK_AT_ASSIGN; goto emit; }
        "&=" { k = TOK_AMP_ASSIGN; goto emit; }
        "|=" { k = TOK_PIPE_ASSIGN; goto emit; }
        "^=" { k = TOK_CARET_ASSIGN; goto emit; }
        "//" { k = TOK_SLASHSLASH; goto emit; }
        "&"  { k = TOK_AMP; goto emit; }
        "|"  { k = TOK_PIPE; goto emit; }
        "^"  { k = TOK_CARET; goto emit; }
        "~"  { k = TOK_TILDE; goto emit; }
        "+"  { k = TOK_PLUS; goto emit; }
        "-"  { k = TOK_MINUS; goto emit; }
        "**" { k = TOK_POW; goto emit; }
        "*"  { k = TOK_STAR; goto emit; }
        "/"  { k = TOK_SLASH; goto emit; }
        "%"  { k = TOK_PERCENT; goto emit; }
        "@"  { k = TOK_AT; goto emit; }
        "==" { k = TOK_EQ; goto emit; }
        "!=" { k = TOK_NE; goto emit; }
        "<=" { k = TOK_LE; goto emit; }
        ">=" { k = TOK_GE; goto emit; }
        "<"  { k = TOK_LT; goto emit; }
        ">"  { k = TOK_GT; goto emit; }
        "="  { k = TOK_ASSIGN; goto emit; }
        "\x00" { return lex_fail(tl, s, tok, "NUL byte in source"); }
        *      { return lex_fail(tl, s, tok, "unexpected character"); }
        */
    open:
        if (s->depth == s->cap) {
            s->cap = s->cap ? s->cap * 2 : 64;
            s->brackets = mem_realloc(s->brackets, (size_t)s->cap);
        }
        s->brackets[s->depth++] = (char)k;
        push_token(tl, k, s, tok, YYCURSOR);
        continue;
    close:
        if (s->depth > 0) s->depth--;
        push_token(tl, k, s, tok, YYCURSOR);
        continue;
    newline:
        if (s->depth == 0 || s->brackets[s->depth - 1] == TOK_LBRACE)
            push_token(tl, k, s, tok, YYCURSOR);
        s->line++;
        s->line_start = YYCURSOR;
        continue;
    emit:
        push_token(tl, k, s, tok, YYCURSOR);
    }
}

/* src must be followed by a NUL byte (the sentinel) at src[len]. */
int lex_source(const char *src, size_t len, TokenList *tl) {
    memset(tl, 0, sizeof *tl);
    LexState s = { (const unsigned char *)src, (const unsigned char *)src, 1, NULL, 0, 0 };
    int rc = lex_scan(&s, len, tl);
    mem_free(s.brackets);
    return rc;
}

void lex_free(TokenList *tl) {
    for (int i = 0; i < tl->count; i++) mem_free(tl->toks[i].str);
    mem_free(tl->toks);
    tl->toks = NULL;
    tl->count = tl->cap = 0;
}
