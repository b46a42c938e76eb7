/* files.c - the file and process built-ins of spec section 5 (v2): read_text write_text
 * save_csv exit. Files are opened as load_csv opens them (ops/io.c: regular files only,
 * a FIFO never blocks); text is UTF-8. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "interp.h"
#include "mem.h"
#include "tops.h"
#include "builtins.h"

bool builtin_path(Interp *I, const char *fname, Value v, const char **out) {
    if (I->sandbox) return interp_errork(I, ERRK_IO, "%s() is disabled in this sandbox", fname), false;
    if (v.type != VAL_STR) return interp_errork(I, ERRK_TYPE, "%s(): path must be a string, got a %s", fname, val_type_name(v)), false;
    *out = AS_STR(v)->chars;
    return true;
}

/* Length of the valid UTF-8 sequence at s (n bytes left), 0 when invalid (overlong forms,
 * surrogates and code points past U+10FFFF included). */
static int utf8_valid_at(const unsigned char *s, size_t n) {
    unsigned c = s[0];
    if (c < 0x80) return 1;
    int len = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC2 ? 2 : 0;
    if (!len || c > 0xF4 || (size_t)len > n) return 0;
    for (int i = 1; i < len; i++)
        if ((s[i] & 0xC0) != 0x80) return 0;
    if (len == 3 && ((c == 0xE0 && s[1] < 0xA0) || (c == 0xED && s[1] >= 0xA0))) return 0;
    if (len == 4 && ((c == 0xF0 && s[1] < 0x90) || (c == 0xF4 && s[1] >= 0x90))) return 0;
    return len;
}

int64_t utf8_bad_at(const char *s, size_t n) {
    size_t i = 0;
    int len;
    while (i < n && s[i] && (len = utf8_valid_at((const unsigned char *)s + i, n - i))) i += (size_t)len;
    return i < n ? (int64_t)i : -1;
}

static Value bi_read_text(Interp *I, CallArgs *a) {
    Value v[1];
    const char *path;
    if (!builtin_bind(I, a, bi_read_text, v) || !builtin_path(I, "read_text", v[0], &path)) return ERR_VAL;
    FILE *fp = io_open_regular(path, "read_text", (int64_t)TSL_MAX_TEXT);
    if (!fp) return interp_op_error(I);
    size_t n;
    char *text = io_read_all(fp, path, "read_text", TSL_MAX_TEXT, &n, NULL);
    fclose(fp);
    if (!text) return interp_op_error(I);
    int64_t i = utf8_bad_at(text, n);
    Value r = ERR_VAL;
    if (i >= 0)
        interp_errork(I, ERRK_IO, "read_text: '%s' is not UTF-8 text (%s at byte %lld)", path, text[i] ? "invalid UTF-8" : "a NUL byte",
                      (long long)i);
    else r = val_str(text, (int)n);
    mem_free(text);
    return r;
}

static Value bi_write_text(Interp *I, CallArgs *a) {
    Value v[2];
    const char *path;
    ObjString *s;
    if (!builtin_bind(I, a, bi_write_text, v) || !builtin_path(I, "write_text", v[0], &path) ||
        !arg_str(I, "write_text", "s", v[1], &s))
        return ERR_VAL;
    if (io_write_file(path, "write_text", s->chars, (size_t)s->len) != 0) return interp_op_error(I);
    return NIL_VAL;
}

/* header: nil, a string (the first line as it is) or a list of strings (joined by commas). */
static bool csv_header(Interp *I, Value h, StrBuf *out) {
    if (h.type == VAL_UNDEF || h.type == VAL_NIL) return true;
    sb_putn(out, "", 0);
    if (h.type == VAL_STR) sb_putn(out, AS_STR(h)->chars, (size_t)AS_STR(h)->len);
    else if (h.type == VAL_LIST) {
        ObjList *l = AS_LIST(h);
        for (int i = 0; i < l->len; i++) {
            if (l->items[i].type != VAL_STR)
                return interp_errork(I, ERRK_TYPE, "save_csv(): header item %d is a %s, not a string", i, val_type_name(l->items[i])), false;
            if (i) sb_putn(out, ",", 1);
            sb_putn(out, AS_STR(l->items[i])->chars, (size_t)AS_STR(l->items[i])->len);
        }
    } else return interp_errork(I, ERRK_TYPE, "save_csv(): header must be a string or a list of strings, got a %s", val_type_name(h)), false;
    if (strpbrk(out->s, "\n\r") || strlen(out->s) != out->len)
        return interp_error(I, "save_csv(): the header must be one line"), false;
    return true;
}

static Value bi_save_csv(Interp *I, CallArgs *a) {
    Value v[3];
    const char *path;
    if (!builtin_bind(I, a, bi_save_csv, v) || !builtin_path(I, "save_csv", v[0], &path)) return ERR_VAL;
    if (v[1].type != VAL_TENSOR) return interp_errork(I, ERRK_TYPE, "save_csv() needs a tensor, got a %s", val_type_name(v[1]));
    StrBuf h = { 0 };
    Tensor *t = tensor_host(v[1].as.t);   /* a GPU tensor is written from a host copy */
    bool ok = t && csv_header(I, v[2], &h) && (csv_save(path, t, h.s) == 0 || (interp_op_error(I), false));
    if (!t) interp_op_error(I);
    tensor_release(t);
    sb_free(&h);
    return ok ? NIL_VAL : ERR_VAL;
}

/* exit(code): ends the program with that status (spec section 1). It unwinds as an error that
 * nothing prints (I->exiting), so every frame releases what it holds on the way out. */
static Value bi_exit(Interp *I, CallArgs *a) {
    Value v[1];
    double code = 0;
    if (!builtin_bind(I, a, bi_exit, v)) return ERR_VAL;
    if (v[0].type != VAL_UNDEF && !arg_number(I, "exit", "code", v[0], &code)) return ERR_VAL;
    if (!(code >= 0 && code <= 255 && code == floor(code)))
        return interp_errork(I, ERRK_VALUE, "exit(): code must be an integer from 0 to 255, got %g", code);
    if (!I->write_out) fflush(stdout);   /* the default output: what print wrote shows first */
    interp_error(I, "exit(%d)", (int)code);
    I->exiting = true;
    I->exit_code = (int)code;
    return ERR_VAL;
}

const BuiltinDef file_builtins[] = {
    { "read_text", bi_read_text, "(path)", "the contents of a UTF-8 text file as a string", ST_NONE },
    { "write_text", bi_write_text, "(path, s)", "writes the string to the file (created or replaced)", ST_NONE },
    { "save_csv", bi_save_csv, "(path, t, header=nil)", "writes a 1-D or 2-D tensor as CSV that load_csv reads back", ST_WRITE },
    { "exit", bi_exit, "(code=0)", "ends the program with exit status code (0..255)", ST_NONE },
    { NULL, NULL, NULL, NULL, ST_NONE },
};
