/* module.c - module globals, sources and `import` (spec section 8).
 *
 * `import name` searches the importing module's folder, each folder of TSL_PATH, then
 * the stdlib (<folder of bin/tsl>/../stdlib or TSL_STDLIB). A module runs once; later
 * imports share its exports dict; importing a module that is still loading is a cycle. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "interp.h"
#include "mem.h"
#include "parse.h"
#include "builtins.h"
#include "tops.h"

static uint32_t name_hash(const char *s) {
    uint32_t h = 2166136261u;
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 16777619u;
    return h;
}

/* Every array is replaced only once its allocation succeeded: out of memory leaves g valid. */
static void globals_reindex(Globals *g, int cap) {
    int32_t *index = mem_alloc(sizeof(int32_t) * (size_t)cap);
    mem_free(g->index);
    g->index = index;
    g->index_cap = cap;
    for (int i = 0; i < cap; i++) g->index[i] = -1;
    for (int k = 0; k < g->count; k++) {
        uint32_t i = name_hash(g->names[k]) & (uint32_t)(cap - 1);
        while (g->index[i] >= 0) i = (i + 1) & (uint32_t)(cap - 1);
        g->index[i] = k;
    }
}

int globals_find(const Globals *g, const char *name) {
    if (!g->index_cap) return -1;
    uint32_t mask = (uint32_t)g->index_cap - 1;
    for (uint32_t i = name_hash(name) & mask; g->index[i] >= 0; i = (i + 1) & mask)
        if (!strcmp(g->names[g->index[i]], name)) return g->index[i];
    return -1;
}

int globals_slot(Globals *g, const char *name) {
    int k = globals_find(g, name);
    if (k >= 0) return k;
    if (g->count == g->cap) {
        int cap = g->cap ? g->cap * 2 : 256;
        g->names = mem_realloc(g->names, sizeof(char *) * (size_t)cap);
        g->vals = mem_realloc(g->vals, sizeof(Value) * (size_t)cap);
        g->cap = cap;
    }
    g->names[g->count] = mem_strndup(name, strlen(name));
    g->vals[g->count] = UNDEF_VAL;
    g->count++;
    if (g->count * 2 > g->index_cap) globals_reindex(g, g->index_cap ? g->index_cap * 2 : 512);
    else {
        uint32_t mask = (uint32_t)g->index_cap - 1, i = name_hash(name) & mask;
        while (g->index[i] >= 0) i = (i + 1) & mask;
        g->index[i] = g->count - 1;
    }
    return g->count - 1;
}

void globals_free(Globals *g) {
    for (int i = 0; i < g->count; i++) {
        mem_free(g->names[i]);
        val_release(g->vals[i]);
    }
    mem_free(g->names);
    mem_free(g->vals);
    mem_free(g->index);
    memset(g, 0, sizeof *g);
}

Source *source_new(Interp *I, const char *name, const char *dir, char *text, size_t len) {
    Source *s = mem_calloc(1, sizeof *s);
    s->name = mem_strndup(name, strlen(name));
    s->dir = mem_strndup(dir, strlen(dir));
    s->text = text;
    s->len = len;
    s->next = I->sources;
    I->sources = s;
    return s;
}

Module *module_new(Interp *I, const char *name, Source *src) {
    Module *m = mem_calloc(1, sizeof *m);
    m->name = mem_strndup(name, strlen(name));
    m->src = src;
    m->exports = NIL_VAL;
    m->next = I->modules;
    I->modules = m;
    builtins_install(I, m);
    return m;
}

/* Reads a whole source file, NUL-terminated, without a leading UTF-8 byte-order mark.
 * NULL if it is not a regular file of at most TSL_MAX_SOURCE_BYTES or cannot be read; the
 * reason is then in op_error(). Out of memory is the ordinary error (mem_throw_oom). */
char *read_file(const char *path, size_t *len) {
    FILE *fp = io_open_regular(path, NULL, TSL_MAX_SOURCE_BYTES);
    if (!fp) return NULL;
    size_t n;
    bool oom;
    char *buf = io_read_all(fp, path, NULL, TSL_MAX_SOURCE_BYTES, &n, &oom);
    fclose(fp);
    if (oom) mem_throw_oom();   /* like any small allocation, now that the file is closed */
    if (!buf) return NULL;
    if (n >= 3 && !memcmp(buf, "\xEF\xBB\xBF", 3)) {
        memmove(buf, buf + 3, n - 3);
        n -= 3;
    }
    buf[n] = 0;
    *len = n;
    return buf;
}

static char *find_module(const char *dir, const char *name) {
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/%s.tsl", dir, name);
    return access(path, R_OK) == 0 ? mem_strndup(path, strlen(path)) : NULL;
}

static char *search_module(Interp *I, Module *from, const char *name) {
    char *p = find_module(from->src ? from->src->dir : ".", name);
    const char *tp = getenv("TSL_PATH");
    if (!p && tp) {
        char *copy = mem_strndup(tp, strlen(tp)), *save = NULL;
        for (char *d = strtok_r(copy, ":", &save); d && !p; d = strtok_r(NULL, ":", &save)) p = find_module(d, name);
        mem_free(copy);
    }
    const char *std = getenv("TSL_STDLIB");
    if (!p) p = find_module(std ? std : I->stdlib_dir[0] ? I->stdlib_dir : "stdlib", name);
    return p;
}

static char *dir_of(const char *path) {
    const char *slash = strrchr(path, '/');
    return slash ? mem_strndup(path, (size_t)(slash - path)) : mem_strndup(".", 1);
}

/* The exports of a finished module: every global it bound that is not a built-in. */
static Value module_exports(Module *m) {
    ObjDict *d = dict_new();
    for (int i = 0; i < m->g.count; i++) {
        Value v = m->g.vals[i];
        /* names starting with _ are private to the module */
        if (v.type == VAL_UNDEF || builtin_is(v, m->g.names[i]) || builtin_constant_is(v, m->g.names[i]) ||
            m->g.names[i][0] == '_')
            continue;
        dict_set_cstr(d, m->g.names[i], v);
    }
    return OBJ_VAL(VAL_DICT, d);
}

Node *interp_parse(Interp *I, Source *src, bool *incomplete);

/* The error for importing m while it is still loading: the chain of imports from m to the
 * module now loading (the newest of I->modules), back to m. */
static Value cyclic_import(Interp *I, Module *m) {
    const char *chain[64];
    int n = 0;
    for (Module *x = I->modules; x && x != m && n < 64; x = x->next)
        if (x->state == MOD_LOADING && x != I->main) chain[n++] = x->name;
    StrBuf b = { 0 };
    sb_puts(&b, m->name);
    if (n == 64) sb_puts(&b, " -> ...");
    for (int i = n - 1; i >= 0; i--) sb_printf(&b, " -> %s", chain[i]);
    sb_printf(&b, " -> %s", m->name);
    interp_error(I, "cyclic import of module '%s' (%s)", m->name, b.s);
    sb_free(&b);
    return ERR_VAL;
}

static Module *loaded_module(Interp *I, const char *name) {
    for (Module *m = I->modules; m; m = m->next)
        if (m != I->main && !strcmp(m->name, name)) return m;
    return NULL;
}

/* Out of import's sight: a name no import can spell ("-name"). */
static void hide_module(Module *m) {
    size_t n = strlen(m->name);
    char *hidden = mem_alloc(n + 2);
    hidden[0] = '-';
    memcpy(hidden + 1, m->name, n + 1);
    mem_free(m->name);
    m->name = hidden;
}

/* The REPL's :reload NAME: the module loaded afresh from its file. Its exports dict stays
 * the same object, its members replaced, so every `import` of it sees the new code; the
 * functions the old one made keep their own globals. A reload that fails leaves the old one. */
static Value module_reload(Interp *I, Module *from, const char *name) {
    Module *old = loaded_module(I, name);
    if (old && old->state == MOD_LOADING) return cyclic_import(I, old);
    if (old) hide_module(old);
    Value e = module_import(I, from, name);
    if (IS_ERR(e)) {
        Module *failed = loaded_module(I, name);
        if (failed) hide_module(failed);
        if (old) memmove(old->name, old->name + 1, strlen(old->name));   /* its own name back */
        return e;
    }
    if (!old || old->exports.type != VAL_DICT) return e;
    ObjDict *keep = AS_DICT(old->exports), *fresh = AS_DICT(e);
    dict_truncate(keep, 0);
    for (int i = 0; i < fresh->len; i++) dict_set(keep, fresh->entries[i].key, fresh->entries[i].val);
    Module *m = loaded_module(I, name);
    val_release(m->exports);   /* e's reference, then the module's */
    val_release(e);
    m->exports = val_retain(old->exports);
    return val_retain(old->exports);
}

Value module_import(Interp *I, Module *from, const char *name) {
    if (I->reload_module && !strcmp(I->reload_module, name)) {
        I->reload_module = NULL;
        return module_reload(I, from, name);
    }
    for (Module *m = I->modules; m; m = m->next) {
        if (m == I->main || strcmp(m->name, name)) continue;
        if (m->state == MOD_LOADING) return cyclic_import(I, m);
        return val_retain(m->exports);
    }
    char *path = search_module(I, from, name);
    if (!path) return interp_errork(I, ERRK_IO, "module '%s' not found", name);
    size_t len;
    char *text = read_file(path, &len);
    if (!text) {
        Value e = interp_errork(I, ERRK_IO, "cannot read module '%s': %s", name, op_error());
        mem_free(path);
        return e;
    }
    char *dir = dir_of(path);
    Source *src = source_new(I, path, dir, text, len);
    mem_free(dir);
    mem_free(path);
    Module *m = module_new(I, name, src);
    m->state = MOD_LOADING;
    Node *prog = interp_parse(I, src, NULL);
    if (!prog || resolve_program(I, m, prog) < 0) {
        m->state = MOD_READY;
        m->exports = OBJ_VAL(VAL_DICT, dict_new());
        return ERR_VAL;
    }
    Exec st = interp_exec_module(I, m, prog);
    if (st == EX_ERR) {
        m->state = MOD_READY;
        m->exports = OBJ_VAL(VAL_DICT, dict_new());
        return ERR_VAL;
    }
    m->exports = module_exports(m);
    m->state = MOD_READY;
    return val_retain(m->exports);
}
