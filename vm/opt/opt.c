/* opt.c - optimizer passes over a compiled Graph. Each can be switched off for debugging
 * with TSL_OPT, e.g. TSL_OPT=-fuse,-cse (names: fold, cse, dce, licm, epilogue, rows, fuse, mem).
 *
 *   fold  constant folding: elementwise ops on constant tensors, run now by the same kernels
 *   cse   common-subexpression elimination of pure instructions with identical operands
 *   dce   removal of pure instructions whose results nobody reads
 *   fuse  elementwise fusion: a run of elementwise instructions of one shape and float dtype
 *         becomes one FUSED instruction, evaluated in cache-sized chunks by the same kernels
 *         (so results stay bit-identical); intermediates that nothing else reads never
 *         exist as whole tensors. An operand may be a row vector (a bias) or one value per
 *         row (a reduction kept with keepdims), expanded block by block as eager broadcasts
 *   epilogue  matmul epilogues: a 2-D float matmul and the elementwise chain after it (bias
 *         add of a row vector, activation, scalars) become one EPILOGUE instruction that runs
 *         the chain on each row block of the product right after that block's BLAS call, while
 *         it is in cache; eager computes the same blocks (ops/cpu/linalg.c), so the bits match
 *   rows  row groups (rows.c): reductions of rows with keepdims and the elementwise steps
 *         around them over [..., C] become one group run a band of rows at a time, each
 *         reduction by reduce.c's row kernel, so a layernorm reads its input once
 *   licm  loop-invariant data movement (transpose, reshape, broadcast of values the loop does
 *         not change) moved before the loop: a backward loop transposes the weights once
 *   mem   memory planning: intermediates whose lifetimes do not overlap share buffers
 * None of them changes the arithmetic of any element. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "opt.h"
#include "opt_impl.h"
#include "mem.h"

static const char *const pass_names[] = { "fold", "takes", "cse", "dce", "licm", "epilogue", "rows", "fuse", "mem" };

/* What to say once when TSL_OPT names no pass (a typo would otherwise look like a no-op):
 * one line per word it ignores, appended to out; false when there is nothing to say. The
 * caller writes it as a diagnostic (the library prints nothing itself). */
bool opt_env_problem(char *out, size_t n) {
    static bool checked;
    const char *s = getenv("TSL_OPT");
    if (checked || !s || !n) return false;
    checked = true;
    out[0] = 0;
    char buf[256];
    snprintf(buf, sizeof buf, "%s", s);
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        const char *name = tok[0] == '-' ? tok + 1 : tok;
        bool known = false;
        for (size_t i = 0; i < sizeof pass_names / sizeof pass_names[0]; i++)
            if (!strcmp(name, pass_names[i])) known = true;
        size_t used = strlen(out);
        if ((!known || tok[0] != '-') && used < n)
            snprintf(out + used, n - used, "tsl: TSL_OPT: ignoring '%s' (write -PASS to switch a pass off; passes: fold, cse, dce, licm, epilogue, rows, fuse, mem)\n", tok);
    }
    return out[0] != 0;
}

bool pass_on(const char *name) {
    const char *s = getenv("TSL_OPT");
    if (!s) return true;
    char pat[32];
    snprintf(pat, sizeof pat, "-%s", name);
    const char *p = strstr(s, pat);
    return !(p && (p[strlen(pat)] == 0 || p[strlen(pat)] == ','));
}

static bool is_pure(InsOp op) {
    switch (op) {
    case I_PRINT: case I_ASSERT: case I_STORE: case I_JUMP: case I_JUMPF: case I_TRUTH: case I_SEED:
    case I_PUSH: case I_POP: case I_ROWSET:
    case I_HCALL: case I_HBIN: case I_VMOVE: case I_DSET: case I_HLIST: case I_HINDEX:   /* host values: effects, operands not compared */
        return false;
    default: return true;
    }
}

/* An instruction whose result depends only on its operands (not the generator's state), and
 * that talks to no other rank: a collective (F_COLL) is an effect every rank must reach in
 * the same order, so no pass removes, merges or folds it (LICM moves only data movement). */
static bool ins_pure(const Ins *in) {
    return is_pure(in->op) && !(in->op == I_OP && (op_info[in->aux].flags & (F_RANDOM | F_COLL)));
}

/* Registers the steps of a FUSED or EPILOGUE instruction read. */
static int step_reads(const Ins *in, int *out) {
    int n = 0;
    for (int k = 0; k < in->nsteps; k++) {
        const FusedStep *s = &in->steps[k];
        if (s->a < 0 && s->a != EPI_PRODUCT) out[n++] = -s->a - 1;
        if (s->b < 0 && s->b != FUSED_NONE && s->b != EPI_PRODUCT) out[n++] = -s->b - 1;
        if (s->scalar_reg >= 0) out[n++] = s->scalar_reg;
    }
    return n;
}

/* Registers an instruction reads (up to 3 fixed operands plus args). */
int reads(const Ins *in, int *out) {
    int n = 0;
    switch (in->op) {
    case I_NCONST: case I_TCONST: case I_JUMP: case I_SEED: return 0;
    case I_OP:
        for (int k = 0; k < in->nargs; k++)
            if (in->args[k] >= 0) out[n++] = in->args[k];
        return n;
    case I_SELECT:
    case I_INDEX: case I_INDEX_SET:
        out[n++] = in->a;
        if (in->op == I_INDEX_SET) out[n++] = in->b;
        for (int k = 0; k < in->nargs; k++)
            if (in->args[k] >= 0) out[n++] = in->args[k];
        return n;
    case I_ROWSET:   /* the buffer's other rows stay */
        out[n++] = in->dst;
        out[n++] = in->a;
        out[n++] = in->b;
        return n;
    case I_STORE: case I_PRINT: return 0;   /* operands counted separately */
    case I_EPILOGUE:   /* the matmul's operands, then steps that read like a fused group's */
        out[n++] = in->a;
        out[n++] = in->b;
        return n + step_reads(in, out + n);
    case I_FUSED: return step_reads(in, out);
    default:
        if (in->a >= 0) out[n++] = in->a;
        if (in->b >= 0) out[n++] = in->b;
        if (in->c >= 0) out[n++] = in->c;
        return n;
    }
}

static void count_opnd(const Opnd *o, int *uses) {
    if (o->kind == OPND_NUM || o->kind == OPND_TENSOR || o->kind == OPND_VAL) uses[o->reg]++;
    if (o->bound) uses[o->bound - 1]++;
    if (o->kind == OPND_CLOSURE) return;   /* n counts cells there, not items */
    for (int i = 0; i < o->n; i++) count_opnd(&o->items[i], uses);
}

void count_uses(Graph *g, int *uses, int *defs) {
    memset(uses, 0, sizeof(int) * (size_t)g->nregs);
    memset(defs, 0, sizeof(int) * (size_t)g->nregs);
    int r[600];
    for (int i = 0; i < g->ncode; i++) {
        Ins *in = &g->code[i];
        if (in->nargs > 500 || in->nsteps > 150) {   /* huge instructions: treat as using everything */
            for (int k = 0; k < g->nregs; k++) uses[k]++;
        } else {
            int n = reads(in, r);
            for (int k = 0; k < n; k++) uses[r[k]]++;
        }
        for (int k = 0; k < in->nopnds; k++) count_opnd(&in->opnds[k], uses);
        if (in->op == I_FUSED || in->op == I_EPILOGUE) {
            for (int k = 0; k < in->nsteps; k++) {
                if (in->steps[k].dst < 0) defs[-in->steps[k].dst - 1]++;
            }
            if (in->op == I_EPILOGUE && in->c >= 0) defs[in->c]++;
        } else if (in->op == I_OP)
            for (int k = 0; k < in->nres; k++) defs[in->res[k]]++;
        else if (in->dst >= 0) defs[in->dst]++;
    }
    for (int i = 0; i < g->noutputs; i++) count_opnd(&g->outputs[i].val, uses);
    if (g->has_result) count_opnd(&g->result, uses);
    for (int i = 0; i < g->nguards; i++)
        if (g->guards[i].reg >= 0) { defs[g->guards[i].reg]++; uses[g->guards[i].reg]++; }
}

/* Instructions that are targets of jumps start a new basic block. */
bool *jump_targets(Graph *g) {
    bool *t = mem_calloc((size_t)g->ncode + 1, sizeof(bool));
    for (int i = 0; i < g->ncode; i++)
        if (g->code[i].op == I_JUMP || g->code[i].op == I_JUMPF) t[g->code[i].aux] = true;
    return t;
}

/* Removes the instructions marked dead, remapping jump targets. */
void compact(Graph *g, bool *dead) {
    int *newpos = mem_alloc(sizeof(int) * (size_t)(g->ncode + 1));
    int n = 0;
    for (int i = 0; i < g->ncode; i++) {
        newpos[i] = n;
        if (!dead[i]) n++;
    }
    newpos[g->ncode] = n;
    int w = 0;
    for (int i = 0; i < g->ncode; i++) {
        if (dead[i]) { ins_free(&g->code[i]); continue; }
        g->code[w++] = g->code[i];
    }
    g->ncode = w;
    for (int i = 0; i < g->ncode; i++)
        if (g->code[i].op == I_JUMP || g->code[i].op == I_JUMPF) g->code[i].aux = newpos[g->code[i].aux];
    mem_free(newpos);
}

/* ---------- dead code ---------- */

/* An instruction whose run checks its operands' values and raises an error for some (an index
 * out of range, a singular matrix, integer division by zero, NaN to i64, shapes known only at
 * run time that do not broadcast, an empty axis of max). Eagerly it fails
 * whether or not its result is used, so it is never dead code. (vm/compile/ctry.c's may_fail
 * is the wider question a try asks: what may fail at all.) */
static bool checks_values(const Graph *g, const Ins *in) {
    if (in->cannot_fail) return false;
    /* a size known only at run time: its shapes are checked when it runs (in->rt, set after the optimizer) */
    if ((in->op == I_OP || in->op == I_INDEX || in->op == I_INDEX_SET) && graph_ins_runtime(g, in)) return true;
    switch (in->op) {
    case I_INDEX: case I_INDEX_SET: return in->nargs > 0;   /* indices read at run time are checked then */
    case I_OP:
        if (op_info[in->aux].flags & (F_READBACK | F_DYNAMIC)) return true;
        switch ((OpCode)in->aux) {
        case OP_FLOOR_DIVIDE: case OP_MOD: case OP_POW: return !dtype_is_float(g->regs[in->dst].dtype);
        case OP_ASTYPE: return !dtype_is_float(g->regs[in->dst].dtype) && in->nargs > 0 && in->args[0] >= 0 &&
                               dtype_is_float(g->regs[in->args[0]].dtype);
        default: return false;
        }
    default: return false;
    }
}

static bool dce_candidate(const Graph *g, const Ins *in, const int *uses) {
    return ins_pure(in) && !checks_values(g, in) && in->op != I_FUSED && in->op != I_EPILOGUE && in->dst >= 0 && uses[in->dst] == 0 && in->nres <= 1;
}

/* Removes pure instructions whose result nobody reads, to a fixed point, with a worklist:
 * when a register's last reader goes, the instructions that write it are looked at again
 * (a dead chain of n instructions costs n steps, not n passes over the code). */
static int pass_dce(Graph *g) {
    int nregs = g->nregs;
    int *uses = mem_alloc(sizeof(int) * (size_t)(nregs + 1)), *defs = mem_alloc(sizeof(int) * (size_t)(nregs + 1));
    int *writer = mem_alloc(sizeof(int) * (size_t)(nregs + 1));     /* register -> last instruction writing it */
    int *next = mem_alloc(sizeof(int) * (size_t)(g->ncode + 1));    /* -> the one before */
    int *work = mem_alloc(sizeof(int) * (size_t)(g->ncode + 1));
    bool *dead = mem_calloc((size_t)g->ncode + 1, sizeof(bool)), *queued = mem_calloc((size_t)g->ncode + 1, sizeof(bool));
    int maxr = 3;
    for (int i = 0; i < g->ncode; i++) {
        int m = g->code[i].nargs + 3 > 3 * g->code[i].nsteps + 2 ? g->code[i].nargs + 3 : 3 * g->code[i].nsteps + 2;
        if (m > maxr) maxr = m;
    }
    int *r = mem_alloc(sizeof(int) * (size_t)maxr);
    count_uses(g, uses, defs);
    for (int k = 0; k < nregs; k++) writer[k] = -1;
    int nwork = 0, removed = 0;
    for (int i = 0; i < g->ncode; i++) {
        Ins *in = &g->code[i];
        next[i] = -1;
        if (in->dst >= 0) { next[i] = writer[in->dst]; writer[in->dst] = i; }
        if (dce_candidate(g, in, uses)) { work[nwork++] = i; queued[i] = true; }
    }
    while (nwork > 0) {
        int i = work[--nwork];
        queued[i] = false;
        Ins *in = &g->code[i];
        if (dead[i] || !dce_candidate(g, in, uses)) continue;
        dead[i] = true;
        removed++;
        /* its operands lose a use (a huge instruction counted as using every register) */
        bool huge = in->nargs > 500 || in->nsteps > 150;
        int n = huge ? nregs : reads(in, r);
        for (int k = 0; k < n; k++) {
            int reg = huge ? k : r[k];
            if (--uses[reg] != 0) continue;
            for (int w = writer[reg]; w >= 0; w = next[w])
                if (!dead[w] && !queued[w]) { work[nwork++] = w; queued[w] = true; }
        }
        in->op = I_NCONST;   /* neutral until compacted; reads nothing */
        in->dst = -1;
        in->nres = 0;
        in->a = in->b = in->c = -1;
        in->nargs = 0;
    }
    compact(g, dead);
    mem_free(r);
    mem_free(queued);
    mem_free(dead);
    mem_free(work);
    mem_free(next);
    mem_free(writer);
    mem_free(uses);
    mem_free(defs);
    return removed;
}

/* ---------- common subexpressions ---------- */

static bool same_ins(const Graph *g, const Ins *a, const Ins *b) {
    /* constants compare by bits: 0 and -0 are different constants; and a truth value is not
     * the number 1 (a number register's bool-ness decides an op's dtype: m & true is bool,
     * m & 1 is i64) */
    if (a->dst >= 0 && b->dst >= 0 && g->regs[a->dst].kind == R_NUM && g->regs[b->dst].kind == R_NUM &&
        g->regs[a->dst].is_bool != g->regs[b->dst].is_bool)
        return false;
    if (a->op != b->op || a->aux != b->aux || a->a != b->a || a->b != b->b || a->c != b->c ||
        memcmp(&a->imm, &b->imm, sizeof a->imm))
        return false;
    if (a->nargs != b->nargs || (a->nargs > 0 && memcmp(a->args, b->args, sizeof(int) * (size_t)a->nargs))) return false;
    if (a->op == I_OP) return !memcmp(a->attrs, b->attrs, sizeof *a->attrs);
    if (a->op == I_INDEX) return a->nidx == b->nidx && !memcmp(a->idx, b->idx, sizeof(IndexItem) * (size_t)a->nidx);
    return true;
}

static void rename_opnd(Opnd *o, const int *map) {
    if (o->kind == OPND_NUM || o->kind == OPND_TENSOR || o->kind == OPND_VAL) o->reg = map[o->reg];
    if (o->bound) o->bound = map[o->bound - 1] + 1;
    if (o->kind == OPND_CLOSURE) return;
    for (int i = 0; i < o->n; i++) rename_opnd(&o->items[i], map);
}

static void rename_all(Graph *g, const int *map) {
    for (int i = 0; i < g->ncode; i++) {
        Ins *in = &g->code[i];
        if (in->op != I_NCONST && in->op != I_TCONST && in->op != I_JUMP && in->op != I_OP) {
            if (in->a >= 0 && in->op != I_STORE) in->a = map[in->a];
            if (in->b >= 0) in->b = map[in->b];
            if (in->c >= 0) in->c = map[in->c];
        }
        if (in->op == I_OP || in->op == I_INDEX || in->op == I_INDEX_SET || in->op == I_SELECT)
            for (int k = 0; k < in->nargs; k++)
                if (in->args[k] >= 0) in->args[k] = map[in->args[k]];
        for (int k = 0; k < in->nopnds; k++) rename_opnd(&in->opnds[k], map);
    }
    for (int i = 0; i < g->noutputs; i++) rename_opnd(&g->outputs[i].val, map);
    if (g->has_result) rename_opnd(&g->result, map);
}

/* A hash of what same_ins compares (equal instructions hash alike), so CSE finds an earlier
 * twin in one probe instead of comparing with every instruction of the block before it. */
static uint64_t mix(uint64_t h, uint64_t x) { return (h ^ x) * 0x100000001b3ull + (h >> 29); }

static uint64_t bytes_hash(uint64_t h, const void *p, size_t n) {
    const unsigned char *b = p;
    for (size_t i = 0; i + 8 <= n; i += 8) {
        uint64_t w;
        memcpy(&w, b + i, 8);
        h = mix(h, w);
    }
    for (size_t i = n & ~(size_t)7; i < n; i++) h = mix(h, b[i]);
    return h;
}

static uint64_t ins_hash(const Ins *in) {
    uint64_t h = 0xcbf29ce484222325ull, imm;
    memcpy(&imm, &in->imm, sizeof imm);
    h = mix(mix(mix(mix(mix(mix(h, (uint64_t)in->op), (uint64_t)(uint32_t)in->aux), (uint64_t)(uint32_t)in->a),
                    (uint64_t)(uint32_t)in->b), (uint64_t)(uint32_t)in->c), imm);
    h = mix(h, (uint64_t)in->nargs);
    if (in->nargs > 0) h = bytes_hash(h, in->args, sizeof(int) * (size_t)in->nargs);
    if (in->op == I_OP && in->attrs) h = bytes_hash(h, in->attrs, sizeof *in->attrs);
    if (in->op == I_INDEX) h = bytes_hash(h, in->idx, sizeof(IndexItem) * (size_t)in->nidx);
    return h ? h : 1;
}

typedef struct { uint64_t h; int i; } CseSlot;   /* i: instruction index, -1 empty */

static int pass_cse(Graph *g) {
    int *uses = mem_alloc(sizeof(int) * (size_t)(g->nregs + 1)), *defs = mem_alloc(sizeof(int) * (size_t)(g->nregs + 1));
    int *map = mem_alloc(sizeof(int) * (size_t)(g->nregs + 1));
    bool *starts = jump_targets(g), *dead = mem_calloc((size_t)g->ncode + 1, sizeof(bool));
    count_uses(g, uses, defs);
    for (int r = 0; r < g->nregs; r++) map[r] = r;
    int found = 0, block_start = 0;
    size_t cap = 16;
    while (cap < 2 * (size_t)g->ncode) cap *= 2;
    size_t mask = cap - 1;
    CseSlot *table = mem_alloc(sizeof(CseSlot) * cap);
    for (size_t k = 0; k < cap; k++) table[k].i = -1;
    for (int i = 0; i < g->ncode; i++) {
        Ins *in = &g->code[i];
        if (starts[i]) block_start = i;
        if (in->op == I_JUMP || in->op == I_JUMPF) block_start = i + 1;
        if (!ins_pure(in) || in->dst < 0 || defs[in->dst] != 1 || in->op == I_NMOVE || in->op == I_TMOVE || in->nres > 1) continue;
        /* operands must be single-definition registers (not loop homes) */
        int r[600], n = in->nargs > 500 ? -1 : reads(in, r);
        bool ok = n >= 0;
        for (int k = 0; ok && k < n; k++) ok = defs[r[k]] <= 1;
        if (!ok) continue;
        /* the first earlier twin in this block: entries before block_start are stale */
        uint64_t h = ins_hash(in);
        size_t at = (size_t)h & mask;
        for (; table[at].i >= 0; at = (at + 1) & mask) {
            int j = table[at].i;
            if (table[at].h != h || j < block_start || !same_ins(g, &g->code[j], in)) continue;
            map[in->dst] = g->code[j].dst;
            dead[i] = true;
            found++;
            break;
        }
        if (!dead[i]) table[at] = (CseSlot){ h, i };
    }
    mem_free(table);
    if (found) {
        rename_all(g, map);
        compact(g, dead);
    }
    mem_free(starts);
    mem_free(dead);
    mem_free(map);
    mem_free(uses);
    mem_free(defs);
    return found;
}

/* ---------- constant folding ---------- */

/* An op whose operands are all constants, run now by the same kernels (NULL: not foldable,
 * or it failed, and then it fails again at run time, where the error belongs). Random
 * draws and ops without operands (constructors: large constants) stay. */
static Tensor *fold_op(Graph *g, const Ins *in, const int *kof, const bool *numk, const double *numv) {
    const OpDef *d = op_def((OpCode)in->aux);
    if (in->nres != 1 || in->nargs < 1 || in->nargs > 8 || (d->flags & (F_RANDOM | F_DYNAMIC | F_COLL))) return NULL;
    OpArg args[8];
    for (int k = 0; k < in->nargs; k++) {
        int r = in->args[k];
        if (r < 0) args[k] = (OpArg){ .kind = ARG_NONE };
        else if (kof[r] >= 0) args[k] = op_arg_tensor(g->consts[kof[r]]);
        else if (numk[r]) args[k] = op_arg_num(numv[r], g->regs[r].is_bool);
        else return NULL;
    }
    OpCall call = { (OpCode)in->aux, in->nargs, args, in->attrs };
    Tensor *out[OP_MAX_OUT] = { NULL, NULL, NULL };
    return op_run(&call, out) ? NULL : out[0];
}

static int pass_fold(Graph *g) {
    int *defs = mem_alloc(sizeof(int) * (size_t)(g->nregs + 1)), *uses = mem_alloc(sizeof(int) * (size_t)(g->nregs + 1));
    int *kof = mem_alloc(sizeof(int) * (size_t)(g->nregs + 1));   /* register -> constant index */
    bool *numk = mem_calloc((size_t)g->nregs + 1, sizeof(bool));    /* number register is a constant */
    double *numv = mem_calloc((size_t)g->nregs + 1, sizeof(double));
    count_uses(g, uses, defs);
    for (int r = 0; r < g->nregs; r++) kof[r] = -1;
    int folded = 0;
    for (int i = 0; i < g->ncode; i++) {
        Ins *in = &g->code[i];
        if (in->op == I_TCONST && defs[in->dst] == 1) { kof[in->dst] = in->aux; continue; }
        if (in->op == I_NCONST && defs[in->dst] == 1) { numk[in->dst] = true; numv[in->dst] = in->imm; continue; }
        Tensor *t = in->op == I_OP && defs[in->dst] == 1 ? fold_op(g, in, kof, numk, numv) : NULL;
        if (!t) continue;
        GROW(g->consts, g->nconsts, g->capconsts);
        g->consts[g->nconsts] = t;
        in->op = I_TCONST;
        in->aux = g->nconsts++;
        in->a = in->b = in->c = -1;
        mem_free(in->args);
        mem_free(in->attrs);   /* a tconst has none (a graph file would carry them) */
        in->args = NULL;
        in->attrs = NULL;
        in->nargs = 0;
        in->nres = 0;
        kof[in->dst] = in->aux;
        folded++;
    }
    mem_free(numk);
    mem_free(numv);
    mem_free(defs);
    mem_free(uses);
    mem_free(kof);
    return folded;
}

/* ---------- elementwise fusion ---------- */

/* The operands of an elementwise OP: tensor registers *ta and *tb (-1 none) and a number
 * register *scalar (-1 none), which is the left operand when *num_left. */
bool ew_operands(const Graph *g, const Ins *in, int *ta, int *tb, int *scalar, bool *num_left) {
    if (in->op != I_OP) return false;
    const OpDef *d = &op_info[in->aux];
    if (d->kind != K_UNARY && d->kind != K_BINARY && d->kind != K_COMPARE) return false;
    *ta = *tb = *scalar = -1;
    *num_left = false;
    for (int k = 0; k < in->nargs; k++) {
        int r = in->args[k];
        if (r < 0) return false;
        if (g->regs[r].kind == R_NUM) {
            *scalar = r;
            *num_left = k == 0;
        } else if (*ta < 0) {
            *ta = r;
        } else {
            *tb = r;
        }
    }
    return *ta >= 0;
}

/* Instructions i + 1 .. j - 1 die (neutralised before compaction) and i becomes op, writing
 * dst, without its arguments and attributes: a fused group's one instruction. */
void fuse_into(Graph *g, bool *dead, int i, int j, InsOp op, int dst) {
    for (int k = i + 1; k < j; k++) {
        dead[k] = true;
        g->code[k].op = I_NCONST;
    }
    Ins *in = &g->code[i];
    mem_free(in->args);
    mem_free(in->attrs);
    in->args = NULL;
    in->attrs = NULL;
    in->nargs = in->nres = 0;
    in->op = op;
    in->dst = dst;
}

/* Whether instruction i can join a group producing tensors of (dt, shape). */
static bool fusable(Graph *g, Ins *in, DType *dt, Shape *shape) {
    int ta, tb, scalar;
    bool num_left;
    if (!ew_operands(g, in, &ta, &tb, &scalar, &num_left)) return false;
    if (!(op_info[in->aux].flags & F_FUSE) || op_info[in->aux].kind == K_COMPARE) return false;
    if (in->attrs && in->attrs->i[0] != 0) return false;   /* round(x, decimals): not a plain kernel */
    if (graph_ins_runtime(g, in)) return false;   /* a size known only at run time */
    RegInfo *d = &g->regs[in->dst];
    if (!dtype_is_float(d->dtype)) return false;
    int64_t n = shape_count(&d->shape);
    if (n < 1) return false;
    /* every tensor operand has the result's dtype and its element layout, or is a row vector
     * or a value per row (opt_fused_layout), the other operand then element for element */
    int ops[2] = { ta, tb }, bcast = 0;
    for (int k = 0; k < 2; k++) {
        if (ops[k] < 0) continue;
        RegInfo *o = &g->regs[ops[k]];
        FusedLayout l = opt_fused_layout(&o->shape, &d->shape);
        if (o->dtype != d->dtype || l == FUSED_NO) return false;
        bcast += l != FUSED_FULL;
    }
    if (bcast > 1 || (bcast == 1 && (tb < 0 || d->shape.d[d->shape.ndim - 1] < FUSED_ROW_MIN))) return false;
    *dt = d->dtype;
    *shape = d->shape;
    return true;
}

static int pass_fuse(Graph *g) {
    int *uses = mem_alloc(sizeof(int) * (size_t)(g->nregs + 1)), *defs = mem_alloc(sizeof(int) * (size_t)(g->nregs + 1));
    bool *starts = jump_targets(g), *dead = mem_calloc((size_t)g->ncode + 1, sizeof(bool));
    count_uses(g, uses, defs);
    int groups = 0;
    for (int i = 0; i < g->ncode; i++) {
        DType dt, dt2;
        Shape sh, sh2;
        if (!fusable(g, &g->code[i], &dt, &sh)) continue;
        int j = i + 1;
        while (j < g->ncode && !starts[j] && fusable(g, &g->code[j], &dt2, &sh2) && dt2 == dt &&
               shape_count(&sh2) == shape_count(&sh) && shape_equal(&sh2, &sh))
            j++;
        int n = j - i;
        if (n < 2) continue;
        /* a step's result stays in a chunk buffer when only later steps of the group read it */
        int *local_uses = mem_calloc((size_t)g->nregs + 1, sizeof(int));
        for (int k = i; k < j; k++) {
            int r[4], m = reads(&g->code[k], r);
            for (int q = 0; q < m; q++) local_uses[r[q]]++;
        }
        FusedStep *steps = mem_calloc((size_t)n, sizeof(FusedStep));
        int *step_of = mem_alloc(sizeof(int) * (size_t)(g->nregs + 1));
        for (int r = 0; r < g->nregs; r++) step_of[r] = -1;
        int last_dst = g->code[j - 1].dst;
        int64_t saved = 0;
        for (int k = i; k < j; k++) {
            Ins *in = &g->code[k];
            FusedStep *s = &steps[k - i];
            int ta, tb;
            s->op = (OpCode)in->aux;
            ew_operands(g, in, &ta, &tb, &s->scalar_reg, &s->num_left);
            /* operands: an earlier step's chunk, or an outside register (-(r+1)) */
            s->a = step_of[ta] >= 0 ? step_of[ta] : -ta - 1;
            s->b = tb >= 0 ? (step_of[tb] >= 0 ? step_of[tb] : -tb - 1) : FUSED_NONE;
            bool internal = in->dst != last_dst && defs[in->dst] == 1 && uses[in->dst] == local_uses[in->dst];
            if (internal) {
                s->dst = k - i;
                step_of[in->dst] = k - i;
                saved += (int64_t)shape_count(&sh) * (int64_t)dtype_size(dt);
            } else {
                s->dst = -in->dst - 1;
                step_of[in->dst] = -1;
            }
        }
        Ins *first = &g->code[i];
        SrcLoc loc = g->code[j - 1].loc;
        Source *src = g->code[j - 1].src;
        const CallFrame *frame = g->code[j - 1].frame;
        fuse_into(g, dead, i, j, I_FUSED, last_dst);
        first->a = first->b = first->c = -1;
        first->aux = g->fused_groups + groups;   /* after the row groups (rows.c) */
        first->steps = steps;
        first->nsteps = n;
        first->loc = loc;
        first->src = src;
        first->frame = frame;
        g->bytes_saved += saved;
        groups++;
        mem_free(local_uses);
        mem_free(step_of);
        i = j - 1;
    }
    compact(g, dead);
    mem_free(starts);
    mem_free(dead);
    mem_free(uses);
    mem_free(defs);
    g->fused_groups += groups;
    return groups;
}

/* ---------- matmul epilogues ---------- */

#define EPI_MAX_STEPS 64
#define EPI_MAX_SKIP 8

/* The product register of a matmul that can take an epilogue: a 2-D float matmul of 2-D
 * operands of its dtype (the case op_matmul_t_into hands to BLAS in row blocks); -1 if not. */
static int epi_product(const Graph *g, const Ins *in, int *defs) {
    if (in->op != I_OP || in->aux != OP_MATMUL || in->nargs != 2 || in->nres != 1 || defs[in->dst] != 1) return -1;
    if (graph_ins_runtime(g, in)) return -1;
    const RegInfo *p = &g->regs[in->dst];
    if (!dtype_is_float(p->dtype) || p->shape.ndim != 2 || shape_count(&p->shape) < 1) return -1;
    for (int k = 0; k < 2; k++) {
        int r = in->args[k];
        if (r < 0 || g->regs[r].kind != R_TENSOR || g->regs[r].dtype != p->dtype || g->regs[r].shape.ndim != 2) return -1;
    }
    return in->dst;
}

/* Whether `in` can be the next step of the epilogue of product p (dtype dt, [m, n]), whose
 * steps so far wrote the registers marked in `mine` (p too): an elementwise op giving a tensor
 * of the product's dtype and shape, reading at least one of them, its other tensor operand
 * element for element or a row vector of that dtype. */
static bool epi_step_ok(const Graph *g, const Ins *in, const RegInfo *p, const bool *mine, const int *defs) {
    int ta, tb, scalar;
    bool num_left;
    if (!ew_operands(g, in, &ta, &tb, &scalar, &num_left)) return false;
    if (!(op_info[in->aux].flags & F_FUSE) || op_info[in->aux].kind == K_COMPARE) return false;
    if (in->attrs && in->attrs->i[0] != 0) return false;   /* round(x, decimals): not a plain kernel */
    if (graph_ins_runtime(g, in)) return false;
    const RegInfo *d = &g->regs[in->dst];
    if (defs[in->dst] != 1 || d->dtype != p->dtype || !shape_equal(&d->shape, &p->shape)) return false;
    int ops[2] = { ta, tb };
    bool chained = false;
    int64_t m = p->shape.d[0], n = p->shape.d[1];
    for (int k = 0; k < 2; k++) {
        if (ops[k] < 0) continue;
        const RegInfo *o = &g->regs[ops[k]];
        if (mine[ops[k]]) { chained = true; continue; }
        if (o->dtype != p->dtype || opt_epi_layout(&o->shape, m, n) == EPI_NO) return false;
    }
    /* a row vector cannot be a unary's operand nor both of a binary's (the result would not be [m, n]) */
    return chained;
}

/* An instruction between a matmul and its steps that can run before the matmul: pure, one
 * result that nothing before it reads, and it reads nothing the matmul or its steps write. */
static bool epi_skippable(const Graph *g, const Ins *in, const Ins *mm, const bool *mine, const int *defs) {
    switch (in->op) {
    case I_OP: case I_INDEX: case I_TCONST: case I_SCALAR: case I_NBIN: case I_NNEG: case I_NNOT: case I_NMATH: break;
    default: return false;
    }
    if (!ins_pure(in) || in->dst < 0 || defs[in->dst] != 1 || in->nres > 1 || in->nargs > 8 || in->dst == mm->args[0] ||
        in->dst == mm->args[1])
        return false;
    int r[16], n = reads(in, r);
    for (int k = 0; k < n; k++)
        if (mine[r[k]]) return false;
    return true;
}

static bool epi_skipped(const int *skip, int nskip, int k) {
    for (int q = 0; q < nskip; q++)
        if (skip[q] == k) return true;
    return false;
}

/* The step's operand for register x: the product, an earlier step's block (local), or an
 * outside register -(x+1). */
static int epi_ref(int x, int prod, const int *step_of) {
    if (x == prod) return EPI_PRODUCT;
    return step_of[x] >= 0 ? step_of[x] : -x - 1;
}

/* A matmul and the elementwise instructions right after it that read its product (or each
 * other's results) become one EPILOGUE: dst the last step's register, a/b the matmul's
 * operands, aux its transposes (EPI_TRANS_A, EPI_TRANS_B), c the product's register when something after the chain
 * reads it (else -1: the product never exists whole). Steps are a fused group's, with
 * EPI_PRODUCT for the product. */
static int pass_epilogue(Graph *g) {
    int nregs = g->nregs;
    int *uses = mem_alloc(sizeof(int) * (size_t)(nregs + 1)), *defs = mem_alloc(sizeof(int) * (size_t)(nregs + 1));
    bool *starts = jump_targets(g), *dead = mem_calloc((size_t)g->ncode + 1, sizeof(bool));
    bool *mine = mem_calloc((size_t)nregs + 1, sizeof(bool));
    int *local_uses = mem_calloc((size_t)nregs + 1, sizeof(int)), *step_of = mem_alloc(sizeof(int) * (size_t)(nregs + 1));
    count_uses(g, uses, defs);
    for (int r = 0; r < nregs; r++) step_of[r] = -1;
    int made = 0;
    for (int i = 0; i < g->ncode; i++) {
        int prod = epi_product(g, &g->code[i], defs);
        if (prod < 0) continue;
        const RegInfo *p = &g->regs[prod];
        mine[prod] = true;
        /* the steps, and between them instructions that do not depend on the product (an index
         * of this step's input): those move before the matmul */
        int grown = i + 1, skip[EPI_MAX_SKIP], nskip = 0, nchain = 0, revisit = -1;
        while (grown < g->ncode && nchain < EPI_MAX_STEPS && !starts[grown] && !dead[grown]) {
            Ins *x = &g->code[grown];
            if (epi_step_ok(g, x, p, mine, defs)) nchain++, mine[x->dst] = true;
            else if (nskip < EPI_MAX_SKIP && epi_skippable(g, x, &g->code[i], mine, defs)) skip[nskip++] = grown;
            else break;
            grown++;
        }
        for (int k = i; k < grown; k++)
            if (g->code[k].dst >= 0) mine[g->code[k].dst] = false;
        /* a step may not read a register that it or a later step writes (it would see this
         * run's rows): the chain ends before such a step */
        int j = grown;
        for (int k = i + 1; k < j; k++) {
            int r[16], q = reads(&g->code[k], r);
            for (int x = 0; x < q; x++)
                for (int w = k; w < j; w++)
                    if (g->code[w].dst == r[x]) j = k;
        }
        while (nskip > 0 && skip[nskip - 1] >= j - 1) {   /* none moves past the chain's end */
            if (skip[nskip - 1] == j - 1) j--;
            nskip--;
        }
        if (j - i - 1 - nskip < 1) continue;
        if (nskip) {   /* [skipped..., matmul, steps...]: no jump lands inside (starts[]) */
            Ins *tmp = mem_alloc(sizeof(Ins) * (size_t)(j - i));
            int w = 0;
            for (int q = 0; q < nskip; q++) tmp[w++] = g->code[skip[q]];
            for (int k = i; k < j; k++)
                if (!epi_skipped(skip, nskip, k)) tmp[w++] = g->code[k];
            memcpy(&g->code[i], tmp, sizeof(Ins) * (size_t)(j - i));
            mem_free(tmp);
            i += nskip;
            revisit = i - nskip;   /* a moved matmul may take an epilogue of its own */
        }
        int nsteps = j - i - 1;
        if (nsteps < 1) continue;
        for (int k = i + 1; k < j; k++) {
            int r[16], q = reads(&g->code[k], r);
            for (int x = 0; x < q; x++) local_uses[r[x]]++;
        }
        int last = g->code[j - 1].dst;
        FusedStep *steps = mem_calloc((size_t)nsteps, sizeof(FusedStep));
        for (int k = i + 1; k < j; k++) {
            Ins *in = &g->code[k];
            FusedStep *st = &steps[k - i - 1];
            int ta, tb;
            st->op = (OpCode)in->aux;
            ew_operands(g, in, &ta, &tb, &st->scalar_reg, &st->num_left);
            st->a = epi_ref(ta, prod, step_of);
            st->b = tb >= 0 ? epi_ref(tb, prod, step_of) : FUSED_NONE;
            /* a result only later steps read lives in a block-sized scratch area */
            bool internal = in->dst != last && uses[in->dst] == local_uses[in->dst];
            st->dst = internal ? k - i - 1 : -in->dst - 1;
            if (internal) {
                step_of[in->dst] = k - i - 1;
                g->bytes_saved += shape_count(&p->shape) * (int64_t)dtype_size(p->dtype);
            }
        }
        bool product_outside = uses[prod] > local_uses[prod];
        if (!product_outside) g->bytes_saved += shape_count(&p->shape) * (int64_t)dtype_size(p->dtype);
        for (int k = i + 1; k < j; k++) {
            int r[16], q = reads(&g->code[k], r);
            for (int x = 0; x < q; x++) local_uses[r[x]] = 0;
            step_of[g->code[k].dst] = -1;
        }
        Ins *mm = &g->code[i];
        int a = mm->args[0], b = mm->args[1];
        int trans = mm->attrs ? (mm->attrs->flag ? EPI_TRANS_A : 0) | (mm->attrs->flag2 ? EPI_TRANS_B : 0) : 0;
        fuse_into(g, dead, i, j, I_EPILOGUE, last);
        mm->a = a;
        mm->b = b;
        mm->c = product_outside ? prod : -1;
        mm->aux = trans;
        mm->steps = steps;
        mm->nsteps = nsteps;
        made++;
        i = revisit >= 0 ? revisit - 1 : j - 1;
    }
    compact(g, dead);
    mem_free(step_of);
    mem_free(local_uses);
    mem_free(mine);
    mem_free(starts);
    mem_free(dead);
    mem_free(uses);
    mem_free(defs);
    return made;
}

/* Number constants move to the top of the graph (each register has one definition), so
 * they do not split runs of elementwise instructions. */
/* Moves the instructions marked moved[] (none before at) to just before instruction at, in
 * their order. A jump to a moved instruction (or to at) lands on the next one that stayed. */
static void move_before(Graph *g, const bool *moved, int at) {
    Ins *code = mem_alloc(sizeof(Ins) * (size_t)(g->ncode + 1));
    int *newpos = mem_alloc(sizeof(int) * (size_t)(g->ncode + 1));
    int n = 0;
    for (int i = 0; i < at; i++) { newpos[i] = n; code[n++] = g->code[i]; }
    for (int pass = 0; pass < 2; pass++)
        for (int i = at; i < g->ncode; i++)
            if (moved[i] == (pass == 0)) { newpos[i] = n; code[n++] = g->code[i]; }
    newpos[g->ncode] = n;
    for (int i = g->ncode - 1; i >= at; i--)
        if (moved[i]) newpos[i] = newpos[i + 1];
    for (int i = 0; i < n; i++)
        if (code[i].op == I_JUMP || code[i].op == I_JUMPF) code[i].aux = newpos[code[i].aux];
    mem_free(g->code);
    g->code = code;
    g->capcode = g->ncode + 1;
    mem_free(newpos);
}

static void hoist_constants(Graph *g) {
    int *uses = mem_alloc(sizeof(int) * (size_t)(g->nregs + 1)), *defs = mem_alloc(sizeof(int) * (size_t)(g->nregs + 1));
    count_uses(g, uses, defs);
    bool *hoisted = mem_calloc((size_t)g->ncode + 1, sizeof(bool));
    for (int i = 0; i < g->ncode; i++)
        hoisted[i] = g->code[i].op == I_NCONST && g->code[i].dst >= 0 && defs[g->code[i].dst] == 1;
    move_before(g, hoisted, 0);
    mem_free(hoisted);
    mem_free(uses);
    mem_free(defs);
}


/* ---------- loop-invariant data movement ---------- */

/* Ops that only move data and cannot fail at run time: safe to run before a loop even when
 * the loop then runs zero times, and their results are the same bits wherever they run. */
static bool movable_op(const Ins *in) {
    if (in->op != I_OP) return false;
    switch ((OpCode)in->aux) {
    case OP_TRANSPOSE: case OP_RESHAPE: case OP_EXPAND_DIMS: case OP_SQUEEZE: case OP_FLATTEN: case OP_BROADCAST_TO:
        return true;
    default: return false;
    }
}

/* Moves the movable instructions of the loop [top, back] whose operands the loop does not
 * write to just before top, in order. Returns how many moved. */
static int hoist_loop(Graph *g, int top, int back, const int *defs) {
    int *inside = mem_calloc((size_t)g->nregs + 1, sizeof(int));   /* writes inside the loop */
    for (int i = top; i <= back; i++) {
        Ins *in = &g->code[i];
        if (in->op == I_OP)
            for (int k = 0; k < in->nres; k++) inside[in->res[k]]++;
        else if (in->op == I_FUSED || in->op == I_EPILOGUE) {
            for (int k = 0; k < in->nsteps; k++) {
                if (in->steps[k].dst < 0) inside[-in->steps[k].dst - 1]++;
            }
            if (in->op == I_EPILOGUE && in->c >= 0) inside[in->c]++;
        } else if (in->dst >= 0) inside[in->dst]++;
    }
    bool *moved = mem_calloc((size_t)g->ncode + 1, sizeof(bool));
    int nmoved = 0;
    for (int i = top; i <= back; i++) {   /* in order: a moved result frees the ops that read it */
        Ins *in = &g->code[i];
        if (!movable_op(in) || defs[in->dst] != 1) continue;
        bool invariant = true;
        for (int k = 0; k < in->nargs && invariant; k++) invariant = in->args[k] < 0 || inside[in->args[k]] == 0;
        if (!invariant) continue;
        moved[i] = true;
        inside[in->dst] = 0;
        nmoved++;
    }
    if (nmoved) move_before(g, moved, top);
    mem_free(moved);
    mem_free(inside);
    return nmoved;
}

static void pass_licm(Graph *g) {
    int *uses = mem_alloc(sizeof(int) * (size_t)(g->nregs + 1)), *defs = mem_alloc(sizeof(int) * (size_t)(g->nregs + 1));
    count_uses(g, uses, defs);
    /* each back jump closes a loop; inner loops close first, so an op leaves one loop at a time */
    for (int j = 0; j < g->ncode; j++) {
        Ins *in = &g->code[j];
        if (in->op != I_JUMP || in->aux >= j) continue;
        j += hoist_loop(g, in->aux, j, defs);   /* the back jump moved down by what moved up */
    }
    mem_free(uses);
    mem_free(defs);
}

/* ---------- memory planning ---------- */

/* Last instruction that needs each register. A register used inside a loop but defined
 * before it, or written more than once (a loop home), lives to the loop's closing jump. */
static void live_ranges(Graph *g, int *first, int *last, const int *defs) {
    for (int r = 0; r < g->nregs; r++) { first[r] = -1; last[r] = -1; }
    int rr[1024];   /* reads (at most 500 args or 3 x 150 fused steps), the dst, fused step dsts */
    for (int i = 0; i < g->ncode; i++) {
        Ins *in = &g->code[i];
        int n = in->nargs > 500 || in->nsteps > 150 ? 0 : reads(in, rr);
        for (int k = 0; k < n; k++) last[rr[k]] = i;
        int dst = in->op == I_FUSED ? in->dst : in->dst;
        if (dst >= 0 && first[dst] < 0) first[dst] = i;
        if (in->op == I_FUSED || in->op == I_EPILOGUE)
            for (int k = -1; k < in->nsteps; k++) {   /* -1: an epilogue's product register */
                int d = k < 0 ? (in->op == I_EPILOGUE ? in->c : -1) : in->steps[k].dst < 0 ? -in->steps[k].dst - 1 : -1;
                if (d < 0) continue;
                if (first[d] < 0) first[d] = i;
                if (last[d] < i) last[d] = i;
            }
    }
    /* a value that lives across a loop's back jump lives to the jump. Only registers that an
     * instruction of the loop reads or writes can qualify (an inner loop's extension is
     * inside it too), so each loop visits its own instructions, not every register. */
    int *seen = mem_alloc(sizeof(int) * (size_t)(g->nregs + 1));
    for (int r = 0; r < g->nregs; r++) seen[r] = -1;
    for (int i = 0; i < g->ncode; i++) {
        Ins *in = &g->code[i];
        if (in->op != I_JUMP || in->aux > i) continue;
        int top = in->aux;
        for (int j = top; j <= i; j++) {
            Ins *x = &g->code[j];
            int n = x->nargs > 500 || x->nsteps > 150 ? 0 : reads(x, rr);
            if (x->dst >= 0) rr[n++] = x->dst;
            if (x->op == I_FUSED || x->op == I_EPILOGUE)
                for (int k = 0; k < x->nsteps; k++)
                    if (x->steps[k].dst < 0) rr[n++] = -x->steps[k].dst - 1;
            if (x->op == I_EPILOGUE && x->c >= 0) rr[n++] = x->c;
            for (int k = 0; k < n; k++) {
                int r = rr[k];
                if (seen[r] == i) continue;
                seen[r] = i;
                bool used_inside = last[r] >= top && last[r] <= i;
                bool from_outside = first[r] < top;
                if ((used_inside || (first[r] >= top && first[r] <= i)) && (from_outside || defs[r] > 1) && last[r] < i)
                    last[r] = i;
            }
        }
    }
    mem_free(seen);
}

static bool elementwise(const Graph *g, const Ins *in) {
    int ta, tb, scalar;
    bool num_left;
    return ew_operands(g, in, &ta, &tb, &scalar, &num_left);
}

/* Gives every intermediate tensor register a buffer slot; registers whose lives do not
 * overlap share a slot of the same dtype and shape. An elementwise instruction may take
 * the slot of an operand that dies there (in place). Inputs, loop homes and values the
 * block hands back keep buffers of their own; run-time shapes (cshape.c) get none. */
static int pass_memplan(Graph *g) {
    int n = g->nregs;
    int *uses = mem_alloc(sizeof(int) * (size_t)(n + 1)), *defs = mem_alloc(sizeof(int) * (size_t)(n + 1));
    int *first = mem_alloc(sizeof(int) * (size_t)(n + 1)), *last = mem_alloc(sizeof(int) * (size_t)(n + 1));
    count_uses(g, uses, defs);
    live_ranges(g, first, last, defs);
    bool *pinned = mem_calloc((size_t)n + 1, sizeof(bool));
    for (int i = 0; i < g->nguards; i++)
        if (g->guards[i].reg >= 0) pinned[g->guards[i].reg] = true;
    /* values handed back live past the end */
    int *outs = mem_calloc((size_t)n + 1, sizeof(int));
    for (int i = 0; i < g->noutputs; i++) count_opnd(&g->outputs[i].val, outs);
    if (g->has_result) count_opnd(&g->result, outs);
    for (int i = 0; i < g->ncode; i++)
        for (int k = 0; k < g->code[i].nopnds; k++) count_opnd(&g->code[i].opnds[k], outs);
    int *slot_owner = mem_alloc(sizeof(int) * (size_t)(n + 1));   /* last register given each slot */
    int nslots = 0, shared = 0;
    for (int i = 0; i < g->ncode; i++) {
        Ins *in = &g->code[i];
        int d = in->dst;
        /* an epilogue's result takes a slot like an op's (a layer's output then reuses the
         * buffer of the layer before last, which is still in cache); its other results do not */
        if (d < 0 || g->regs[d].kind != R_TENSOR || in->op == I_TMOVE || in->op == I_SELECT || in->op == I_FUSED || in->op == I_POP) continue;
        if (pinned[d] || defs[d] != 1 || outs[d] || first[d] != i) continue;
        if (graph_ins_runtime(g, in)) continue;   /* a run-time size: the op makes its own result */
        RegInfo *ri = &g->regs[d];
        int pick = -1;
        for (int s = 0; s < nslots && pick < 0; s++) {
            int o = slot_owner[s];
            RegInfo *ro = &g->regs[o];
            if (ro->dtype != ri->dtype || !shape_equal(&ro->shape, &ri->shape)) continue;
            bool dies_here = last[o] == i && elementwise(g, in) && (in->args[0] == o || (in->nargs > 1 && in->args[1] == o));
            if (last[o] < i || dies_here) pick = s;
        }
        if (pick < 0) pick = nslots++;
        else shared++;
        slot_owner[pick] = d;
        ri->slot = pick;
    }
    g->nslots = nslots;
    /* bytes that did not need buffers of their own */
    int64_t own = 0;
    for (int s = 0; s < nslots; s++) {
        RegInfo *ri = &g->regs[slot_owner[s]];
        own += shape_count(&ri->shape) * (int64_t)dtype_size(ri->dtype);
    }
    int64_t all = 0;
    for (int r = 0; r < n; r++)
        if (g->regs[r].slot >= 0) all += shape_count(&g->regs[r].shape) * (int64_t)dtype_size(g->regs[r].dtype);
    g->bytes_saved += all - own;
    mem_free(uses);
    mem_free(defs);
    mem_free(first);
    mem_free(last);
    mem_free(pinned);
    mem_free(outs);
    mem_free(slot_owner);
    return shared;
}

void opt_run(Graph *g) {
    g->ops_before = g->ncode;
    hoist_constants(g);
    if (pass_on("fold")) pass_fold(g);
    if (!g->device_vm && pass_on("takes")) pass_takes(g);   /* indexing runs on the host of a device */
    if (pass_on("cse")) pass_cse(g);
    if (pass_on("dce")) pass_dce(g);
    if (pass_on("licm")) pass_licm(g);
    if (pass_on("epilogue")) pass_epilogue(g);
    if (!g->plain_groups && pass_on("rows")) pass_rows(g);
    if (pass_on("fuse")) pass_fuse(g);
    if (pass_on("mem")) pass_memplan(g);
}
