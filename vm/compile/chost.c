/* chost.c - host values in static code: strings made at run time (str(), format(), `+`,
 * comparisons, len()), and pushes and new keys onto the program's own lists and dicts.
 *
 * Each is one host instruction (HCALL, HBIN, HINDEX, DSET) whose run calls eager's own
 * function on the operands' values (vm/run/vm.c, vm_host): the same text, the same messages.
 * A string made at run time is an AV_STR, its value in a host value register (R_VAL); a list
 * made in the block that grows in a run-time loop or branch is made at run time too (HLIST)
 * and becomes a container index, as the program's own lists are.
 *
 * A list or dict from outside the block that the code adds to at run time keeps the guard of
 * what it held when compiling, relaxed to "at least these" when the code never read its
 * length or the absence of a key (AStruct.grown, len_read): so the next run of the block,
 * which sees the longer list, does not recompile. Past the add, the code cannot read its
 * length or keys when compiling (that runs eagerly). */
#include "comp.h"

AVal cc_unknown_items(Comp *c) {
    return cc_unsupported(c, "reading a dict after static code stored into it with a key made at run time");
}

int cc_struct_n(Comp *c, AStruct *st) {
    st->len_read = true;
    if (st->grown) cc_unsupported(c, "reading the length or keys of a list or dict that static code added to at run time");
    return st->n;
}

void cc_struct_grows(Comp *c, AStruct *st) {
    st->grown = true;
    for (int i = 0; i < c->g->nguards; i++)
        if (c->g->guards[i].obj == st->obj && (c->g->guards[i].kind == G_LIST || c->g->guards[i].kind == G_DICT))
            c->g->guards[i].at_least = !st->len_read;
}

/* A constant list index i, a negative one counted from the end: false when compiling failed.
 * An index outside the items known when compiling reads the list's length (cc_struct_n): the
 * guard then keeps the length exact, and after a run-time add it is not known (eager). A list
 * the code only appended to at run time may hold that item (L[7] after two pushes). */
bool cc_list_index(Comp *c, AStruct *st, int64_t *i) {
    if (*i < 0 || *i >= st->n) {
        int n = cc_struct_n(c, st);
        if (*i < 0) *i += n;
    }
    return !c->failed;
}

/* A value a host instruction can take as an operand (built at run time by vm_operand). */
static bool host_operand(const AVal *v) {
    switch (v->kind) {
    case AV_CONST: case AV_NUM: case AV_STR: case AV_TENSOR: case AV_LIST: case AV_DICT: return true;
    default: return false;
    }
}

/* An instruction whose operands are vals (n of them; first, when set, goes before them),
 * built the way print's are: before the instruction, as making one may emit. */
static Ins *emit_with_operands(Comp *c, InsOp op, const Value *first, AVal *vals, int n) {
    int k = 0;
    Opnd *ops = mem_calloc((size_t)n + 2, sizeof(Opnd));
    if (first) ops[k++] = (Opnd){ .kind = OPND_CONST, .k = val_retain(*first) };
    for (int i = 0; i < n; i++) ops[k++] = cc_opnd_of(c, vals[i]);
    Ins *in = cc_emit(c, op);
    in->opnds = ops;
    in->nopnds = k;
    return in;
}

/* The result register of a host instruction: a string, a number (bool), or none. */
typedef enum { HOST_STR, HOST_NUM, HOST_BOOL, HOST_NONE } HostResult;

static AVal host_result(Comp *c, Ins *in, HostResult kind) {
    if (kind == HOST_NONE) return cc_const_av(NIL_VAL);
    int at = (int)(in - c->g->code);
    AVal r = { .kind = kind == HOST_STR ? AV_STR : AV_NUM, .is_bool = kind == HOST_BOOL };
    r.reg = kind == HOST_STR ? cc_new_val(c) : cc_new_num(c, kind == HOST_BOOL);
    c->g->code[at].dst = r.reg;
    return r;
}

static bool is_str(const AVal *v) { return v->kind == AV_STR || (v->kind == AV_CONST && v->k.type == VAL_STR); }

bool cc_host_binary(Comp *c, int op, AVal a, AVal b, AVal *out) {
    if (a.kind != AV_STR && b.kind != AV_STR) return false;
    bool cmp = op == TOK_EQ || op == TOK_NE || op == TOK_LT || op == TOK_LE || op == TOK_GT || op == TOK_GE;
    if ((op != TOK_PLUS && !cmp) || !host_operand(&a) || !host_operand(&b)) return false;
    if (op == TOK_PLUS && !(is_str(&a) && is_str(&b))) return false;   /* eager's error: left to eager code */
    Ins *in = emit_with_operands(c, I_HBIN, NULL, (AVal[]){ a, b }, 2);
    in->aux = op;
    *out = host_result(c, in, cmp ? HOST_BOOL : HOST_STR);
    return true;
}


static AVal host_call(Comp *c, ObjBuiltin *b, AVal *args, int nargs, HostResult kind) {
    Value fn = OBJ_VAL(VAL_FUNC, b);
    Ins *in = emit_with_operands(c, I_HCALL, &fn, args, nargs);
    in->key = mem_strndup(b->name, strlen(b->name));   /* for dis */
    return host_result(c, in, kind);
}

AVal cc_host_len(Comp *c, ObjBuiltin *len, AVal x) { return host_call(c, len, &x, 1, HOST_NUM); }

bool cc_host_effect(Comp *c, ObjBuiltin *b, AVal *args, int nargs) {
    for (int i = 0; i < nargs; i++)
        if (!host_operand(&args[i])) return false;
    host_call(c, b, args, nargs, HOST_NONE);
    return true;
}

/* str(x) or format(x, spec) of values not known when compiling (the caller tried folding
 * first): a string, made when the block runs. */
AVal cc_host_call(Comp *c, ObjBuiltin *b, AVal *args, int nargs, bool to_num) {
    for (int i = 0; i < nargs; i++)
        if (!host_operand(&args[i])) return FAILV;
    return host_call(c, b, args, nargs, to_num ? HOST_NUM : HOST_STR);
}

void cc_host_move(Comp *c, int dst, AVal v) {
    if (v.kind == AV_STR) {
        Ins *in = cc_emit(c, I_VMOVE);
        in->dst = dst;
        in->a = v.reg;
        return;
    }
    Ins *in = emit_with_operands(c, I_VMOVE, NULL, &v, 1);   /* a known string */
    in->dst = dst;
}

/* A value that may go into the program's list or dict: not a list or dict made in the
 * block, which eagerly would be the very object the block goes on changing (an operand is
 * built afresh, a copy). */
static bool storable(const AVal *v) {
    return host_operand(v) && !((v->kind == AV_LIST || v->kind == AV_DICT) && v->st->obj < 0);
}

AVal cc_host_push(Comp *c, ObjBuiltin *b, AVal *v, bool extend) {
    if (extend) {
        if (v[1].kind != AV_LIST) return FAILV;
        if (v[1].st->obj < 0)
            for (int i = 0; i < v[1].st->n; i++)
                if (!storable(&v[1].st->items[i])) return FAILV;
    } else if (!storable(&v[1])) {
        return FAILV;
    }
    cc_struct_grows(c, v[0].st);
    AVal r = host_call(c, b, v, 2, HOST_NONE);
    c->g->code[c->g->ncode - 1].aux = v[0].st->obj + 1;   /* the container it changes (--verify-static) */
    return r;
}

/* An item of the program's own list or dict taken out (b is pop): eager's pop when the block
 * runs, its result dropped. at: the item's position where the caller knows it and takes it
 * out of the compiler's structure too (cdel.c), else -1: then which item went is not known,
 * and the positions move: no store by position (I_STORE) follows. */
AVal cc_host_remove(Comp *c, ObjBuiltin *b, AVal obj, AVal key, int at) {
    if (!host_operand(&key)) return FAILV;
    AStruct *st = obj.st;
    cc_undo_save(c, st);
    if (at < 0) {
        cc_struct_grows(c, st);
        st->items_unknown = st->shrunk = true;
    }
    AVal r = host_call(c, b, (AVal[]){ obj, key }, 2, HOST_NONE);
    c->g->code[c->g->ncode - 1].aux = st->obj + 1;   /* the container it changes (--verify-static) */
    return r;
}

/* A dict made in the block stored into with a key made at run time: made at run time from
 * here on. A dry run of a region the dict was made before only marks it: the region's
 * caller makes it, before the region (changed_items in compile.c). */
static bool host_dict(Comp *c, AStruct *st) {
    for (int i = 0; i < st->n; i++)
        if (!storable(&st->items[i])) {
            cc_unsupported(c, "a key made at run time in a dict made in static code that holds a list or dict made there");
            return false;
        }
    if (c->dry && st->born < c->snap_id) {
        cc_undo_save(c, st);
        st->wants_host = st->items_unknown = true;
        return false;
    }
    cc_host_list(c, st);
    return true;
}

void cc_host_dict_set(Comp *c, AStruct *st, AVal key, AVal v) {
    if (st->obj < 0 && !host_dict(c, st)) return;
    if (!storable(&v)) {
        cc_unsupported(c, "storing a list or dict made in static code into a dict with a key made at run time");
        return;
    }
    /* any item may be the one replaced: none is known when compiling any more */
    cc_struct_grows(c, st);
    st->items_unknown = true;
    Ins *in = emit_with_operands(c, I_DSET, NULL, &v, 1);
    in->aux = st->obj;
    in->b = key.reg;
}

/* A list or dict made in the block that a store puts into a container of the program.
 * In straight-line code it becomes a run-time object there (hlist), its items still known
 * when compiling: the container holds that very object, and a later change in the block (a
 * store, a push) reaches it, as eagerly, where both names share one list. Inside a loop or
 * run-time branch (where the object would be made on one path only), or when it holds a
 * function, the container gets a copy made at the store, so the structure and those inside
 * it are marked and a later change runs eagerly (cc_undo_save). */
void cc_escape(Comp *c, AVal v) {
    if ((v.kind != AV_LIST && v.kind != AV_DICT) || v.st->obj >= 0 || v.st->escaped || ca_is_open(v.st)) return;
    bool host = c->branch_depth == 0 && !c->dry;
    for (int i = 0; i < v.st->n; i++) {
        cc_escape(c, v.st->items[i]);
        host &= storable(&v.st->items[i]);
    }
    cc_undo_save(c, v.st);
    if (!host) {
        v.st->escaped = true;
        return;
    }
    Ins *in = emit_with_operands(c, I_HLIST, NULL, &v, 1);
    in->dst = cc_new_val(c);
    in->aux = v.st->obj = c->g->nobjs++;
}

bool cc_host_list_fits(const AStruct *st, int n_before) {
    if (st->dict || st->obj >= 0) return false;
    bool all_tensors = true;   /* a list of tensors grown in a loop is a tensor array: not ours */
    for (int i = 0; i < st->n; i++) {
        if (!storable(&st->items[i])) return false;
        if (i >= n_before) all_tensors &= st->items[i].kind == AV_TENSOR;
    }
    return !all_tensors;
}

void cc_host_list(Comp *c, AStruct *st) {
    cc_undo_save(c, st);
    st->wants_host = false;
    AVal lv = { .kind = st->dict ? AV_DICT : AV_LIST, .st = st, .reg = -1 };
    Ins *in = emit_with_operands(c, I_HLIST, NULL, &lv, 1);
    in->dst = cc_new_val(c);
    in->aux = st->obj = c->g->nobjs++;
    st->grown = st->items_unknown = true;
}

/* d[k] with a key made at run time (or xs[i] of a list of strings, i a number of the run):
 * eager's lookup when the block runs, its result a number or a string, so every value must be
 * a number (not a bool) or every one a string; the dict's keys (the list's length) are then a
 * guard. */
AVal cc_host_index(Comp *c, AVal obj, AVal key) {
    AStruct *st = obj.st;
    if ((obj.kind != AV_DICT && obj.kind != AV_LIST) || st->n == 0)
        return cc_unsupported(c, "reading an empty list or dict with a key made at run time");
    if (st->items_unknown || st->grown)
        return cc_unsupported(c, "reading a dict with a key made at run time after static code added to it");
    bool nums = true, strs = true;
    for (int i = 0; i < st->n; i++) {
        nums &= st->items[i].kind == AV_NUM && !st->items[i].is_bool;
        strs &= is_str(&st->items[i]);
    }
    if (!nums && !strs) return cc_unsupported(c, "reading a dict with a key made at run time when its values are not all numbers or all strings");
    cc_struct_n(c, st);   /* which keys it has decides the result */
    Ins *in = emit_with_operands(c, I_HINDEX, NULL, (AVal[]){ obj, key }, 2);
    return host_result(c, in, nums ? HOST_NUM : HOST_STR);
}
