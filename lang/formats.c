/* formats.c - the built-ins that read and write the files other tools exchange: load_csv
 * (a tensor of numbers, or with header=true a dict of named columns), load_npz / save_npz
 * (NumPy's archives) and load_safetensors / save_safetensors. The ops layer reads and writes
 * the bytes (ops/csv.c, ops/npz.c, ops/safetensors.c) into tensors with names; here they
 * become dicts, in the file's order, and a dict's tensors are handed to the writers. Tensors
 * read are made on the default device, as load_npy's are; GPU tensors are written from host
 * copies. Static code runs these eagerly, as every file built-in (ST_NONE). */
#include <string.h>
#include "interp.h"
#include "mem.h"
#include "tops.h"
#include "ctx.h"
#include "builtins.h"

/* t (taken) on the default device. */
static Tensor *on_default(Tensor *t) {
    Device d = ops_ctx()->default_device;
    if (!t || d == DEV_CPU) return t;
    Tensor *moved = tensor_to(t, d);
    tensor_release(t);
    return moved;
}

/* A dict of nt's tensors (taken: nt is emptied), or ERR_VAL. */
static Value dict_of_named(Interp *I, const char *fname, const char *path, NamedTensors *nt) {
    for (int i = 0; i < nt->n; i++)
        if (utf8_bad_at(nt->names[i], strlen(nt->names[i])) >= 0) {
            interp_errork(I, ERRK_IO, "%s: '%s' has a name that is not UTF-8 text", fname, path);
            named_free(nt);
            return ERR_VAL;
        }
    ObjDict *d = dict_new();
    Value r = OBJ_VAL(VAL_DICT, d);
    for (int i = 0; i < nt->n; i++) {
        Tensor *t = on_default(nt->ts[i]);
        nt->ts[i] = NULL;
        if (!t) {
            interp_op_error(I);
            val_release(r);
            r = ERR_VAL;
            break;
        }
        Value tv = TENSOR_VAL(t);
        dict_set_cstr(d, nt->names[i], tv);
        val_release(tv);
    }
    named_free(nt);
    return r;
}

/* The tensors of a dict, as the writers take them: names borrowed from its keys, host copies
 * of its tensors (released by named_release). */
static bool named_of_dict(Interp *I, const char *fname, Value v, NamedTensors *nt) {
    memset(nt, 0, sizeof *nt);
    if (v.type != VAL_DICT) return interp_errork(I, ERRK_TYPE, "%s() needs a dict of tensors, got a %s", fname, val_type_name(v)), false;
    ObjDict *d = AS_DICT(v);
    for (int i = 0; i < d->len; i++) {
        Value x = d->entries[i].val;
        if (x.type != VAL_TENSOR)
            return interp_errork(I, ERRK_TYPE, "%s(): '%s' is a %s, not a tensor", fname, d->entries[i].key->chars, val_type_name(x)), false;
    }
    nt->cap = nt->n = 0;
    nt->names = mem_alloc(sizeof(char *) * (size_t)(d->len + 1));
    nt->ts = mem_alloc(sizeof(Tensor *) * (size_t)(d->len + 1));
    for (int i = 0; i < d->len; i++) {
        nt->names[i] = d->entries[i].key->chars;
        if (!(nt->ts[i] = tensor_host(d->entries[i].val.as.t))) return interp_op_error(I), false;
        nt->n++;
    }
    return true;
}

static void named_release(NamedTensors *nt) {
    for (int i = 0; i < nt->n; i++) tensor_release(nt->ts[i]);
    mem_free(nt->names);
    mem_free(nt->ts);
}

/* ---------- CSV ---------- */

static bool csv_options(Interp *I, Value *v, CsvOptions *o, bool *header) {
    o->delim = ',';
    o->skip_rows = 0;
    o->skip_header = v[1].type != VAL_UNDEF && val_truthy_simple(v[1]);
    *header = v[2].type != VAL_UNDEF && val_truthy_simple(v[2]);
    if (*header && o->skip_header)
        return interp_errork(I, ERRK_VALUE, "load_csv(): header=true reads the first line as the names; skip_header does not go with it"), false;
    ObjString *s;
    if (v[3].type != VAL_UNDEF) {
        if (!arg_str(I, "load_csv", "delimiter", v[3], &s)) return false;
        if (s->len != 1 || (unsigned char)s->chars[0] >= 0x80 || strchr("\"\r\n", s->chars[0]))
            return interp_errork(I, ERRK_VALUE, "load_csv(): delimiter must be one ASCII character other than a quote or a line break, got \"%s\"",
                                 s->chars), false;
        o->delim = s->chars[0];
    }
    if (v[4].type != VAL_UNDEF) {
        if (!arg_int(I, "load_csv", "skip_rows", v[4], &o->skip_rows)) return false;
        if (o->skip_rows < 0) return interp_errork(I, ERRK_VALUE, "load_csv(): skip_rows must be >= 0, got %lld", (long long)o->skip_rows), false;
    }
    return true;
}

/* A column of text: a list of its strings, or ERR_VAL when one is not UTF-8. */
static Value csv_text_column(Interp *I, const char *path, const CsvTable *t, const CsvColumn *col) {
    for (int64_t r = 0; r < t->nrows; r++) {
        size_t n = strlen(col->texts[r]);
        if (n > (size_t)INT32_MAX || utf8_bad_at(col->texts[r], n) >= 0)
            return interp_errork(I, ERRK_IO, "load_csv: '%s' column '%s' row %lld is not UTF-8 text", path, col->name, (long long)r + 1);
    }
    ObjList *l = list_new(t->nrows > INT32_MAX ? INT32_MAX : (int)t->nrows);
    for (int64_t r = 0; r < t->nrows; r++) {
        Value s = val_str(col->texts[r], (int)strlen(col->texts[r]));
        list_push(l, s);
        val_release(s);
    }
    return OBJ_VAL(VAL_LIST, l);
}

static Value csv_column(Interp *I, const char *path, const CsvTable *t, const CsvColumn *col) {
    if (col->text) return csv_text_column(I, path, t, col);
    Shape s = { 1, { t->nrows } };
    Tensor *x = tensor_new(DT_F32, &s);
    if (x) memcpy(x->data, col->nums, sizeof(float) * (size_t)t->nrows);
    if (!(x = on_default(x))) return interp_op_error(I);
    return TENSOR_VAL(x);
}

static Value csv_dict(Interp *I, const char *path, const CsvOptions *o) {
    CsvTable t;
    if (csv_table_load(path, o, &t)) return interp_op_error(I);
    Value r = ERR_VAL;
    for (int c = 0; c < t.ncols; c++)
        if (utf8_bad_at(t.cols[c].name, strlen(t.cols[c].name)) >= 0) {
            interp_errork(I, ERRK_IO, "load_csv: '%s' column %d's name is not UTF-8 text", path, c + 1);
            goto out;
        }
    ObjDict *d = dict_new();
    r = OBJ_VAL(VAL_DICT, d);
    for (int c = 0; c < t.ncols; c++) {
        Value col = csv_column(I, path, &t, &t.cols[c]);
        if (IS_ERR(col)) {
            val_release(r);
            r = ERR_VAL;
            break;
        }
        dict_set_cstr(d, t.cols[c].name, col);
        val_release(col);
    }
out:
    csv_table_free(&t);
    return r;
}

static Value bi_load_csv(Interp *I, CallArgs *a) {
    Value v[5];
    const char *path;
    CsvOptions o;
    bool header;
    if (!builtin_bind(I, a, bi_load_csv, v) || !builtin_path(I, "load_csv", v[0], &path) || !csv_options(I, v, &o, &header))
        return ERR_VAL;
    if (header) return csv_dict(I, path, &o);
    Tensor *t = on_default(csv_load(path, &o));
    return t ? TENSOR_VAL(t) : interp_op_error(I);
}

/* ---------- .npz and safetensors ---------- */

static Value bi_load_npz(Interp *I, CallArgs *a) {
    Value v[1];
    const char *path;
    NamedTensors nt;
    if (!builtin_bind(I, a, bi_load_npz, v) || !builtin_path(I, "load_npz", v[0], &path)) return ERR_VAL;
    if (npz_load(path, &nt)) return interp_op_error(I);
    return dict_of_named(I, "load_npz", path, &nt);
}

static Value bi_save_npz(Interp *I, CallArgs *a) {
    Value v[3];
    const char *path;
    NamedTensors nt;
    if (!builtin_bind(I, a, bi_save_npz, v) || !builtin_path(I, "save_npz", v[0], &path)) return ERR_VAL;
    bool compressed = v[2].type != VAL_UNDEF && val_truthy_simple(v[2]);
    bool ok = named_of_dict(I, "save_npz", v[1], &nt) && (npz_save(path, &nt, compressed) == 0 || (interp_op_error(I), false));
    named_release(&nt);
    return ok ? NIL_VAL : ERR_VAL;
}

static Value bi_load_safetensors(Interp *I, CallArgs *a) {
    Value v[1];
    const char *path;
    NamedTensors nt;
    if (!builtin_bind(I, a, bi_load_safetensors, v) || !builtin_path(I, "load_safetensors", v[0], &path)) return ERR_VAL;
    if (safetensors_load(path, &nt)) return interp_op_error(I);
    return dict_of_named(I, "load_safetensors", path, &nt);
}

static Value bi_save_safetensors(Interp *I, CallArgs *a) {
    Value v[2];
    const char *path;
    NamedTensors nt;
    if (!builtin_bind(I, a, bi_save_safetensors, v) || !builtin_path(I, "save_safetensors", v[0], &path)) return ERR_VAL;
    bool ok = named_of_dict(I, "save_safetensors", v[1], &nt) && (safetensors_save(path, &nt) == 0 || (interp_op_error(I), false));
    named_release(&nt);
    return ok ? NIL_VAL : ERR_VAL;
}

const BuiltinDef format_builtins[] = {
    { "load_csv", bi_load_csv, "(path, skip_header=false, header=false, delimiter=\",\", skip_rows=0)",
      "a 2-D f32 tensor from a CSV file of numbers (NaN where empty); header=true: a dict of its named columns (f32 tensors, NaN where empty, or lists of strings)",
      ST_NONE },
    { "load_npz", bi_load_npz, "(path)", "a dict of the tensors in a NumPy .npz archive, in its order", ST_NONE },
    { "save_npz", bi_save_npz, "(path, arrays, compressed=false)", "writes a dict of tensors as a NumPy .npz archive (deflated when compressed)",
      ST_WRITE },
    { "load_safetensors", bi_load_safetensors, "(path)", "a dict of the tensors in a safetensors file, in its header's order", ST_NONE },
    { "save_safetensors", bi_save_safetensors, "(path, tensors)", "writes a dict of tensors as a safetensors file", ST_WRITE },
    { NULL, NULL, NULL, NULL, ST_NONE },
};
