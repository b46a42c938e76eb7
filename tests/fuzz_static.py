#!/usr/bin/env python3
"""fuzz_static.py - differential fuzzing of static code against eager execution (spec sections 6, 7, 12).

Writes random but valid TSL programs whose interesting part runs in a `static { }` block (at top
level or inside a function) or as a `static fn`, and runs each three ways (tensor code, control
flow, lists and dicts, gradients of tensors and of nested dicts/lists with loops and branches and
signed zeros, and section 12's methods, tensor methods, nil axes, comprehensions, del/pop,
try/catch/raise/error, strings, format and sorted):
    tsl --no-static P      tsl P      tsl --verify-static P
Standard output, the exit status and the error report (FILE:LINE:COL: error: MESSAGE, the source
line, the caret and the traceback; warnings skipped) must be identical; a signal or a sanitizer report is a failure too. Results are printed
with tolist() and format(.., ".17g") so that a difference in one bit shows.

Usage: fuzz_static.py [--seeds N] [--start S] [--tsl bin/tsl] [--keep DIR] [--show SEED] [-q] [--no-regress]
  (run with nice on a shared machine; 60 seeds take about 10 s)
  --show SEED   print the program for SEED and exit (to minimise a failure by hand)
  --keep DIR    write each failing program to DIR/fail_SEED.tsl
Exit status 1 when any seed fails. Needs only the standard library (no NumPy)."""
import argparse, os, random, re, subprocess, sys, tempfile

UNARY = ["tanh", "sigmoid", "relu", "abs", "exp", "sin", "cos", "floor", "round", "sign", "neg",
         "sqrt_abs", "log_abs", "square"]
BINOP = ["+", "-", "*", "/"]
# seeds past the default range whose programs once found a bug, run with every run (they are
# this generator's programs: a change to it changes them, so re-check they still reach it)
REGRESS_SEEDS = [159,    # a loop home given a gradient on one side of a branch in the body (cgrad.c)
                 231,    # a rule run on zeros where a later branch gave its result no gradient (cgrad.c)
                 1023,   # a -0 gradient after a branch side that gave nothing (cgrad.c)
                 1313,   # an argument error caught in static code: the same traceback as eagerly (no callee frame)
                 1491,   # a loop home not used after the loop: its rules ran on zeros (cgrad.c)
                 50548]  # L[7] after pushes replayed as out of range under an "at least" guard (chost.c)
REDUCE = ["sum", "mean", "max", "min", "prod", "logsumexp", "var", "std"]


def shp(s):
    return "[" + ", ".join(str(d) for d in s) + "]"


def run_calls(r, params, results):
    """The calls of a program's run(...) (a fn holding a static block, or a static fn) and the
    prints of what it returns: twice with n0 (the second replays the compiled code), then, half
    the time, with other numbers (guards recompile, run-time numbers do not)."""
    call = "res = run(%s)" % ", ".join(params + ["n0"])
    show = ["print(\"%s\", tolist(res[%d]))" % (v, j) for j, v in enumerate(results)]
    lines = [call, call] + show
    if r.random() < 0.5:
        lines += ["res = run(%s)" % ", ".join(params + ["n0 + 1"])] + show
    return lines + ["print(\"acc\", format(res[-1], \".17g\"))"]


class Gen:
    """One program: a set of f32 tensor variables with known shapes and number variables, then
    a block of statements over them. Every expression is built for a target shape, so every
    program is well-typed except where an error is planted on purpose."""

    def __init__(self, rng):
        self.r = rng
        self.tvars = {}      # name -> shape (f32 tensors)
        self.nvars = []      # number variables (guards or run-time numbers)
        self.ivars = {}      # name -> length of a 1-D i64 tensor with values in [0, 3)
        self.lists = {}      # name -> number of tensor elements of shape [2]
        self.depth = 0
        self.fresh = 0
        self.loopvars = []   # loop variables in scope (run-time numbers >= 0)
        self.big = False
        self.fns = []        # helper function definitions (text)
        self.fn_names = []   # helper names taking one [*] tensor, returning the same shape

    def name(self, p):
        self.fresh += 1
        return "%s%d" % (p, self.fresh)

    def dim(self):
        if self.big and self.r.random() < 0.15:   # past SIMD widths and fused-kernel tails
            return self.r.choice([8, 17, 33, 67])
        return self.r.choice([1, 2, 3, 4])

    def shape(self):
        s = [self.r.choice([1, 2, 3, 4]) for _ in range(self.r.choice([0, 1, 1, 2, 2, 2, 3]))]
        if self.big and s:   # one large axis: bounded size, but enough for vector loops
            s[self.r.randrange(len(s))] = self.r.choice([16, 33, 65, 130])
        return s

    # ---- expressions -------------------------------------------------------------------
    def num(self):
        r = self.r
        if self.nvars and r.random() < 0.4:
            return r.choice(self.nvars)
        return r.choice(["0.5", "2", "1.5", "3", "0.25", "-1", "0.1", "7"])

    def leaf(self, s):
        r = self.r
        cands = [v for v, vs in self.tvars.items() if vs == s]
        if cands and r.random() < 0.85:
            return r.choice(cands)
        # a broadcast of a smaller variable, or a constructor
        k = r.random()
        if k < 0.3:
            return "full(%s, %s)" % (shp(s), self.num())
        if k < 0.5 and s:
            cands = [v for v, vs in self.tvars.items() if vs == s[1:]]
            if cands:
                return "broadcast_to(%s, %s)" % (r.choice(cands), shp(s))
        if k < 0.7:
            n = 1
            for d in s:
                n *= d
            return "reshape(arange(%d, dtype=\"f32\") / %d, %s)" % (n, max(n, 1) + 1, shp(s))
        return "(ones(%s) * %s)" % (shp(s), self.num())

    def expr(self, s):
        """An f32 expression of shape s."""
        r = self.r
        if self.depth > 3 or r.random() < 0.25:
            return self.leaf(s)
        self.depth += 1
        try:
            return self.compound(s)
        finally:
            self.depth -= 1

    def compound(self, s):
        r = self.r
        k = r.randrange(21)
        if k == 0:
            u = r.choice(UNARY)
            e = self.expr(s)
            if u == "neg":
                return "(-%s)" % e
            if u == "sqrt_abs":
                return "sqrt(abs(%s))" % e
            if u == "log_abs":
                return "log(abs(%s) + 1)" % e
            if u == "square":
                return "((%s) ** 2)" % e
            if r.random() < 0.3:          # tensor method form (spec section 12)
                return "(%s).%s()" % (e, u)
            return "%s(%s)" % (u, e)
        if k in (1, 2):
            op = r.choice(BINOP)
            a = self.expr(s)
            if r.random() < 0.3:
                b = self.num()
            elif s and r.random() < 0.3:
                b = self.expr(s[r.randrange(len(s)):])   # broadcasts a suffix
            else:
                b = self.expr(s)
            if op == "/":
                b = "(abs(%s) + 1)" % b if not b[0].isdigit() and not b[0] == "-" else b
            if r.random() < 0.5:
                a, b = b, a
                if op == "/":
                    b = "(abs(%s) + 1)" % b
            return "(%s %s %s)" % (a, op, b)
        if k == 3:     # reduction with axis / keepdims
            f = r.choice(REDUCE)
            if len(s) >= 3 or r.random() < 0.2:
                if not s:
                    return "%s(%s)" % (f, self.expr([r.randint(1, 3), 2]))
            ax = r.randint(0, len(s))
            kd = r.random() < 0.4
            src = list(s)
            if kd and s:
                ax = r.randrange(len(s))
                if s[ax] != 1:
                    return self.leaf(s)
                src[ax] = self.dim()
            else:
                kd = False
                src.insert(ax, self.dim())
            axis = ax if r.random() < 0.5 else ax - len(src)
            if f == "logsumexp":
                return "logsumexp(%s, axis=%d%s)" % (self.expr(src), axis, ", keepdims=true" if kd else "")
            if r.random() < 0.3:          # the method form (spec section 12)
                return "(%s).%s(axis=%d%s)" % (self.expr(src), f, axis, ", keepdims=true" if kd else "")
            return "%s(%s, axis=%d%s)" % (f, self.expr(src), axis, ", keepdims=true" if kd else "")
        if k == 4 and len(s) in (1, 2):     # matmul
            kk = self.dim()
            if len(s) == 2:
                return "(%s @ %s)" % (self.expr([s[0], kk]), self.expr([kk, s[1]]))
            return "matmul(%s, %s)" % (self.expr([s[0], kk]), self.expr([kk]))
        if k == 5:     # where with a comparison
            c = r.choice(["<", ">", "<=", ">=", "==", "!="])
            return "where(%s %s %s, %s, %s)" % (self.expr(s), c, self.num(), self.expr(s),
                                                 self.expr(s) if r.random() < 0.6 else self.num())
        if k == 6 and s:   # slice a bigger tensor along axis 0 (constant or run-time bounds)
            big = list(s)
            extra = r.randint(0, 2)
            big[0] += extra
            lo = r.randint(0, extra)
            if self.nvars and r.random() < 0.3:
                return "%s[%d:%d]" % (self.expr(big), lo, lo + s[0])
            if r.random() < 0.3 and s[0] == 1:
                return "%s[%d:%d]" % (self.expr(big), lo, lo + 1)
            return "%s[%d:%d]" % (self.expr(big), lo, lo + s[0])
        if k == 7:     # integer index into a bigger tensor
            d = self.dim()
            if self.loopvars and r.random() < 0.5:   # a run-time index
                return "%s[%s %% %d]" % (self.expr([d] + s), r.choice(self.loopvars), d)
            if self.loopvars and s and s[0] == 1 and r.random() < 0.5:   # a run-time slice
                lv = r.choice(self.loopvars)
                return "%s[%s %% %d:%s %% %d + 1]" % (self.expr([d] + s[1:]), lv, d, lv, d)
            i = r.randrange(d)
            if r.random() < 0.3:
                i = i - d
            return "%s[%d]" % (self.expr([d] + s), i)
        if k == 8 and len(s) >= 2:    # transpose
            if r.random() < 0.5:
                return "(%s).T" % self.expr(list(reversed(s)))
            return "transpose(%s)" % self.expr(list(reversed(s)))
        if k == 9 and s:       # reshape from a different shape of the same size
            n = 1
            for d in s:
                n *= d
            src = r.choice([[n], [1, n], [n, 1]])
            if r.random() < 0.3:
                return "(%s).reshape(%s)" % (self.expr(src), shp(s))
            return "reshape(%s, %s)" % (self.expr(src), shp([-1] + s[1:]) if r.random() < 0.3 else shp(s))
        if k == 10 and s:      # concat along an axis
            ax = r.randrange(len(s))
            if s[ax] >= 2:
                a = list(s); b = list(s)
                a[ax] = r.randint(1, s[ax] - 1)
                b[ax] = s[ax] - a[ax]
                return "concat([%s, %s], axis=%d)" % (self.expr(a), self.expr(b), ax)
        if k == 11 and s and s[0] in (2, 3):   # stack
            return "stack([%s], axis=0)" % ", ".join(self.expr(s[1:]) for _ in range(s[0]))
        if k == 12:    # clip / maximum / minimum
            f = r.choice(["maximum", "minimum", "clip"])
            if f == "clip":
                return "clip(%s, -0.5, 0.75)" % self.expr(s)
            return "%s(%s, %s)" % (f, self.expr(s), self.expr(s))
        if k == 13 and self.fn_names:   # helper call (inlined in static code)
            return "%s(%s)" % (r.choice(self.fn_names), self.expr(s))
        if k == 14 and s and self.ivars:   # gather with an i64 tensor
            iv, n = r.choice(list(self.ivars.items()))
            if s[0] == n:
                return "%s[%s]" % (self.expr([3] + s[1:]), iv)
        if k == 15 and len(s) == 2:   # softmax
            return "%s(%s, axis=%d)" % (r.choice(["softmax", "log_softmax"]), self.expr(s), r.choice([-1, 0, 1]))
        if k == 16 and s and r.random() < 0.4:   # a normalisation over the last axis (row groups)
            e = self.expr(s)
            return ("((%s - mean(%s, axis=-1, keepdims=true)) / sqrt(var(%s, axis=-1, keepdims=true) + 1e-5))"
                    % (e, e, e))
        if k == 16 and r.random() < 0.3:   # through f64 and back
            return "astype(astype(%s, \"f64\") * 1.1 + 0.5, \"f32\")" % self.expr(s)
        if k == 16 and s:      # cumsum / expand_dims / squeeze
            if r.random() < 0.5:
                return "cumsum(%s, axis=%d)" % (self.expr(s), r.randrange(len(s)))
            ax = r.randrange(len(s) + 1)
            inner = list(s)
            return "squeeze(expand_dims(%s, %d), %d)" % (self.expr(inner), ax, ax)
        if k == 17 and s:      # a reversed axis, or a new axis taken away again
            if r.random() < 0.5:
                return "%s[::-1]" % self.expr(s)
            return "%s[0]" % ("(%s)[nil]" % self.expr(s))
        if k == 18 and s:      # sort / cumprod along the last axis
            f = r.choice(["sort(%s, axis=-1)", "sort(%s, axis=-1, descending=true)", "cumprod(%s * 0.5, axis=-1)"])
            return f % self.expr(s)
        if k == 20 and s:      # nil new axes (spec section 12): taken away again, or an outer product
            if len(s) == 2 and r.random() < 0.4:
                return "((%s)[:, nil] * (%s)[nil])" % (self.expr(s[:1]), self.expr(s[1:]))
            return r.choice(["(%s)[:, nil].sum(axis=1)", "(%s)[..., nil].mean(axis=-1)",
                             "(%s)[nil, ..., nil][0, ..., 0]"]) % self.expr(s)
        if k == 19 and s and s[-1] >= 2:   # the largest values along the last axis, then padded back
            kk = r.randint(1, s[-1] - 1)
            w = [[0, 0] for _ in s]
            w[-1] = [0, s[-1] - kk]
            return "pad(topk(%s, %d)[0], %s)" % (self.expr(s), kk, str(w))
        return self.leaf(s)

    def scalar(self):
        """A one-element f32 expression computed from tensor data."""
        v, s = self.r.choice(list(self.tvars.items()))
        f = self.r.choice(["sum", "mean", "max", "min"])
        return "%s(%s)" % (f, self.expr(s) if self.r.random() < 0.4 else v)

    # ---- statements ----------------------------------------------------------------------
    def assign(self, ind):
        r = self.r
        if self.tvars and r.random() < 0.6:
            v, s = r.choice(list(self.tvars.items()))
        else:
            v, s = self.name("t"), self.shape()
        line = "%s%s = %s" % (ind, v, self.expr(s))
        self.tvars[v] = s
        return [line]

    def stmt(self, ind, loop=False, depth=0):
        r = self.r
        k = r.randrange(51)
        if k < 7 or depth >= 2:
            if k == 0 and loop:
                return ["%s%s" % (ind, r.choice(["break", "continue"]))] if r.random() < 0.3 else self.assign(ind)
            return self.assign(ind)
        if k == 7:   # if on a number (bytecode branch)
            n = self.num()
            return (["%sif %s > 1 {" % (ind, n)] + self.block(ind, loop, depth) +
                    ["%s} else {" % ind] + self.block(ind, loop, depth) + ["%s}" % ind])
        if k == 8:   # if on tensor data
            c = self.scalar()
            op = r.choice([">", "<", ">="])
            cond = "%s %s %s" % (c, op, self.num())
            if r.random() < 0.3:
                cond = "item(%s) %s %s" % (c, op, self.num())
            out = ["%sif %s {" % (ind, cond)] + self.block(ind, loop, depth)
            if r.random() < 0.6:
                out += ["%s} else {" % ind] + self.block(ind, loop, depth)
            return out + ["%s}" % ind]
        if k == 9:   # for over a range (guard or run-time count)
            i = self.name("i")
            n = r.choice(["3", "2", "n0", "len(L)"])
            self.loopvars.append(i)
            body = self.block(ind, True, depth)
            self.loopvars.pop()
            # the loop variable used as a number inside the body
            if self.tvars:
                v, s = r.choice(list(self.tvars.items()))
                body.insert(0, "%s  %s = %s * 0.5 + %s" % (ind, v, v, i))
            return ["%sfor %s in range(%s) {" % (ind, i, n)] + body + ["%s}" % ind]
        if k == 10:  # while with a data-dependent condition and a counter
            c = self.name("c")
            v, s = r.choice(list(self.tvars.items()))
            body = self.block(ind, True, depth)
            return (["%s%s = 0" % (ind, c),
                     "%swhile %s < 3 and sum(abs(%s)) < 1000 {" % (ind, c, v),
                     "%s  %s = %s + 1" % (ind, c, c),
                     "%s  %s = %s * 1.5 + 0.25" % (ind, v, v)] + body + ["%s}" % ind])
        if k == 11:  # list push / index assignment
            if r.random() < 0.5:
                return ["%spush(L, %s)" % (ind, self.expr([2]))]
            return ["%sL[%d] = %s" % (ind, r.randrange(2), self.expr([2]))]
        if k == 12:  # dict field
            f = r.choice(["a", "b"])
            if r.random() < 0.5:
                return ["%sD.%s = D.%s * 0.5 + %s" % (ind, f, f, self.expr([2]))]
            return ["%sD[\"%s\"] = %s" % (ind, f, self.expr([2]))]
        if k == 13:  # print inside the block
            v, s = r.choice(list(self.tvars.items()))
            k = r.randrange(3)
            if k == 0:
                return ["%sprint(\"p\", %s, format(%s, \".9g\"))" % (ind, v, v)]
            if k == 1:
                return ["%sprint(\"p\", format(item(sum(%s)), \".17g\"), str(%s))" % (ind, v, v)]
            return ["%sprint(format(item(sum(%s)), \".9g\"), str(%s))" % (ind, v, self.num())]
        if k == 14:  # randn inside the block
            v = self.name("r")
            s = self.shape()
            self.tvars[v] = s
            f = r.choice(["randn", "rand"])
            return ["%s%s = %s(%s)" % (ind, v, f, shp(s))]
        if k == 15 and self.grads:  # grad / value_and_grad of a small function with a loop
            gname, gshape = r.choice(self.grads)
            cands = [v for v, vs in self.tvars.items() if vs == gshape]
            if cands or r.random() < 0.7:
                x = r.choice(cands) if cands and r.random() < 0.6 else self.expr(gshape)
                if r.random() < 0.5:
                    v = self.name("g")
                    self.tvars[v] = gshape
                    return ["%s%s = grad(%s)(%s)" % (ind, v, gname, x)]
                v = self.name("g")
                w = self.name("val")
                self.tvars[v] = gshape
                return ["%s%s = value_and_grad(%s)(%s)" % (ind, w, gname, x),
                        "%s%s = %s[1]" % (ind, v, w),
                        "%sprint(\"v\", format(item(%s[0]), \".17g\"))" % (ind, w)]
        if k == 16:  # number computed from tensor data, then used
            v = self.name("m")
            return ["%s%s = item(%s)" % (ind, v, self.scalar()),
                    "%sacc = acc + %s" % (ind, v)]
        if k == 17:  # assert that holds
            v, s = r.choice(list(self.tvars.items()))
            return ["%sassert(not (sum(abs(%s)) < 0), \"nonneg\")" % (ind, v)]
        if k == 18:  # element assignment into a tensor
            cands = [(v, s) for v, s in self.tvars.items() if s]
            if cands:
                v, s = r.choice(cands)
                i = r.randrange(s[0])
                return ["%s%s[%d] = %s" % (ind, v, i, self.expr(s[1:]))]
        if k == 19:  # augmented assignment
            v, s = r.choice(list(self.tvars.items()))
            return ["%s%s %s= %s" % (ind, v, r.choice(["+", "-", "*"]), self.expr(s))]
        if k == 20 and r.random() < self.err_rate:   # a planted error
            return [self.error_stmt(ind)]
        if k == 22 and r.random() < 0.3:  # try/catch (static code with one may run eagerly)
            inner = self.stmt(ind + "  ", loop, depth + 1) if r.random() < 0.5 else [self.error_stmt(ind + "  ")]
            self.tvars = {k2: v2 for k2, v2 in self.tvars.items() if not any(l.strip().startswith(k2 + " ") for l in inner)} or self.tvars
            return (["%stry {" % ind] + inner + ["%s} catch e {" % ind, "%s  print(\"caught\", e.message, e.line, e.col)" % ind,
                     "%s}" % ind])
        if k == 23:  # for over a list
            v = self.name("it")
            w, sw = r.choice(list(self.tvars.items()))
            out = ["%sfor %s in L {" % (ind, v)]
            if sw and sw[-1] == 2:
                out.append("%s  %s = %s + %s" % (ind, w, w, v))
            else:
                out.append("%s  acc = acc + item(sum(%s))" % (ind, v))
            return out + ["%s}" % ind]
        if k == 24:  # a comprehension
            v, sv = r.choice(list(self.tvars.items()))
            w = self.name("cp")
            self.tvars[w] = [2] + sv
            return ["%s%s = stack([%s * (j + 1) for j in range(2)])" % (ind, w, v)]
        if k == 25:  # i64 / bool tensors
            v, sv = r.choice(list(self.tvars.items()))
            w = self.name("iv")
            return ["%s%s = astype(floor(clip(%s, -3, 3) * 2), \"i64\")" % (ind, w, v),
                    "%s%s = %s + (%s > 0) * 2 - %s // 2" % (ind, w, w, v, w),
                    "%sacc = acc + item(sum(%s)) + item(sum(%s %% 3))" % (ind, w, w),
                    "%sprint(\"i\", %s, any(%s == 1), all(%s != 0))" % (ind, w, w, v)]
        if k == 26 and not loop and r.random() < 0.5:   # nested loops, the inner one left early
            i, j = self.name("i"), self.name("j")
            v, sv = r.choice(list(self.tvars.items()))
            return ["%sfor %s in range(n0) {" % (ind, i),
                    "%s  for %s in range(3) {" % (ind, j),
                    "%s    if %s + %s > 2 { break }" % (ind, i, j),
                    "%s    if item(sum(%s)) < -3 { continue }" % (ind, v),
                    "%s    %s = %s * 0.75 + %s * 0.25" % (ind, v, v, j),
                    "%s  }" % ind, "%s}" % ind]
        if k == 26:  # break on tensor data inside a loop
            if loop:
                v, sv = r.choice(list(self.tvars.items()))
                return ["%sif item(max(%s)) > %s { break }" % (ind, v, r.choice(["0.5", "2", "5"]))]
        if k == 27:  # dict field augmented assignment, list element from a run-time index
            if self.loopvars:
                return ["%sD.b += L[%s %% 2]" % (ind, r.choice(self.loopvars))]
            return ["%sD.a *= %s" % (ind, self.expr([2]))]
        if k == 28:  # a closure that keeps state (cnt lives in mk's frame)
            return ["%sacc = acc + tick() * 0.5" % ind]
        if k == 29:  # string built in the block
            v, sv = r.choice(list(self.tvars.items()))
            return ["%sTXT[0] = TXT[0] + format(item(sum(%s)), \".3e\") + \";\"" % (ind, v)]
        if k == 30:  # list aliasing: a store through another name
            return ["%sM[-1] = M[0] * 0.5 + %s" % (ind, self.expr([2]))]
        if k == 31:  # number arithmetic with run-time numbers
            v, sv = r.choice(list(self.tvars.items()))
            return ["%sz = item(mean(%s))" % (ind, v),
                    "%sacc = acc * 0.5 + z / 3 - z %% 0.7 + (z // 0.3) + abs(z) ** 0.5" % ind]
        if k == 32 and self.loopvars and r.random() < self.err_rate * 3:   # a run-time index that fails late
            return ["%sacc = acc + item(sum(L[%s * 2]))" % (ind, r.choice(self.loopvars))]
        if k == 33:  # a static fn called from static code
            v, sv = r.choice(list(self.tvars.items()))
            return ["%s%s = sfn(%s, %s)" % (ind, v, v, self.num())]
        if k == 34:  # for over a tensor's rows
            cands = [(v, sv) for v, sv in self.tvars.items() if sv]
            if cands:
                v, sv = r.choice(cands)
                w = self.name("row")
                return ["%sfor %s in %s {" % (ind, w, v), "%s  acc = acc + item(sum(%s * %s))" % (ind, w, w), "%s}" % ind]
        if k == 35:  # a dict comprehension over the program's dict, then a new key in it
            w = self.name("dc")
            return ["%s%s = {k: D[k] * 2 for k in keys(D) if k != \"zz\"}" % (ind, w),
                    "%sD.c = %s.a + %s.b" % (ind, w, w),
                    "%sacc = acc + item(sum(D.c))" % ind]
        if k == 36:  # list built in the block: insert, extend, del, pop
            w = self.name("lb")
            v, sv = r.choice(list(self.tvars.items()))
            return ["%s%s = [%s, %s * 2]" % (ind, w, v, v),
                    "%sinsert(%s, 0, %s + 1)" % (ind, w, v),
                    "%sextend(%s, [%s * 3])" % (ind, w, v),
                    "%sdel %s[1]" % (ind, w),
                    "%s%s = pop(%s) - %s[0] + %s[-1]" % (ind, v, w, w, w)]
        if k == 37:  # string built-ins on known strings
            return ["%spush(S, join(split(upper(\"a b c\")), \"-\") + str(len(S)))" % ind]
        if k == 38:  # a static fn with a recursion its guard bounds
            v, sv = r.choice(list(self.tvars.items()))
            return ["%s%s = rec(%s, 2)" % (ind, v, v)]
        if k >= 39:
            out = self.stmt_v3(ind, k, loop)
            if out:
                return out
        if k == 21:  # string formatting of a result
            v, s = r.choice(list(self.tvars.items()))
            return ["%spush(S, \"%s=\" + format(item(mean(%s)), \".9g\"))" % (ind, v, v)]
        return self.assign(ind)

    def stmt_v3(self, ind, k, loop):
        """The language comforts of spec section 12 and gradients of dicts and lists (section 7)."""
        r = self.r
        v, sv = r.choice(list(self.tvars.items()))
        if k == 39:  # methods: self is the dict; a plain function field is called as written
            w = self.name("mo")
            self.tvars[w] = sv
            return [r.choice(["%s%s = OBJ.f(%s)" % (ind, w, v), "%s%s = OBJ.g(%s, OBJ.s) - OBJ.f(%s)" % (ind, w, v, v)]),
                    "%sacc = acc + OBJ.bump()" % ind]
        if k == 40:  # nil in an assignment target
            if sv and r.random() < 0.5:
                return ["%s%s[:, nil] = %s" % (ind, v, self.expr(sv[1:]))]
            return ["%s%s[nil] = %s" % (ind, v, self.expr(sv))]
        if k == 41:  # a nested comprehension with a condition; its loop variable is its own
            w, cj = self.name("cp"), self.name("cj")
            self.tvars[w] = [4] + sv
            return ["%s%s = 5" % (ind, cj),
                    "%s%s = stack([%s * (%s + j) for %s in range(2) for j in range(3) if %s != j])" % (ind, w, v, cj, cj, cj),
                    "%sacc = acc + %s" % (ind, cj)]
        if k == 42:  # comprehensions over lists and dicts, sorted, strings
            return r.choice([
                ["%spush(S, str(sorted([item(sum(t)) for t in L if item(sum(t)) > -1], reverse=true)))" % ind]
                if r.random() < 0.3 else ["%spush(S, str(sorted([j * 3 %% 5 for j in range(n0 + 2)], reverse=true)))" % ind],
                ["%spush(S, join(sorted([str(i) + k for i in range(2) for k in keys(D)]), \",\"))" % ind],
                ["%spush(S, replace(lower(\"A-B\"), \"-\", \"+\") + str(find(\"abc\", \"c\")) + str(startswith(strip(\" ab\"), \"a\")))" % ind],
                ["%spush(S, join(sorted(keys(D), key=fn(k) { return -len(k) }), \"\"))" % ind] if r.random() < 0.2 else
                ["%spush(S, format(item(sum(%s)), \"+.6e\") + format(item(max(%s)), \">12,.2f\"))" % (ind, v, v)],
                ["%spush(S, format(%s, \".3f\"))" % (ind, v)]])
        if k == 43:  # del and pop on a dict, del on a list
            w = self.name("lb")
            return r.choice([
                ["%sD.tmp = %s * 2" % (ind, v), "%sacc = acc + item(sum(D.tmp))" % ind, "%sdel D.tmp" % ind],
                ["%sD[\"t2\"] = %s" % (ind, v), "%sdel D[\"t2\"]" % ind],
                ["%sD.c = %s" % (ind, v), "%s%s = {k + str(i): D[k] * i for i in range(2) for k in keys(D) if k != \"b\"}" % (ind, w),
                 "%s%s = %s.c1 + %s.a0 - pop(D, \"c\")" % (ind, v, w, w)],
                ["%s%s = pop(D, \"zz\", %s) * 0.5" % (ind, v, v)] if r.random() < 0.3 else   # runs eagerly
                ["%sD.c = %s" % (ind, v), "%s%s = pop(D, \"c\") * 0.5" % (ind, v)],
                ["%s%s = [%s, %s * 2, %s * 3]" % (ind, w, v, v, v), "%sdel %s[%d]" % (ind, w, r.choice([0, -1, 1])),
                 "%s%s = %s[0] + %s[-1] * len(%s)" % (ind, v, w, w, w)]])
        if k == 44:  # try/catch in static code: the error kind, message and place; raise(e)
            kind = r.choice(["value", "user", "shape", "index"])
            msg = "\"boom\" + str(n0)" if r.random() < 0.3 else "\"boom\""   # a run-time message: eager
            body = r.choice([["error(%s, kind=\"%s\")" % (msg, kind)],
                             ["%s = %s * 2" % (v, v), "assert(sum(%s) > 1e30, \"planted\")" % v],
                             ["L[7] = %s" % v], ["del D.nokey"]])
            handler = ["print(\"caught\", e.kind, e.message, e.line, e.col)", "acc = acc + 1"]
            if self.err_rate and r.random() < 0.3:
                handler.append("if e.kind != \"%s\" { raise(e) }" % kind)
            return (["%stry {" % ind] + ["%s  %s" % (ind, b) for b in body] + ["%s} catch e {" % ind] +
                    ["%s  %s" % (ind, h) for h in handler] + ["%s}" % ind])
        if k == 45 and sv == [2]:  # gradient w.r.t. a flat dict, then an optimizer-like update
            g = self.name("gp")
            out = ["%s%s = grad(lossp)(P, %s)" % (ind, g, v)]
            if r.random() < 0.5:
                return out + ["%sfor k in keys(P) { P[k] = P[k] - 0.1 * %s[k] }" % (ind, g)]
            return out + ["%sOPT.step(P, %s)" % (ind, g)]
        if k == 46 and sv == [2]:  # gradient w.r.t. nested dicts and lists with non-float leaves
            g = self.name("gq")
            return ["%s%s = grad(lossq)(Q, %s)" % (ind, g, v),
                    "%sprint(\"gq\", %s.a[0], %s.a[1], %s.d.e, %s.d.k, %s.d.nm)" % ((ind,) + (g,) * 5)]
        if k == 47 and self.grads:  # a gradient as text (signed zeros show)
            gname, gshape = r.choice(self.grads)
            cands = [w for w, ws in self.tvars.items() if ws == gshape]
            g = self.name("gz")
            x = r.choice(cands) if cands and r.random() < 0.6 else self.expr(gshape)
            return ["%s%s = grad(%s)(%s * %s)" % (ind, g, gname, x, r.choice(["1", "40", "-3", "0"])),
                    "%sprint(\"gz\", %s, format(item(sum(%s)), \".17g\"))" % (ind, g, g)]
        if k == 49 and sv == [2] and r.random() < 0.4:   # a dict field and a list item stored, then changed
            i = self.name("i")
            return ["%sfor %s in range(%s) {" % (ind, i, r.choice(["2", "3"])),
                    "%s  %s = %s" % (ind, r.choice(["D.a", "L[0]", "M[1]"]), v),
                    "%s  %s = %s * 1.5 + 1" % (ind, v, v), "%s}" % ind]
        if k == 49:  # a list and a variable holding a value the loop body changes after (loop homes)
            w, u, i = self.name("al"), self.name("av"), self.name("i")
            self.tvars[u] = sv
            return ["%s%s = %s" % (ind, u, v), "%sfor %s in range(%s) {" % (ind, i, r.choice(["2", "3"])),
                    "%s  %s = [%s, %s * 2]" % (ind, w, v, v), "%s  %s = %s" % (ind, u, v),
                    "%s  %s = %s * 1.5 + %s[1]" % (ind, v, v, w), "%s}" % ind,
                    "%sacc = acc + item(sum(%s[0] - %s))" % (ind, w, u)]
        if k == 48 and sv:  # tensor methods with keywords and attributes
            return ["%sacc = acc + item(%s.abs().max()) + %s.ndim + %s.size + %s.shape[0]" % (ind, v, v, v, v)]
        return None

    def error_stmt(self, ind):
        r = self.r
        v, s = r.choice(list(self.tvars.items()))
        k = r.randrange(9)
        if k == 0:
            return "%s%s = %s + ones(%s)" % (ind, self.name("e"), v, shp([5, 7]))
        if k == 5:
            return "%sdel D.nokey" % ind
        if k == 6:   # section 12's errors: a missing key, a method's arity, an unknown tensor method
            return "%s%s = pop(D, \"nokey\")" % (ind, self.name("e"))
        if k == 7:
            return "%s%s = OBJ.f(%s, %s)" % (ind, self.name("e"), v, v)
        if k == 8:
            return "%s%s = %s.sumx()" % (ind, self.name("e"), v)
        if k == 1:
            return "%s%s = %s[%d]" % (ind, self.name("e"), v if s else "reshape(%s, [1])" % v, 9)
        if k == 2:
            return "%s%s = L[7]" % (ind, self.name("e"))
        if k == 3:
            return "%s%s = D.zz" % (ind, self.name("e"))
        return "%sassert(sum(%s) > 1e30, \"planted\")" % (ind, v)

    def block(self, ind, loop, depth):
        saved = dict(self.tvars)
        out = []
        for _ in range(self.r.randint(1, 3)):
            out += self.stmt(ind + "  ", loop, depth + 1)
        # a variable first bound inside a branch may be unset after it: forget it
        self.tvars = {k: v for k, v in self.tvars.items() if k in saved}
        for k in saved:
            self.tvars.setdefault(k, saved[k])
        return out

    # ---- the program -------------------------------------------------------------------------
    def helpers(self):
        r = self.r
        self.grads = []
        for j in range(r.randint(0, 2)):
            nm = "h%d" % j
            body = r.choice(["return tanh(x) * 0.5 + x * x * 0.25",
                             "y = x\n  for k in range(2) { y = sigmoid(y) + x * 0.5 }\n  return y",
                             "if sum(x) > 0 { return x * 2 }\n  return relu(x) - 1",
                             "return %s(x + 1)" % (self.fn_names[-1] if self.fn_names else "abs")])
            self.fns.append("fn %s(x) {\n  %s\n}" % (nm, body))
            self.fn_names.append(nm)
        for j in range(r.randint(0, 3) if r.random() < 0.5 else 3):
            nm = "f%d" % j
            s = r.choice([[3], [2, 2], [2, 3]])
            body = r.choice([
                "y = x\n  for k in range(3) { y = tanh(y * 1.5 + x) }\n  return sum(y * y)",
                "y = x\n  k = 0\n  while sum(y) < 4 and k < 5 { y = y * 1.5 + 0.5; k = k + 1 }\n  return sum(y)",
                "if sum(x) > 0 { return sum(exp(x) * x) }\n  return mean(sigmoid(x) * 3)",
                "y = x\n  for k in range(n0) { if k == 1 { continue }\n    y = y * x }\n  return sum(y) + max(x)",
                "return logsumexp(x) + sum(softmax(reshape(x, [-1])) * arange(%d))" % (s[0] * (s[1] if len(s) > 1 else 1)),
                "return sum(x @ transpose(x)) * 0.1" if len(s) == 2 else "return dot(x, x)",
                "d = {w: x, k: 2}\n  for j in range(2) { d.w = d.w * sigmoid(d.w) + j }\n  return sum(d.w) / d.k",
                "l = [x]\n  for j in range(n0) { push(l, l[-1] * 0.5 + x) }\n  return sum(stack(l) ** 2)",
                # signed zeros: saturated tanh gives exact -0/+0 contributions; a side or a loop
                # that gives x nothing (eager's none), then one that does
                "t = tanh(x * 40)\n  if sum(x) > 0 { r = sum(x * 0) } else { r = sum(t ** 2) }\n  return r",
                "t = tanh(x * 40) ** 2\n  y = t * 1\n  for k in range(n0) { if sum(x) > 0 { y = y + x } else { y = y * 2 } }\n  return sum(y)",
                "y = x * 0\n  for k in range(n0) { if k == 1 { y = y - tanh(x * 40) ** 2 } }\n  return sum(y * x) + sum(relu(x) * 0)",
                "y = x[:, nil] * x[nil]\n  return sum(y[..., nil] * tanh(x * 40)) + sum(x[nil, ..., nil] ** 2)",
                "d = {w: x, n: [x * 2, x]}\n  return sum(d.n[0] * d.w) + sum(tanh(d.n[-1] * 40) ** 2)",
                # a value whose gradient comes from one side of a later branch only
                "t = tanh(x * 40) ** 2\n  y = x * 1\n  if sum(x) > 0 { r = sum(y) } else { r = sum(t) }\n  return r",
                "t = tanh(x * 40) ** 2\n  y = x * 1\n  for k in range(n0) { if sum(x) > 0 { y = y + x } else { y = y * 2 } }\n"
                "  if sum(x) > 0 { r = sum(y) } else { r = sum(t) }\n  return r",
                "t = tanh(x * 40) ** 2\n  y = x * 1\n  for k in range(n0) { if k == n0 - 1 { y = t * 1 } else { y = y * 2 } }\n"
                "  return sum(y)",
                "t = tanh(x * 40) ** 2\n  y = x * 1\n  for k in range(n0) { y = y * 2 }\n  return sum(t)",
            ])
            self.fns.append("fn %s(x) {\n  %s\n}" % (nm, body))
            self.grads.append((nm, s))

    def program(self, seed):
        r = self.r
        self.err_rate = 0.15 if r.random() < 0.3 else 0.0
        self.big = r.random() < 0.35
        lines = ["seed(%d)" % seed]
        for j in range(r.randint(2, 4)):
            v = "x%d" % j
            s = self.shape()
            self.tvars[v] = s
            lines.append("%s = %s(%s)" % (v, r.choice(["randn", "randn", "rand"]), shp(s)))
        for g in [[3], [2, 2], [2, 3]]:
            if r.random() < 0.3:
                v = self.name("x")
                self.tvars[v] = g
                lines.append("%s = randn(%s)" % (v, shp(g)))
        n0 = r.randint(0, 4)
        lines.append("n0 = %d" % n0)
        self.nvars = ["n0", "q"]
        lines.append("q = %s" % r.choice(["0.5", "1.25", "-2", "3"]))
        if r.random() < 0.5:
            iv = self.name("ix")
            n = r.randint(1, 4)
            lines.append("%s = randint(0, 3, [%d])" % (iv, n))
            self.ivars[iv] = n
        lines.append("L = [randn([2]), randn([2])]")
        lines.append("D = {a: randn([2]), b: ones([2])}")
        lines.append("S = []")
        lines.append("TXT = [\"\"]")
        lines.append("M = L")
        lines.append("fn mk() {\n  cnt = 0\n  return fn() {\n    cnt = cnt + 1\n    return cnt\n  }\n}")
        lines.append("tick = mk()")
        lines.append("fn rec(t, d) {\n  if d == 0 { return t }\n  return rec(t * 0.5, d - 1) + t\n}")
        lines.append("static fn sfn(t, k) {\n  if sum(t) > k { return t * 0.5 }\n  return t + 1\n}")
        lines.append("acc = 0")
        # spec section 12's methods; a model's parameters as dicts and lists (section 7)
        lines.append("OBJ = {s: 0.5, n: 0, f: fn(self, t) { return t * self.s + 1 },\n"
                     "  bump: fn(self) {\n    self.n = self.n + 1\n    return self.n\n  },\n  g: fn(t, k) { return t * k }}")
        lines.append("OPT = {lr: 0.1, step: fn(self, p, g) { for k in keys(p) { p[k] = p[k] - self.lr * g[k] } }}")
        lines.append("P = {w: randn([2]), b: randn([2])}")
        lines.append("Q = {a: [randn([2]), randn([3])], d: {e: randn([2]), k: 3, nm: \"q\"}}")
        lines.append("fn lossp(p, t) { return sum(tanh(p.w * t * 20 + p.b) ** 2) }")
        lines.append("fn lossq(q, t) {\n  return sum(q.a[0] * t) + sum(tanh(q.a[1] * 40) ** 2) + sum(q.d.e * q.a[0]) * q.d.k\n}")
        self.helpers()
        lines += self.fns
        outer = dict(self.tvars)
        body = []
        around = self.err_rate and r.random() < 0.4   # a try around the static code (spec section 12)
        n = r.randint(2, 7)
        fails_at = r.randrange(n + 1) if around and r.random() < 0.7 else -1
        for j in range(n + 1):
            if j == fails_at:
                body.append(self.error_stmt("  "))
            if j < n:
                body += self.stmt("  ")
        mode = r.choice(["top", "fn", "sfn"])
        results = sorted(self.tvars)
        params = sorted(outer)
        # after the handler the program goes on and prints every variable: static code that
        # fails partway leaves eager's state (vm/static.c runs it again eagerly to the error)
        handler = ["} catch e {", "  print(\"failed\", e.kind, e.message, e.line, e.col, len(e.traceback))", "}"]
        if mode == "top":
            lines += (["try {"] if around else []) + ["static {"] + body + ["}"] + (handler if around else [])
            lines += ["print(\"%s\", tolist(%s))" % (v, v) for v in results]
        elif mode == "fn":
            lines += ["fn run(%s) {" % ", ".join(params + ["n0"]), "  acc = 0", "  static {"]
            lines += ["  " + b for b in body] + ["  }"]
            lines.append("  return [%s, acc]" % ", ".join(results))
            lines.append("}")
            lines += ["try {"] + run_calls(r, params, results) + handler if around else run_calls(r, params, results)
        else:
            lines.append("static fn run(%s) {" % ", ".join(params + ["n0"]))
            lines.append("  acc = 0")
            lines += body
            lines.append("  return [%s, acc]" % ", ".join(results))
            lines.append("}")
            lines += ["try {"] + run_calls(r, params, results) + handler if around else run_calls(r, params, results)
        lines.append("print(\"L\", tolist(stack(L[0:2])), len(L), \"D\", tolist(D.a), tolist(D.b), S)")
        if mode == "top":
            lines.append("print(\"acc\", format(acc, \".17g\"))")
        lines.append("print(\"txt\", TXT[0], tick())")
        lines.append("print(\"P\", tolist(P.w), tolist(P.b), OBJ.n, keys(D))")
        lines.append("print(\"rng\", tolist(randn([2])))")
        return "\n".join(lines) + "\n"


def gen_program(seed):
    return Gen(random.Random(seed)).program(seed)


def run(tsl, mode, path):
    cmd = [tsl] + ([mode] if mode else []) + [path]
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    except subprocess.TimeoutExpired:
        return ("timeout", "", "")
    # the error, its source line and caret, and the traceback (a warning is one line)
    err = [l for l in p.stderr.splitlines() if not re.match(r"^\S+:\d+:\d+: warning: ", l)]
    first = "\n".join(err)
    if "Sanitizer" in p.stderr or "runtime error:" in p.stderr:
        first = "SANITIZER: " + first
    return (p.returncode, p.stdout, first)


def check(tsl, seed, tmpdir):
    src = gen_program(seed)
    path = os.path.join(tmpdir, "p%d.tsl" % seed)
    with open(path, "w") as f:
        f.write(src)
    res = {m: run(tsl, m, path) for m in ["--no-static", "", "--verify-static"]}
    eager = res["--no-static"]
    problems = []
    for m, got in res.items():
        rc = got[0]
        if rc not in (0, 1) or got[2].startswith("SANITIZER"):
            problems.append("%s: exit %s %s" % (m or "default", rc, got[2]))
        elif got != eager:
            what = "stdout" if got[1] != eager[1] else "exit/error"
            problems.append("%s differs from eager (%s): %s | eager: %s" % (m or "default", what, got[2] or got[0], eager[2] or eager[0]))
    os.unlink(path)
    return src, problems


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", type=int, default=200)
    ap.add_argument("--start", type=int, default=1)
    ap.add_argument("--tsl", default="bin/tsl")
    ap.add_argument("--keep")
    ap.add_argument("--show", type=int)
    ap.add_argument("-q", action="store_true")
    ap.add_argument("--no-regress", dest="regress", action="store_false", help="skip REGRESS_SEEDS")
    a = ap.parse_args()
    if a.show is not None:
        sys.stdout.write(gen_program(a.show))
        return 0
    bad = 0
    with tempfile.TemporaryDirectory() as tmp:
        extra = [s for s in REGRESS_SEEDS if not a.start <= s < a.start + a.seeds] if a.regress else []
        for seed in list(range(a.start, a.start + a.seeds)) + extra:
            src, problems = check(a.tsl, seed, tmp)
            if problems:
                bad += 1
                print("seed %d:" % seed)
                for p in problems:
                    print("   ", p)
                if a.keep:
                    os.makedirs(a.keep, exist_ok=True)
                    with open(os.path.join(a.keep, "fail_%d.tsl" % seed), "w") as f:
                        f.write(src)
    if not a.q or bad:
        print("%d seeds, %d failed" % (a.seeds + len(extra), bad))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
