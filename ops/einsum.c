/* einsum.c - NumPy's einsum lowered to ops (einsum.h): a plan of transposes, reshapes, sums,
 * broadcasts and (batched) matmuls, made from the subscripts and the operands' shapes alone.
 * The eager built-in (lang/tbuiltins.c) runs the plan's ops one by one, recording them on
 * the gradient tape; static code (vm/compile/cbuiltins.c) emits the same ops, so both modes
 * get the same bits, gradients, the GPU and export from the ops' own rows.
 *
 * Lowering: a label repeated within one operand (a diagonal, "ii->i") multiplies by an eye
 * mask and sums one of the two axes; a label that only one operand has and the output lacks
 * is summed at once; the operands are then contracted left to right, each pair as one
 * matmul of [batch, left, contracted] by [batch, contracted, right] (batch: labels both
 * have that are still needed; contracted: both have, no longer needed); the last result is
 * transposed into the output's order. "..." stands for the axes the letters leave, aligned
 * from the right across operands (broadcasting, as NumPy). */
#include <string.h>
#include "einsum.h"
#include "grad.h"

typedef struct {
    int n;                        /* labels (== the slot's rank) */
    char lab[TSL_MAX_RANK];
    Shape shape;
    DType dt;
} Term;

typedef struct {
    EinPlan *p;
    Term *t;                      /* per slot */
    int nslots;
} Planner;

static int ein_fail(const char *msg, int c) {
    if (c) op_fail("einsum(): %s '%c'", msg, c);
    else op_fail("einsum(): %s", msg);
    return -1;
}

static bool has(const Term *t, char c) { return memchr(t->lab, c, (size_t)t->n) != NULL; }
static int where_(const Term *t, char c) {
    const char *p = memchr(t->lab, c, (size_t)t->n);
    return p ? (int)(p - t->lab) : -1;
}

/* Appends a step on slots a, b (-1: none); its result is a new slot with term r. */
static int step(Planner *P, OpCode op, int a, int b, const OpAttrs *at, const Term *r) {
    EinPlan *p = P->p;
    if (p->nsteps == EIN_MAX_STEPS) return ein_fail("too many operands or labels to plan", 0);
    EinStep *s = &p->step[p->nsteps++];
    s->op = op;
    s->in[0] = a;
    s->in[1] = b;
    s->nin = b >= 0 ? 2 : a >= 0 ? 1 : 0;
    s->at = *at;
    P->t[P->nslots] = *r;
    return P->nslots++;
}

static int transpose_to(Planner *P, int s, const char *want, int n) {
    Term r = P->t[s];
    OpAttrs at = attrs_default();
    bool same = true;
    at.naxes = n;
    for (int i = 0; i < n; i++) {
        at.axes[i] = where_(&P->t[s], want[i]);
        r.lab[i] = want[i];
        r.shape.d[i] = P->t[s].shape.d[at.axes[i]];
        same &= at.axes[i] == i;
    }
    return same ? s : step(P, OP_TRANSPOSE, s, -1, &at, &r);
}

static int reshape_to(Planner *P, int s, const Shape *sh, const char *lab, int n) {
    Term r = P->t[s];
    r.shape = *sh;
    r.n = n;
    memcpy(r.lab, lab, (size_t)n);
    if (shape_equal(sh, &P->t[s].shape)) {
        P->t[s] = r;
        return s;
    }
    OpAttrs at = attrs_default();
    at.shape = *sh;
    return step(P, OP_RESHAPE, s, -1, &at, &r);
}

static int sum_axes(Planner *P, int s, const bool *drop) {
    Term r = P->t[s];
    OpAttrs at = attrs_default();
    at.naxes = 0;
    at.flag = false;
    r.n = r.shape.ndim = 0;
    for (int i = 0; i < P->t[s].n; i++) {
        if (drop[i]) {
            at.axes[at.naxes++] = i;
        } else {
            r.lab[r.n++] = P->t[s].lab[i];
            r.shape.d[r.shape.ndim++] = P->t[s].shape.d[i];
        }
    }
    if (!at.naxes) return s;
    if (r.dt == DT_BOOL) r.dt = DT_I64;
    return step(P, OP_SUM, s, -1, &at, &r);
}

/* The diagonal of slot s over axes i < j (same label): s * eye (as s's dtype, shaped to
 * broadcast along i and j), summed over j. */
static int diagonal(Planner *P, int s, int i, int j) {
    Term t = P->t[s], e = { 0 };
    int64_t n = t.shape.d[i];
    OpAttrs at = attrs_default();
    at.i[0] = n;
    e.dt = DT_F32;
    e.n = e.shape.ndim = 2;
    e.shape.d[0] = e.shape.d[1] = n;
    int eye = step(P, OP_EYE, -1, -1, &at, &e);
    if (eye < 0) return -1;
    at = attrs_default();
    at.dtype = (int)t.dt;
    e.dt = t.dt;
    if (t.dt != DT_F32 && (eye = step(P, OP_ASTYPE, eye, -1, &at, &e)) < 0) return -1;
    Shape ms = { .ndim = t.n };
    for (int k = 0; k < t.n; k++) ms.d[k] = k == i || k == j ? n : 1;
    char lab[TSL_MAX_RANK] = { 0 };
    if ((eye = reshape_to(P, eye, &ms, lab, t.n)) < 0) return -1;
    int m = step(P, OP_MUL, s, eye, (OpAttrs[]){ attrs_default() }, &t);
    bool drop[TSL_MAX_RANK] = { false };
    drop[j] = true;
    return m < 0 ? -1 : sum_axes(P, m, drop);
}

static int broadcast_to(Planner *P, int s, const Shape *sh) {
    if (shape_equal(sh, &P->t[s].shape)) return s;
    Term r = P->t[s];
    r.shape = *sh;
    OpAttrs at = attrs_default();
    at.shape = *sh;
    return step(P, OP_BROADCAST_TO, s, -1, &at, &r);
}

/* ---------- parsing ---------- */

/* One operand's subscripts [s, e) into t's labels, "..." as the ellipsis labels 1..E ending
 * at E (right-aligned). Returns 0, or -1. */
static int parse_term(const char *s, const char *e, int ndim, int *ell_max, Term *t, bool output) {
    int nl = 0, at_ell = -1;
    for (const char *c = s; c < e; c++) {
        if (*c == ' ') continue;
        if (*c == '.') {
            if (at_ell >= 0 || e - c < 3 || c[1] != '.' || c[2] != '.') return ein_fail("an ellipsis must be three dots, once per operand", 0);
            at_ell = nl;
            c += 2;
        } else if ((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z')) {
            if (nl == TSL_MAX_RANK) return ein_fail("too many labels in one operand", 0);
            t->lab[nl++] = *c;
        } else {
            return ein_fail("subscripts may hold only letters, ',', '->' and '...', got", *c);
        }
    }
    int ne = output ? (at_ell >= 0 ? *ell_max : 0) : ndim - nl;
    if (!output && (ne < 0 || (ne > 0 && at_ell < 0)))
        return op_fail("einsum(): an operand of rank %d has %d labels", ndim, nl), -1;
    if (at_ell < 0) at_ell = nl;
    if (nl + ne > TSL_MAX_RANK) return ein_fail("too many labels in one operand", 0);
    memmove(t->lab + at_ell + ne, t->lab + at_ell, (size_t)(nl - at_ell));
    for (int k = 0; k < ne; k++) t->lab[at_ell + k] = (char)(EIN_ELL_MAX - ne + 1 + k);
    t->n = nl + ne;
    if (!output && ne > *ell_max) *ell_max = ne;
    return 0;
}

/* The implicit output: "..." first, then the letters used once, in ASCII order. */
static void implicit_output(const Term *t, int n, Term *out) {
    int count[128] = { 0 };
    for (int i = 0; i < n; i++)
        for (int k = 0; k < t[i].n; k++) count[(int)t[i].lab[k]]++;
    out->n = 0;
    for (int c = 1; c < 128; c++)
        if ((c <= EIN_ELL_MAX && count[c]) || (c > EIN_ELL_MAX && count[c] == 1)) out->lab[out->n++] = (char)c;
}

/* ---------- the plan ---------- */

static int contract(Planner *P, int a, int b, const Term *keep) {
    const Term *A = &P->t[a], *Bt = &P->t[b];
    char bat[TSL_MAX_RANK], lef[TSL_MAX_RANK], con[TSL_MAX_RANK], rig[TSL_MAX_RANK];
    int nb = 0, nl = 0, nc = 0, nr = 0;
    for (int i = 0; i < A->n; i++) {
        char c = A->lab[i];
        if (!has(Bt, c)) lef[nl++] = c;
        else if (has(keep, c)) bat[nb++] = c;
        else con[nc++] = c;
    }
    for (int i = 0; i < Bt->n; i++)
        if (!has(A, Bt->lab[i])) rig[nr++] = Bt->lab[i];
    if (nb + nl + nr > TSL_MAX_RANK) return ein_fail("the result has too many axes", 0);
    int64_t size[128] = { 0 };
    for (int i = 0; i < A->n; i++) size[(int)A->lab[i]] = A->shape.d[i];
    for (int i = 0; i < Bt->n; i++) {
        int64_t *z = &size[(int)Bt->lab[i]];
        if (*z == 1 || !*z) *z = Bt->shape.d[i];
    }
    char la[TSL_MAX_RANK], lb[TSL_MAX_RANK], lr[TSL_MAX_RANK];
    memcpy(la, bat, (size_t)nb), memcpy(la + nb, lef, (size_t)nl), memcpy(la + nb + nl, con, (size_t)nc);
    memcpy(lb, bat, (size_t)nb), memcpy(lb + nb, con, (size_t)nc), memcpy(lb + nb + nc, rig, (size_t)nr);
    memcpy(lr, bat, (size_t)nb), memcpy(lr + nb, lef, (size_t)nl), memcpy(lr + nb + nl, rig, (size_t)nr);
    int64_t Bn = 1, Ln = 1, Cn = 1, Rn = 1;
    for (int i = 0; i < nb; i++) Bn *= size[(int)bat[i]];
    for (int i = 0; i < nl; i++) Ln *= size[(int)lef[i]];
    for (int i = 0; i < nc; i++) Cn *= size[(int)con[i]];
    for (int i = 0; i < nr; i++) Rn *= size[(int)rig[i]];
    Shape fa = { .ndim = A->n }, fb = { .ndim = Bt->n }, fr = { .ndim = nb + nl + nr };
    for (int i = 0; i < A->n; i++) fa.d[i] = size[(int)la[i]];
    for (int i = 0; i < Bt->n; i++) fb.d[i] = size[(int)lb[i]];
    for (int i = 0; i < fr.ndim; i++) fr.d[i] = size[(int)lr[i]];
    int sa = transpose_to(P, a, la, A->n);
    if (sa >= 0) sa = broadcast_to(P, sa, &fa);
    int sb = sa >= 0 ? transpose_to(P, b, lb, P->t[b].n) : -1;
    if (sb >= 0) sb = broadcast_to(P, sb, &fb);
    if (sb < 0) return -1;
    char none[TSL_MAX_RANK] = { 0 };
    Shape m3a = { 3, { Bn, Ln, Cn } }, m3b = { 3, { Bn, Cn, Rn } };
    if ((sa = reshape_to(P, sa, &m3a, none, 3)) < 0 || (sb = reshape_to(P, sb, &m3b, none, 3)) < 0) return -1;
    Term r = { .n = 3, .shape = { 3, { Bn, Ln, Rn } } };
    r.dt = P->t[sa].dt > P->t[sb].dt ? P->t[sa].dt : P->t[sb].dt;
    int m = step(P, OP_MATMUL, sa, sb, (OpAttrs[]){ attrs_default() }, &r);
    return m < 0 ? -1 : reshape_to(P, m, &fr, lr, fr.ndim);
}

/* Sums the labels of slot s that are in neither keep nor (when other is set) any operand
 * but the slot's own: which = the slot's operand index, or -1 to use keep only. */
static int sum_unused(Planner *P, int s, const Term *ops, int n, int which, const Term *out) {
    bool drop[TSL_MAX_RANK] = { false };
    for (int i = 0; i < P->t[s].n; i++) {
        char c = P->t[s].lab[i];
        bool used = has(out, c);
        for (int k = 0; k < n && !used; k++) used = k != which && has(&ops[k], c);
        drop[i] = !used;
    }
    return sum_axes(P, s, drop);
}

int einsum_plan(const char *subs, int n, const Shape *shapes, const DType *dts, EinPlan *p) {
    if (n < 1 || n > EIN_MAX_OPERANDS) return op_fail("einsum(): needs 1 to %d operands, got %d", EIN_MAX_OPERANDS, n), -1;
    Term ops[EIN_MAX_OPERANDS], out = { 0 }, slots[EIN_MAX_OPERANDS + EIN_MAX_STEPS];
    const char *arrow = strstr(subs, "->"), *end = arrow ? arrow : subs + strlen(subs), *s = subs;
    int ell = 0;
    for (int i = 0; i < n; i++) {
        const char *comma = memchr(s, ',', (size_t)(end - s));
        const char *e = comma ? comma : end;
        if (i == n - 1 && comma) return ein_fail("more subscripts than operands", 0);
        if (i < n - 1 && !comma) return ein_fail("fewer subscripts than operands", 0);
        memset(&ops[i], 0, sizeof ops[i]);
        if (parse_term(s, e, shapes[i].ndim, &ell, &ops[i], false)) return -1;
        ops[i].shape = shapes[i];
        ops[i].dt = dts[i];
        s = e + 1;
    }
    if (arrow && parse_term(arrow + 2, arrow + strlen(arrow), 0, &ell, &out, true)) return -1;
    if (!arrow) implicit_output(ops, n, &out);
    int64_t size[128] = { 0 };
    for (int i = 0; i < n; i++)
        for (int k = 0; k < ops[i].n; k++) {
            int c = ops[i].lab[k];
            int64_t d = shapes[i].d[k];
            if (size[c] && size[c] != d && size[c] != 1 && d != 1)
                return c > EIN_ELL_MAX ? op_fail("einsum(): label '%c' has lengths %lld and %lld", c, (long long)size[c], (long long)d), -1
                                       : ein_fail("operands' '...' axes do not broadcast", 0);
            if (!size[c] || size[c] == 1) size[c] = d;
        }
    for (int k = 0; k < out.n; k++) {
        if (memchr(out.lab, out.lab[k], (size_t)k)) return ein_fail("the output repeats label", out.lab[k]);
        if (!size[(int)out.lab[k]] && out.lab[k] > EIN_ELL_MAX) return ein_fail("the output has a label no operand has:", out.lab[k]);
    }
    Planner P = { p, slots, n };
    memcpy(slots, ops, sizeof(Term) * (size_t)n);
    p->nsteps = 0;
    int cur = -1;
    for (int i = 0; i < n; i++) {
        int sl = i;
        for (int a = 0; a < P.t[sl].n && sl >= 0; a++)   /* diagonals first */
            for (int b = a + 1; b < P.t[sl].n && sl >= 0; b++)
                if (P.t[sl].lab[a] == P.t[sl].lab[b]) {
                    if (P.t[sl].shape.d[a] != P.t[sl].shape.d[b]) return ein_fail("a repeated label needs equal lengths:", P.t[sl].lab[a]);
                    sl = diagonal(&P, sl, a, b--);
                }
        if (sl >= 0) sl = sum_unused(&P, sl, ops, n, i, &out);
        if (sl < 0) return -1;
        if (cur < 0) {
            cur = sl;
            continue;
        }
        Term keep = out;   /* the output's labels and those of the operands still to come */
        for (int k = i + 1; k < n; k++)
            for (int j = 0; j < ops[k].n; j++)
                if (!has(&keep, ops[k].lab[j]) && keep.n < TSL_MAX_RANK) keep.lab[keep.n++] = ops[k].lab[j];
        if ((cur = contract(&P, cur, sl, &keep)) < 0) return -1;
    }
    if ((cur = sum_unused(&P, cur, ops, 0, -1, &out)) < 0) return -1;
    /* an output axis the operands broadcast (length 1 in every one) keeps its length */
    if ((cur = transpose_to(&P, cur, out.lab, out.n)) < 0) return -1;
    p->result = cur;
    p->nslots = P.nslots;
    return 0;
}
