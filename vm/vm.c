/* vm.c - the static VM: a dispatch loop over a Graph's instructions.
 *
 * Tensor instructions call the very functions eager execution calls (ops/), so static
 * results are the eager results, bit for bit. Registers hold numbers or references to
 * tensors; a tensor register that is overwritten releases its old value. An instruction
 * that fails reports at its own source location, with the message eager would give. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "vm.h"
#include "mem.h"
#include "infer.h"

#define vmdispatch(op) switch (op)
#define vmcase(l) case l:
#define vmbreak break

static int fail_at(Interp *I, Ins *in, const char *msg) {
    Source *saved = I->cur_src;
    I->cur_src = in->src;
    interp_error_at(I, in->loc, "%s", msg);
    I->cur_src = saved;
    return -1;
}

static void set_t(VmRegs *r, int reg, Tensor *t) {
    tensor_release(r->ten[reg]);
    r->ten[reg] = t;
}

static double num_op(int tok, double x, double y) {
    switch (tok) {
    case TOK_PLUS: return x + y;
    case TOK_MINUS: return x - y;
    case TOK_STAR: return x * y;
    case TOK_SLASH: return x / y;
    case TOK_PERCENT: return num_floor_mod(x, y);
    case TOK_POW: return pow(x, y);
    case TOK_LT: return x < y;
    case TOK_LE: return x <= y;
    case TOK_GT: return x > y;
    case TOK_GE: return x >= y;
    case TOK_EQ: return x == y;
    default: return x != y;
    }
}

Value vm_operand(Interp *I, Graph *g, VmRegs *r, const Opnd *o) {
    switch (o->kind) {
    case OPND_CONST: return val_retain(o->k);
    case OPND_NUM: return g->regs[o->reg].is_bool ? BOOL_VAL(r->num[o->reg] != 0) : NUM_VAL(r->num[o->reg]);
    case OPND_TENSOR:
        if (!r->ten[o->reg]) return interp_error(I, "undefined variable");
        return TENSOR_VAL(tensor_retain(r->ten[o->reg]));
    case OPND_OBJ: {
        Obj *ob = r->objs[o->reg];
        ob->rc++;
        return OBJ_VAL(ob->kind == OBJ_LIST ? VAL_LIST : VAL_DICT, ob);
    }
    case OPND_LIST: {
        ObjList *l = list_new(o->n);
        for (int i = 0; i < o->n; i++) {
            Value v = vm_operand(I, g, r, &o->items[i]);
            if (IS_ERR(v)) { val_release(OBJ_VAL(VAL_LIST, l)); return v; }
            l->items[l->len++] = v;
        }
        return OBJ_VAL(VAL_LIST, l);
    }
    case OPND_DICT: {
        ObjDict *d = dict_new();
        for (int i = 0; i < o->n; i++) {
            Value v = vm_operand(I, g, r, &o->items[i]);
            if (IS_ERR(v)) { val_release(OBJ_VAL(VAL_DICT, d)); return v; }
            dict_set_cstr(d, o->keys[i], v);
            val_release(v);
        }
        return OBJ_VAL(VAL_DICT, d);
    }
    }
    return NIL_VAL;
}

static int exec_print(Interp *I, Graph *g, VmRegs *r, Ins *in) {
    StrBuf b = { 0 };
    sb_putn(&b, "", 0);
    for (int i = 0; i < in->nopnds; i++) {
        Value v = vm_operand(I, g, r, &in->opnds[i]);
        if (IS_ERR(v)) { sb_free(&b); return fail_at(I, in, I->err_msg); }
        if (i) sb_putn(&b, " ", 1);
        fmt_value(&b, v, false);
        val_release(v);
    }
    sb_putn(&b, "\n", 1);
    if (!r->quiet) {
        fwrite(b.s, 1, b.len, stdout);
        if (I->repl) fflush(stdout);
    }
    sb_free(&b);
    return 0;
}

static int exec_assert(Interp *I, Graph *g, VmRegs *r, Ins *in) {
    if (r->num[in->a] != 0) return 0;
    if (!in->nopnds) return fail_at(I, in, "assertion failed");
    Value m = vm_operand(I, g, r, &in->opnds[0]);
    StrBuf b = { 0 };
    sb_puts(&b, "assertion failed: ");
    fmt_value(&b, m, false);
    val_release(m);
    int rc = fail_at(I, in, b.s);
    sb_free(&b);
    return rc;
}

static int exec_store(Interp *I, Graph *g, VmRegs *r, Ins *in) {
    Value v = vm_operand(I, g, r, &in->opnds[0]);
    if (IS_ERR(v)) return -1;
    Obj *o = r->objs[in->a];
    if (o->kind == OBJ_DICT) {
        dict_set_cstr((ObjDict *)o, in->key, v);
        val_release(v);
    } else {
        ObjList *l = (ObjList *)o;
        Value old = l->items[in->aux];
        l->items[in->aux] = v;
        val_release(old);
    }
    return 0;
}

static Tensor *exec_index(Interp *I, VmRegs *r, Ins *in, Tensor *setval, int *failed) {
    IndexItem items[TSL_MAX_RANK + 8];
    memcpy(items, in->idx, sizeof(IndexItem) * (size_t)in->nidx);
    for (int k = 0; k < in->nidx; k++) {
        if (in->args[k] < 0) continue;
        if (items[k].kind == IDX_TENSOR) {
            items[k].t = r->ten[in->args[k]];
            continue;
        }
        double x = r->num[in->args[k]];
        if (x != floor(x) || fabs(x) >= 9.3e18) {
            char msg[96];
            snprintf(msg, sizeof msg, "tensor index must be an integer, got %g", x);
            *failed = fail_at(I, in, msg);
            return NULL;
        }
        items[k].i = (int64_t)x;
    }
    return setval ? op_index_set(r->ten[in->a], items, in->nidx, setval) : op_index(r->ten[in->a], items, in->nidx);
}

int vm_exec(Interp *I, Graph *g, VmRegs *r) {
    double *N = r->num;
    Tensor **T = r->ten;
    Ins *code = g->code;
    int pc = 0, n = g->ncode;
    int64_t budget = 0;
    while (pc < n) {
        Ins *in = &code[pc++];
        Tensor *t = NULL;
        vmdispatch(in->op) {
            vmcase(I_NCONST) N[in->dst] = in->imm; vmbreak;
            vmcase(I_NMOVE) N[in->dst] = N[in->a]; vmbreak;
            vmcase(I_NBIN) N[in->dst] = num_op(in->aux, N[in->a], N[in->b]); vmbreak;
            vmcase(I_NNEG) N[in->dst] = -N[in->a]; vmbreak;
            vmcase(I_NNOT) N[in->dst] = N[in->a] == 0; vmbreak;
            vmcase(I_NMATH) N[in->dst] = op_unary_number((OpCode)in->aux, N[in->a]); vmbreak;
            vmcase(I_TCONST) set_t(r, in->dst, tensor_retain(g->consts[in->aux])); vmbreak;
            vmcase(I_SCALAR) t = tensor_scalar((DType)in->aux, N[in->a]); goto tensor_out;
            vmcase(I_TMOVE) {
                if (!T[in->a]) return fail_at(I, in, "undefined variable");
                set_t(r, in->dst, tensor_retain(T[in->a]));
                vmbreak;
            }
            vmcase(I_UNARY) t = op_unary((OpCode)in->aux, T[in->a]); goto tensor_out;
            vmcase(I_BINARY) t = op_binary((OpCode)in->aux, T[in->a], T[in->b]); goto tensor_out;
            vmcase(I_BINARY_S) t = op_binary_scalar((OpCode)in->aux, T[in->a], N[in->b], in->c); goto tensor_out;
            vmcase(I_MATMUL) t = op_matmul(T[in->a], T[in->b]); goto tensor_out;
            vmcase(I_REDUCE) t = op_reduce((OpCode)in->aux, T[in->a], in->args, in->nargs, in->c); goto tensor_out;
            vmcase(I_SOFTMAX) t = op_softmax(T[in->a], in->b, in->c); goto tensor_out;
            vmcase(I_WHERE) t = op_where(T[in->a], T[in->b], T[in->c]); goto tensor_out;
            vmcase(I_CLIP) t = op_clip(T[in->a], N[in->b], N[in->c]); goto tensor_out;
            vmcase(I_ASTYPE) t = op_astype(T[in->a], (DType)in->aux); goto tensor_out;
            vmcase(I_RESHAPE) t = op_reshape(T[in->a], &in->shape); goto tensor_out;
            vmcase(I_TRANSPOSE) t = op_transpose(T[in->a], in->nargs < 0 ? NULL : in->args, in->nargs); goto tensor_out;
            vmcase(I_BCAST) t = op_broadcast_to(T[in->a], &in->shape); goto tensor_out;
            vmcase(I_CONCAT) {
                Tensor *ts[256];
                for (int k = 0; k < in->nargs; k++) ts[k] = T[in->args[k]];
                t = in->c ? op_stack(ts, in->nargs, in->b) : op_concat(ts, in->nargs, in->b);
                goto tensor_out;
            }
            vmcase(I_INDEX) {
                int failed = 0;
                t = exec_index(I, r, in, NULL, &failed);
                if (failed) return -1;
                goto tensor_out;
            }
            vmcase(I_INDEX_SET) {
                int failed = 0;
                t = exec_index(I, r, in, T[in->b], &failed);
                if (failed) return -1;
                goto tensor_out;
            }
            vmcase(I_RANDOM) {
                if (in->aux == 0) t = op_rand(&in->shape);
                else if (in->aux == 1) t = op_randn(&in->shape);
                else t = op_randint((int64_t)in->imm, (int64_t)in->imm + in->b, &in->shape);
                goto tensor_out;
            }
            vmcase(I_ITEM) N[in->dst] = tensor_get(T[in->a], 0); vmbreak;
            vmcase(I_TRUTH) {
                Tensor *x = T[in->a];
                if (x->size != 1) {
                    char msg[128];
                    snprintf(msg, sizeof msg, "ambiguous truth value of a tensor with %lld elements; use any/all",
                             (long long)x->size);
                    return fail_at(I, in, msg);
                }
                N[in->dst] = tensor_get(x, 0) != 0;
                vmbreak;
            }
            vmcase(I_JUMP) {
                /* backward jumps close loops: poll Ctrl-C and the limits there */
                if (in->aux < pc && ((++budget & 255) == 0 || I->max_ops) && !interp_check_limits(I)) {
                    interp_attach_loc(I, in->loc);
                    return -1;
                }
                pc = in->aux;
                vmbreak;
            }
            vmcase(I_JUMPF) if (N[in->a] == 0) pc = in->aux; vmbreak;
            vmcase(I_PRINT) if (exec_print(I, g, r, in)) return -1; vmbreak;
            vmcase(I_ASSERT) if (exec_assert(I, g, r, in)) return -1; vmbreak;
            vmcase(I_STORE) if (exec_store(I, g, r, in)) return -1; vmbreak;
            vmcase(I_FUSED) return fail_at(I, in, "internal error: fused group not lowered");
            default: return fail_at(I, in, "internal error: unknown instruction");
        }
        continue;
    tensor_out:
        if (!t) return fail_at(I, in, op_error());
        set_t(r, in->dst, t);
    }
    return 0;
}
