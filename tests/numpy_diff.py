#!/usr/bin/python3
"""numpy_diff.py - differential test of every tensor op of ops/ops.def against NumPy.

Usage: /usr/bin/python3 tests/numpy_diff.py [--tsl bin/tsl] [--count N] [--seed S]
                                            [--ops REGEX] [--keep DIR] [-v]

The op list, signatures, kinds, flags, dtype rules and operator symbols are read from
ops/ops.def (a regex over its OP(...) rows); nothing here lists the ops except REF, the
NumPy reference of each op (an op of ops.def without an entry in REF makes the run FAIL).
For each op, --count random cases (default $NUMPY_DIFF_COUNT or 16) are built from the
signature's parameter types: shapes up to rank 5 with size-0 and size-1 axes (now and then
a few thousand elements), negative axes, axis lists, keepdims both ways, keyword and
positional arguments, operands that are views (reversed, strided, transposed), values with
NaN, +-inf, -0.0, subnormals and overflow edges where the op takes them; the binary
elementwise ops get at least 31 cases: every dtype pair of f32 f64 i64 bool, then each
dtype against an integral, a non-integral and a bool number (weak scalars, either side),
and three number-number cases (for the ops that map numbers to numbers). The expected dtype follows spec section 5 (PyTorch's promotion),
not NumPy's: NumPy computes the value (in the compute dtype, or in float64 and rounded) and
the result must have exactly the spec's dtype; values are compared exactly (bits, with the
sign of zero where NumPy defines it) for exact ops, within a few ULP for the math functions
(SLEEF u10), within an error bound computed from the inputs for reductions, matmul and
LAPACK.

Transport: the inputs are written as .npy files; ONE TSL program per run loads them
(load_npy), calls each op (a third of the calls inside `static { }`, some with run-time
number inputs) and save_npy's each result; it is run twice: plainly and with
--verify-static (eager and static compared bit for bit by TSL; the two runs' files are
compared too). An unexpected error stops the program: the case at the error's line is
recorded and the program reruns from the next case. Cases where NumPy raises or the spec
says "error" (i64 // 0, max over an empty axis, NaN to i64, singular matrices, shape
mismatches...) are run as separate tiny programs, eagerly and in a static block: each must
fail with exit status 1, a located error, and the same message both ways.

rand/randn/randint have no NumPy counterpart: they are not compared (their dtype, shape and
range are checked), and counted as skipped.

Differences TSL is known to have are listed in KNOWN_DIFFERENCES, one entry per issue with
a comment and a pinned reproducer that runs every time: a difference no entry explains fails
the run, and so does an entry whose reproducer stops reproducing (the bug was fixed: remove
the entry).
"""
import argparse
import math
import os
import re
import random
import shutil
import subprocess
import sys
import tempfile
import time
import warnings
import zlib
from concurrent.futures import ThreadPoolExecutor

try:
    import numpy as np
except ImportError:
    print("FAIL: numpy_diff: %s has no numpy: install python3-numpy (`make` installs it as root)" % sys.executable)
    sys.exit(2)

warnings.simplefilter("ignore")
np.seterr(all="ignore")

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# ---------------------------------------------------------------------------------------
# ops/ops.def

OP_RE = re.compile(
    r'^OP\(\s*(\w+)\s*,\s*"([^"]*)"\s*,\s*"([^"]*)"\s*,\s*(\d+)\s*,\s*(\w+)\s*,\s*([\w |]+?)\s*,'
    r'\s*(\w+)\s*,\s*(\w+)\s*,\s*(NULL|"[^"]*")\s*,\s*"((?:[^"\\]|\\.)*)"\s*\)\s*$', re.M)
PARAM_TYPES = {"T", "T?", "Ts", "N", "axis", "axes", "bool", "int", "f", "shape", "shape-", "pairs", "redop", "dtype",
               "win", "pad"}


class Param:
    def __init__(self, text):
        m = re.fullmatch(r"(\w+):([\w?|-]+)(?:=(.*))?", text.strip())
        if not m or (m.group(2) not in PARAM_TYPES and "|" not in m.group(2)):   # a|b: one of the names
            raise SystemExit("FAIL: numpy_diff: cannot parse parameter %r of ops.def" % text)
        self.name, self.type, self.default = m.group(1), m.group(2), m.group(3)
        self.required = self.default is None


class Op:
    def __init__(self, m):
        self.id, self.name, sig, nout, self.kind, flags, self.rule, self.impl, sym, self.doc = m.groups()
        self.params = [Param(p) for p in sig.split(",")] if sig.strip() else []
        self.nout = int(nout)
        self.flags = set(f.strip() for f in flags.split("|")) - {"0"}
        self.symbol = None if sym == "NULL" else sym.strip('"')
        self.syntax_only = "F_SYNTAX" in self.flags
        self.call_as = None   # a row reached through another's choice: (name, keyword), set below

    def operands(self):
        return [p for p in self.params if p.type in ("T", "T?", "Ts")]


def parse_opsdef(path):
    text = open(path).read()
    rows = [l for l in text.splitlines() if l.startswith("OP(")]
    ops = [Op(m) for m in OP_RE.finditer(text)]
    if len(ops) != len(rows) or not ops:
        raise SystemExit("FAIL: numpy_diff: parsed %d of the %d OP( rows of %s; update OP_RE" % (len(ops), len(rows), path))
    for op in (o for o in ops if o.syntax_only and not o.symbol):   # gelu_tanh is gelu(x, approximate="tanh")
        for o in ops:
            for p in o.params:
                if "|" in p.type and op.name.startswith(o.name + "_") and op.name[len(o.name) + 1:] in p.type.split("|"):
                    op.call_as = (o.name, '%s="%s"' % (p.name, op.name[len(o.name) + 1:]))
    return ops

# ---------------------------------------------------------------------------------------
# dtypes and spec section 5 promotion

DTYPES = ["f32", "f64", "i64", "bool"]
NPT = {"f32": np.float32, "f64": np.float64, "i64": np.int64, "bool": np.bool_}
ORDER = ["bool", "i64", "f32", "f64"]
I64MIN, I64MAX = -2**63, 2**63 - 1


def dt_of(a):
    return {np.dtype(np.float32): "f32", np.dtype(np.float64): "f64",
            np.dtype(np.int64): "i64", np.dtype(np.bool_): "bool"}[a.dtype]


class Num:
    """A TSL number or bool (a weak scalar when it meets a tensor)."""
    def __init__(self, v):
        self.v = v

    def integral(self):
        v = self.v
        return isinstance(v, bool) or (math.isfinite(v) and v == math.floor(v))

    def __repr__(self):
        return "Num(%r)" % (self.v,)


def is_num(x):
    return isinstance(x, Num)


def promote(vals):
    """The dtype spec section 5 gives tensors and numbers combined; 'number' when no tensor."""
    ts = [dt_of(v) for v in vals if isinstance(v, np.ndarray)]
    if not ts:
        return "number"
    d = max(ts, key=ORDER.index)
    for v in vals:
        if is_num(v) and d in ("bool", "i64") and not isinstance(v.v, bool):
            d = "i64" if v.integral() and -2.0**63 <= v.v < 2.0**63 else "f32"
    return d


def floatify(d):
    return "f32" if d in ("bool", "i64") else d


def cast(v, d):
    """A tensor or number as an array of dtype d (numbers round to nearest)."""
    if d == "number":
        d = "f64"
    if is_num(v):
        return np.array(v.v, dtype=NPT[d])
    return v.astype(NPT[d])


def f64(v):
    return cast(v, "f64")


class Raise(Exception):
    """The spec (or NumPy) says this call is an error."""

# ---------------------------------------------------------------------------------------
# random inputs


# near where exp, exp2, sinh, sigmoid... overflow or underflow in f32 and f64
EDGES = [88.7, -88.7, 89.5, -87.5, -97.0, -104.0, 709.8, -709.8, -720.0, -745.0, 128.5, -149.5,
         1024.5, -1074.5, 1e-8, -1e-8, 1e-20, 0.75, 1.0e4]


class Gen:
    def __init__(self, seed):
        self.k = 99   # the index of the case being made (plans may go through combinations)
        self.r = random.Random(seed)
        self.n = np.random.default_rng(seed)

    def chance(self, p):
        return self.r.random() < p

    def pick(self, xs):
        return xs[self.r.randrange(len(xs))]

    def dim(self, zero=True):
        return self.pick([0, 1, 1, 2, 2, 3, 3, 4, 5] if zero else [1, 1, 2, 2, 3, 3, 4, 5])

    def shape(self, rmin=0, rmax=5, maxsize=96, zero=True):
        rank = self.pick([r for r in [0, 1, 1, 2, 2, 2, 3, 3, 4, 5] if rmin <= r <= rmax] or [rmin])
        if maxsize >= 96 and rank and self.chance(0.06):   # now and then a big one: vector loops, tails, blocks
            maxsize = self.pick([300, 1100, 2100, 4500])
            s = [self.r.randint(1, 70) for _ in range(min(rank, 3))]
            while int(np.prod(s)) > maxsize:
                s[int(np.argmax(s))] //= 2
            return tuple(s)
        s = [self.dim(zero and self.chance(0.35)) for _ in range(rank)]
        while int(np.prod(s)) > maxsize:
            i = int(np.argmax(s))
            s[i] -= 1
        return tuple(s)

    def bshape(self, s):
        """A shape that broadcasts with s (maybe of higher rank)."""
        out = list(s[len(s) - self.r.randint(0, len(s)):]) if s else []
        for i in range(len(out)):
            if self.chance(0.3):
                out[i] = 1
        if len(out) == len(s) and len(s) < 5 and self.chance(0.2):
            out = [self.pick([1, 2, 3])] + out
        return tuple(out)

    def dtype(self, choices=DTYPES):
        return self.pick(list(choices))

    def floats(self, n, dtype, vk):
        big = {"f32": [1e30, 3.0e38, 1.5e38], "f64": [1e200, 1.7e308, 1e30]}[dtype]
        tiny = {"f32": [1e-40, 3e-39, 1e-30], "f64": [1e-310, 3e-320, 1e-200]}[dtype]
        out = np.empty(n, dtype=np.float64)
        for i in range(n):
            c = self.r.random()
            if vk == "moderate":
                c = c * 0.7
            if c < 0.30:
                x = self.n.normal() * self.pick([1, 1, 3, 10, 100])
            elif c < 0.45:
                x = float(self.r.randint(-6, 6))
            elif c < 0.55:
                x = self.r.randint(-6, 6) + 0.5
            elif c < 0.70:
                x = self.r.uniform(-1, 1)
            elif c < 0.80:
                x = self.pick([0.0, -0.0, 1.0, -1.0, 0.5, 2.0]) if self.chance(0.7) else \
                    self.pick(EDGES) * (1 + self.r.uniform(-0.01, 0.01) * self.chance(0.5))
            elif c < 0.88 or vk in ("finite", "moderate"):
                x = self.pick(big) * self.pick([1, -1]) if vk != "moderate" and self.chance(0.5) else \
                    self.pick(tiny) * self.pick([1, -1])
            else:
                x = self.pick([math.nan, math.inf, -math.inf, -0.0, 0.0])
            out[i] = x
        return out.astype(NPT[dtype])

    def values(self, shape, dtype, vk="any"):
        n = int(np.prod(shape)) if shape else 1
        if dtype == "bool":
            a = self.n.random(n) < self.pick([0.5, 0.5, 0.1, 0.9])
        elif dtype == "i64":
            if vk == "moderate":
                a = self.n.integers(-5, 6, n)
            else:
                a = self.n.integers(-12, 13, n)
                for i in range(n):
                    c = self.r.random()
                    if c < 0.06:
                        a[i] = self.r.randint(-10**6, 10**6)
                    elif c < 0.10 and vk == "any":
                        a[i] = self.pick([I64MIN, I64MAX, 2**62, -2**62, 2**31, -2**53 - 1])
            a = a.astype(np.int64)
        else:
            a = self.floats(n, dtype, "any" if vk == "any" and self.chance(0.8) else
                            ("finite" if vk == "any" else vk))
        return a.reshape(shape)

    def tensor(self, shape=None, dtype=None, vk="any", **kw):
        if shape is None:
            shape = self.shape(**kw)
        return self.values(shape, dtype or self.dtype(), vk)

    def number(self, kind="any"):
        if kind == "float":
            v = self.number("any")
            if v.integral() and self.chance(0.7):
                v = Num(self.pick([2.5, -0.5, 0.1, math.nan, math.inf, -math.inf, 1e300, -3.75]))
            return Num(float(v.v)) if isinstance(v.v, bool) else v
        if kind == "int":
            return Num(float(self.pick([0, 1, 2, 3, -1, -4, 7, 100])))
        if kind == "bool":
            return Num(self.pick([True, False]))
        if kind == "cmp" and self.chance(0.3):   # beyond i64 and f32, between integers
            return Num(self.pick([2.0**63, -2.0**63, 1e19, -1e19, 9007199254740993.0, 4611686018427387904.5,
                                  16777217.0, 0.1, -2.5, 3.4028235677973366e38, 1e39]))
        if kind == "cmp":
            kind = "any"
        pool = [0.0, -0.0, 1.0, -1.0, 2.0, 3.0, -7.0, 0.5, 2.5, -3.5, 0.1, -0.3, 1e10, 1e300, -3e38,
                math.nan, math.inf, -math.inf, True, False, 123456789.0, 4.0e9]
        v = self.pick(pool) if self.chance(0.8) else round(self.n.normal() * 5, self.r.randint(0, 4))
        return Num(v)

    def axis(self, ndim, extra=0):
        return self.r.randint(-ndim - extra, ndim - 1 + extra)

    def axes(self, ndim, single=False):
        c = self.r.random()
        if c < 0.25 or ndim == 0:
            return None if ndim else self.pick([None, None, []])
        if c < 0.6 or single:
            return self.axis(ndim)
        k = self.r.randint(0, ndim)
        ax = self.r.sample(range(ndim), k)
        return [a - ndim if self.chance(0.4) else a for a in ax]

# ---------------------------------------------------------------------------------------
# tolerances


class Tol:
    """exact: bits (sign of zero too, unless zsign is off); ulp: k units in the last place
    of the expected value; bound: |got - want| <= k * eps * bound, the bound computed by the
    reference from the inputs (plus k ULP)."""
    def __init__(self, kind, k=0, zsign=True):
        self.kind, self.k, self.zsign = kind, k, zsign


EXACT = Tol("exact")
EXACT_NOZ = Tol("exact", zsign=False)


def ULP(k, zsign=False):
    return Tol("ulp", k, zsign)


def BOUND(k):
    return Tol("bound", k, False)


def compare(got, want, tol, bound=None):
    """None when got matches want, else a short description of the first difference."""
    if got.shape != want.shape:
        return "shape %s, want %s" % (list(got.shape), list(want.shape))
    if got.size == 0:
        return None
    if got.dtype.kind != "f":
        bad = got != want
    else:
        g, w = got.astype(np.float64), want.astype(np.float64)
        gn, wn = np.isnan(g), np.isnan(w)
        if tol.kind == "exact":
            bad = (g != w) & ~(gn & wn)
        else:
            if tol.kind == "ulp":
                allow = tol.k * np.spacing(np.abs(want)).astype(np.float64)
            else:
                eps = float(np.finfo(want.dtype).eps)
                bnd = np.broadcast_to(bound, want.shape)
                allow = tol.k * eps * bnd + 4 * np.spacing(np.abs(want)).astype(np.float64)
            with np.errstate(all="ignore"):
                diff = np.abs(g - w)
                bad = ~(diff <= allow) & ~(g == w)
            bad |= gn != wn
            bad &= ~(gn & wn)
            if tol.kind == "bound":   # where some order of the sum overflows, any order's result goes
                bad &= ~(bnd > float(np.finfo(want.dtype).max) / 4)
        if tol.zsign:
            bad |= (w == 0) & (g == 0) & (np.signbit(g) != np.signbit(w))
    if not bad.any():
        return None
    idx = tuple(int(i) for i in np.argwhere(bad)[0])
    return "%d of %d elements differ, first at %s: got %s, want %s" % (
        int(bad.sum()), got.size, list(idx), fmt_elem(got[idx]), fmt_elem(want[idx]))


def fmt_elem(x):
    x = x.item() if hasattr(x, "item") else x
    if isinstance(x, float):
        return "-0.0" if x == 0 and math.copysign(1, x) < 0 else repr(x)
    return repr(x)

# ---------------------------------------------------------------------------------------
# argument plans (which arguments a case passes) - per family of ops


def P(op):
    return {p.name: p for p in op.params}


def plan_unary(g, op, ref):
    x = op.params[0].name
    if "F_NUM" in op.flags and g.chance(0.12):
        v = g.number("int" if op.rule == "DR_INT" else "float")
        if op.rule in ("DR_INT", "DR_BOOL") and g.chance(0.3):
            v = g.number("bool")
        args = {x: v}
    else:
        args = {x: g.tensor(dtype=g.dtype(ref.dtypes), vk=ref.vk)}
    for p in op.params[1:]:
        if p.type == "int" and g.chance(0.5):
            args[p.name] = g.r.randint(-2, 3)
    return args


def plan_binary(g, op, ref):
    a, b = [p.name for p in op.params[:2]]
    s = g.shape()
    s2 = g.bshape(s)
    if g.chance(0.5):
        s, s2 = s2, s
    if g.chance(0.015) and s and s[-1] > 1:
        s2 = s2[:-1] + (s[-1] + 1,) if s2 else (s[-1] + 1,)   # a shape mismatch
    da, db = g.dtype(ref.dtypes), g.dtype(ref.dtypes)
    numk = "int" if op.rule == "DR_INT" else ("cmp" if op.kind == "K_COMPARE" else "any")
    c = g.r.random()
    # the first cases go through every dtype pair, then every dtype against each kind of number
    pairs = [(x, y) for x in ref.dtypes for y in ref.dtypes]
    k = g.k
    if k < len(pairs):
        da, db = pairs[k]
        c = 0
    elif k < len(pairs) + 3 * len(ref.dtypes):
        j = k - len(pairs)
        da = ref.dtypes[j % len(ref.dtypes)]
        numk = ["int", "float", "bool"][j // len(ref.dtypes)]
        c = 0.7 if g.chance(0.5) else 0.85
    elif k < len(pairs) + 3 * len(ref.dtypes) + 3:
        c = 0.97   # two numbers
    if c < 0.62:
        args = {a: g.tensor(s, da, ref.vk), b: g.tensor(s2, db, ref.bvk or ref.vk)}
    elif c < 0.78:
        args = {a: g.tensor(s, da, ref.vk), b: g.number(numk)}
    elif c < 0.94 or not ("F_NUM" in op.flags or op.symbol):
        args = {a: g.number(numk), b: g.tensor(s, da, ref.bvk or ref.vk)}
    else:
        args = {a: g.number(numk), b: g.number(numk)}
        if any(isinstance(v.v, bool) for v in args.values()) and op.rule not in ("DR_BOOL", "DR_INT"):
            args = {a: Num(float(args[a].v)), b: Num(float(args[b].v))}
    return args


def plan_clip(g, op, ref):
    t, lo, hi = [p.name for p in op.params]
    s = g.shape()
    args = {t: g.tensor(s, g.dtype(), "any")}
    for k in (lo, hi):
        c = g.r.random()
        if c < 0.25:
            args[k] = None if g.chance(0.5) else "omit"
        elif c < 0.65:
            args[k] = g.number()
        else:
            args[k] = g.tensor(g.bshape(s), g.dtype(), "any")
    return {k: v for k, v in args.items() if not (isinstance(v, str) and v == "omit")}


def plan_where(g, op, ref):
    c, a, b = [p.name for p in op.params]
    s = g.shape()
    args = {c: g.tensor(g.bshape(s), "bool" if g.chance(0.85) else g.dtype())}
    if g.chance(0.08):
        args[c] = g.number("bool")
    for k in (a, b):
        args[k] = g.number() if g.chance(0.3) else g.tensor(g.bshape(s), g.dtype())
    if is_num(args[a]) and is_num(args[b]):
        args[a] = g.tensor(s, g.dtype())
    return args


def plan_astype(g, op, ref):
    t, d = [p.name for p in op.params]
    src, dst = g.dtype(), g.dtype()
    vk = "any"
    a = g.tensor(dtype=src, vk=vk)
    if dst == "i64" and src in ("f32", "f64") and not g.chance(0.08):
        a = np.where(np.isfinite(a) & (np.abs(a) < 2.0**62), a, np.array(0.5, a.dtype)).astype(a.dtype)
    return {t: a, d: dst}


def plan_reduce(g, op, ref):
    t, ax, kd = [p.name for p in op.params]
    dt = g.dtype()
    vk = "any" if (ref.specials and g.chance(0.3)) else "moderate"
    if dt == "i64" and ref.intext and g.chance(0.3):
        vk = "any"
    a = g.tensor(dtype=dt, vk=vk)
    args = {t: a}
    axes = g.axes(a.ndim, single=ref.single_axis)
    if ref.single_axis and isinstance(axes, list):
        axes = (axes[:1] or None) if not (g.chance(0.1) and len(axes) > 1) else axes
    if g.chance(0.03):   # an error: an axis out of range, or one twice
        axes = a.ndim if not a.ndim or g.chance(0.5) else [0, -a.ndim]
    if axes is not None or g.chance(0.5):
        args[ax] = axes
    if g.chance(0.6):
        args[kd] = g.chance(0.5)
    return args


def plan_axis_op(g, op, ref):
    """softmax, cumsum, sort, diff...: a tensor and one axis (plus the op's other params)."""
    pm = P(op)
    t = op.params[0].name
    a = g.tensor(dtype=g.dtype(ref.dtypes), vk=ref.vk, rmin=1)
    if ref.dups and g.chance(0.6) and a.dtype != np.bool_:
        pool = g.values((4,), dt_of(a), ref.vk)
        a = pool[g.n.integers(0, 4, a.shape)] if a.size else a
    args = {t: a}
    for p in op.params[1:]:
        if p.type == "axis":
            if p.default is None or g.chance(0.7):
                args[p.name] = g.axis(a.ndim) if not g.chance(0.02) else g.pick([a.ndim, -a.ndim - 1])
        elif p.type == "bool":
            if g.chance(0.7):
                args[p.name] = g.chance(0.5)
        elif p.type == "int" and p.name == "k":
            pass
    if "k" in pm:
        ax = args.get("axis", -1)
        n = a.shape[ax] if -a.ndim <= ax < a.ndim else 1
        args["k"] = g.r.randint(0, n) if not g.chance(0.03) else n + 1
    return args


def plan_unique(g, op, ref):
    a = g.tensor(vk="any")
    if a.size and g.chance(0.7) and a.dtype != np.bool_:
        pool = g.values((4,), dt_of(a), "any")
        a = pool[g.n.integers(0, 4, a.shape)]
    return {op.params[0].name: a}


def plan_one_hot(g, op, ref):
    lab, n = [p.name for p in op.params]
    k = g.r.randint(0, 5)
    s = g.shape(rmax=3) if k else (0,)
    a = g.n.integers(0, max(k, 1), s).astype(np.int64)
    if g.chance(0.03) and a.size:
        a.flat[0] = g.pick([k, -1])
    return {lab: a, n: k}


def plan_tile(g, op, ref):
    t, reps = [p.name for p in op.params]
    a = g.tensor(maxsize=24)
    r = [g.r.randint(0, 3) for _ in range(g.r.randint(1, a.ndim + 1))]
    return {t: a, reps: r if len(r) > 1 or g.chance(0.5) else r[0]}


def plan_repeat(g, op, ref):
    t, n, ax = [p.name for p in op.params]
    a = g.tensor(maxsize=40)
    args = {t: a, n: g.r.randint(0, 3)}
    if a.ndim and g.chance(0.6):
        args[ax] = g.axis(a.ndim)
    elif g.chance(0.3):
        args[ax] = None
    return args


def plan_pad(g, op, ref):
    t, w, v = [p.name for p in op.params]
    a = g.tensor(rmin=1, rmax=4, maxsize=40)
    args = {t: a, w: [[g.r.randint(0, 2), g.r.randint(0, 2)] for _ in range(a.ndim)]}
    if g.chance(0.6):
        d = dt_of(a)
        args[v] = g.number() if d in ("f32", "f64") else \
            (Num(float(g.r.randint(-3, 3))) if d == "i64" else Num(float(g.r.randint(0, 1))))
    return args


def plan_take(g, op, ref):
    names = [p.name for p in op.params]
    t = g.tensor(maxsize=40)
    n = t.size
    s = g.shape(rmax=3, maxsize=24) if n else (0,)
    idx = g.n.integers(-n, n, s).astype(np.int64) if n else np.zeros(s, np.int64)
    if g.chance(0.03) and idx.size:
        idx.flat[0] = g.pick([n, -n - 1])
    args = {names[0]: t, names[1]: idx}
    if op.name == "scatter_add":
        args[names[2]] = g.pick([lambda: g.number(), lambda: g.tensor(shape=s), lambda: g.tensor(shape=(1,))])()
    return args


def plan_matmul(g, op, ref):
    names = [p.name for p in op.params]
    a, b = names[:2]
    m, k, n = g.dim(), g.dim(), g.dim()
    form = g.pick(["vv", "mv", "vm", "mm", "mm", "bb"] if ref.batched else ["vv", "mv", "vm", "mm", "mm", "sv"])
    if form == "vv":
        sa, sb = (k,), (k,)
    elif form == "mv":
        sa, sb = (m, k), (k,)
    elif form == "vm":
        sa, sb = (k,), (k, n)
    elif form == "mm":
        sa, sb = (m, k), (k, n)
    elif form == "sv":
        sa, sb = (), g.shape(rmax=2)
    else:
        ba = g.shape(rmin=1, rmax=2, maxsize=6)
        bb = g.bshape(ba)
        sa, sb = ba + (m, k), bb + (k, n)
        if g.chance(0.3):
            sa = (m, k)
        if g.chance(0.2):
            sa = (k,)
    if g.chance(0.5):
        sa, sb = (sb, sa) if form == "sv" else (sa, sb)
    if g.chance(0.02) and len(sb) >= 1:
        sb = (sb[0] + 1,) + sb[1:]
    vk = "any" if g.chance(0.15) else "moderate"
    ta = len(names) > 2 and len(sa) >= 2 and g.chance(0.3)   # matmul(a, b, transpose_a=true): a stored [.., k, m]
    if ta:
        sa = sa[:-2] + (sa[-1], sa[-2])
    args = {a: g.tensor(sa, g.dtype(), vk), b: g.tensor(sb, g.dtype(), vk)}
    if ta:
        args[names[2]] = True
    if form == "sv" and g.chance(0.5):
        args[a if sa == () else b] = g.number("int" if g.chance(0.5) else "any")
    return args


def plan_equal(g, op, ref):
    a, b = [p.name for p in op.params[:2]]
    x = g.tensor(vk="any")
    c = g.r.random()
    if c < 0.4:
        y = x.copy()
    elif c < 0.55:
        y = x.astype(NPT[g.dtype()])
    elif c < 0.7 and x.size:
        y = x.copy()
        y.flat[g.r.randrange(x.size)] = g.values((), dt_of(x))
    elif c < 0.8:
        y = g.tensor(g.bshape(x.shape), dt_of(x))
    elif c < 0.9 and x.dtype.kind == "f":
        y = np.where(x == 0, -x, x).astype(x.dtype)   # zeros of the other sign
    else:
        y = g.tensor(x.shape, dt_of(x))
    args = {a: x, b: y}
    if len(op.params) > 2:   # allclose: b near a, a tolerance or two apart
        rt = g.pick([1e-5, 1e-3, 0.0, 0.1]) if g.chance(0.5) else None
        at = g.pick([1e-8, 1e-3, 0.0, 1.0]) if g.chance(0.5) else None
        rtol, atol = (rt if rt is not None else 1e-5), (at if at is not None else 1e-8)
        x = g.tensor(dtype=g.pick(["f32", "f64", "f64", "i64"]), vk="finite" if g.chance(0.85) else "any")
        y = g.tensor(g.bshape(x.shape) if g.chance(0.3) else x.shape, g.pick(["f32", "f64", dt_of(x)]), "moderate")
        u = g.n.choice([0, 0, 0.5, -0.5, 2, -2, 10], size=y.shape if y.size else (0,)) if y.size else np.zeros(y.shape)
        if g.chance(0.6):
            yf = x.astype(np.float64) if x.shape == y.shape else y.astype(np.float64)
            y = (yf + u * (atol + rtol * np.abs(yf))).astype(y.dtype) if y.dtype.kind == "f" else y
        args = {a: x, b: y}
        if rt is not None:
            args["rtol"] = Num(rt)
        if at is not None:
            args["atol"] = Num(at)
    return args


def r_equal(A):
    a, b = A["a"], A["b"]
    return np.array(a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes())


def r_allclose(A):
    d = promote([A["a"], A["b"]])
    a, b = A.c("a", d).astype(np.float64), A.c("b", d).astype(np.float64)
    np.broadcast_shapes(a.shape, b.shape)
    rt = A["rtol"].v if A.has("rtol") else 1e-5
    at = A["atol"].v if A.has("atol") else 1e-8
    # equal infinities are close, as in NumPy and PyTorch (the spec's formula alone says NaN)
    return np.array(bool(np.all((np.abs(a - b) <= at + rt * np.abs(b)) | (a == b))))


def plan_outer(g, op, ref):
    a, b = [p.name for p in op.params]
    args = {a: g.tensor(vk="any", maxsize=12), b: g.tensor(vk="any", maxsize=12)}
    if g.chance(0.15):
        args[g.pick([a, b])] = g.number()
    return args


def plan_trace(g, op, ref):
    return {op.params[0].name: g.tensor((g.dim(), g.dim()), g.dtype(), "moderate" if g.chance(0.8) else "any")}


def well_conditioned(g, n, batch, dtype):
    """Square matrices with a condition number below 50 (rounded to integers for i64)."""
    while True:
        m = g.n.normal(size=batch + (n, n)) + n * np.eye(n) * g.pick([1, -1])
        if dtype == "i64":
            m = np.round(m * 2)
        if not m.size or np.linalg.cond(m).max() < 50:
            return m.astype(NPT[dtype])


def plan_lapack(g, op, ref):
    pm = op.params
    n = g.r.randint(0 if ref.zero_ok else 1, 5)
    batch = () if g.chance(0.7) else g.shape(rmin=1, rmax=2, maxsize=6, zero=False)
    dt = g.pick(["f32", "f64", "f32", "f64", "i64"])
    kind = ref.matrix
    if kind == "general":
        a = well_conditioned(g, n, batch, dt)
    elif kind == "any":
        a = g.values(batch + (n, n), g.dtype(), "moderate")
    elif kind == "spd":
        m = g.n.normal(size=batch + (n, n))
        a = (m @ np.swapaxes(m, -1, -2) + n * np.eye(n)).astype(NPT[dt if dt != "i64" else "f64"])
        if dt == "i64":
            a = np.round(a * 3).astype(np.int64) + 2 * np.eye(n, dtype=np.int64)
    elif kind == "sym":
        m = g.n.normal(size=batch + (n, n)) * 3
        a = ((m + np.swapaxes(m, -1, -2)) / 2).astype(NPT[dt if dt != "i64" else "f64"])
        if dt == "i64":
            a = np.round(a).astype(np.int64)
    else:   # rect
        r, c = g.r.randint(1, 5), g.r.randint(1, 5)
        a = g.n.normal(size=batch + (r, c)).astype(NPT[dt if dt != "i64" else "f64"])
        if dt == "i64":
            a = np.round(a * 3).astype(np.int64)
    args = {pm[0].name: a}
    if g.chance(0.04) and kind in ("general", "spd") and n >= 2:
        a2 = a.copy()
        if kind == "general":
            a2[..., 1, :] = 0   # singular (exactly: LU meets a zero pivot)
        else:
            a2 = -a2   # not positive definite
        args[pm[0].name] = a2
    if len(pm) > 1:   # solve: b is a vector, or a stack of [n, k] matrices
        db = g.pick(["f32", "f64", dt])
        if g.chance(0.4):
            bs = (n,)
        else:
            bs = (g.bshape(batch) if batch and g.chance(0.5) else batch) + (n, g.r.randint(1, 3))
        args[pm[1].name] = g.values(bs, db, "moderate")
    return args


def plan_reshape(g, op, ref):
    pm = op.params
    a = g.tensor()
    args = {pm[0].name: a}
    for p in pm[1:]:
        if p.type in ("shape", "shape-"):
            args[p.name] = random_reshape(g, a.shape, p.type == "shape-")
        elif p.type == "axis":
            args[p.name] = g.axis(a.ndim + 1) if not g.chance(0.03) else a.ndim + 1
        elif p.type == "axes":   # squeeze: some of the length-1 axes
            ones = [i for i, d in enumerate(a.shape) if d == 1]
            if g.chance(0.4):
                if g.chance(0.5):
                    args[p.name] = None
            elif ones and g.chance(0.7):
                sel = g.r.sample(ones, g.r.randint(1, len(ones)))
                sel = [i - a.ndim if g.chance(0.4) else i for i in sel]
                args[p.name] = sel[0] if len(sel) == 1 and g.chance(0.5) else sel
            elif a.ndim and g.chance(0.3):
                args[p.name] = g.axis(a.ndim)   # maybe not of length 1: an error
    return args


def random_reshape(g, shape, minus):
    n = int(np.prod(shape)) if shape else 1
    dims = []
    rest = n
    for _ in range(g.r.randint(0, 4)):
        divs = [d for d in range(1, 7) if rest % d == 0] if rest else [0, 1, 2]
        d = g.pick(divs)
        dims.append(d)
        rest = rest // d if d else rest
    if n == 0 and 0 not in dims:
        dims.append(0)
    elif n and int(np.prod(dims or [1])) != n:
        dims.append(n // int(np.prod(dims or [1])))
    if minus and dims and g.chance(0.4) and (n != 0):
        dims[g.r.randrange(len(dims))] = -1
    if g.chance(0.03):
        dims.append(2)   # wrong size: an error (unless it happens to fit)
    g.r.shuffle(dims)
    if len(dims) == 1 and g.chance(0.3):
        return dims[0]
    return dims


def plan_transpose(g, op, ref):
    t, ax = [p.name for p in op.params]
    a = g.tensor()
    args = {t: a}
    c = g.r.random()
    if c < 0.3:
        pass
    elif c < 0.4:
        args[ax] = None
    else:
        perm = list(range(a.ndim))
        g.r.shuffle(perm)
        args[ax] = [p - a.ndim if g.chance(0.3) else p for p in perm]
        if a.ndim >= 2 and g.chance(0.04):
            args[ax][0] = args[ax][1]   # not a permutation: an error
    return args


def plan_broadcast_to(g, op, ref):
    t, sh = [p.name for p in op.params]
    s = g.shape(rmax=4)
    a = g.tensor(g.bshape(s))
    return {t: a, sh: list(s) if s or g.chance(0.5) else []}


def plan_join(g, op, ref):
    ts, ax = [p.name for p in op.params]
    stack = op.name == "stack"
    s = list(g.shape(rmin=0 if stack else 1, rmax=4))
    axis = g.axis(len(s) + (1 if stack else 0))
    k = g.r.randint(1, 4)
    parts = []
    for _ in range(k):
        si = list(s)
        if not stack:
            si[axis] = g.dim()
        parts.append(g.tensor(tuple(si), g.dtype() if g.chance(0.4) else None))
    dts = set(dt_of(p) for p in parts)
    if len(dts) > 1 and g.chance(0.5):
        d = g.dtype()
        parts = [p.astype(NPT[d]) for p in parts]
    if g.chance(0.03) and k > 1 and s and s[-1] > 0:
        p = parts[1]
        parts[1] = np.zeros(p.shape[:-1] + (p.shape[-1] + 1,), p.dtype)   # a mismatch
    args = {ts: parts}
    if axis != 0 or g.chance(0.5):
        args[ax] = axis
    return args


def plan_full(g, op, ref):
    pm = P(op)
    args = {"shape": list(g.shape(rmax=4))}
    if g.chance(0.2) and len(args["shape"]) == 1:
        args["shape"] = args["shape"][0]
    dt = g.pick([None, None, "f32", "f64", "i64", "bool"])
    if "value" in pm:
        if dt == "i64":
            v = Num(float(g.r.randint(-5, 5))) if not g.chance(0.05) else Num(math.nan)
        elif dt == "bool" or (dt is None and g.chance(0.2)):
            v = g.number("bool") if g.chance(0.7) else Num(float(g.r.randint(0, 2)))
        else:
            v = g.number()
        args["value"] = v
    if dt is not None or g.chance(0.3):
        args["dtype"] = dt
    return args


def plan_arange(g, op, ref):
    if op.name == "eye":
        return {"n": g.r.randint(0, 5)}
    if op.name == "linspace":
        return {"a": Num(g.pick([0.0, -1.0, 2.5, 1e3, -0.5])), "b": Num(g.pick([1.0, 0.0, -3.0, 10.0, 0.1])),
                "n": g.r.randint(0, 7)}
    c = g.r.random()
    ints = c < 0.5
    def num():
        return Num(float(g.r.randint(-10, 10))) if ints else Num(round(g.r.uniform(-5, 5), g.r.randint(0, 2)))
    args = {"a": num()}
    if g.chance(0.6):
        args["b"] = num()
        if g.chance(0.5):
            st = num()
            if st.v == 0 and not g.chance(0.05):
                st = Num(1.0)
            args["step"] = st
    else:
        args["a"] = Num(abs(args["a"].v))
    if g.chance(0.2):
        args["dtype"] = g.pick(["f32", "f64", "i64"])
    return args


def plan_random(g, op, ref):
    pm = P(op)
    args = {"shape": list(g.shape(rmax=3))}
    if "lo" in pm:
        lo = g.r.randint(-5, 5)
        args.update({"lo": lo, "hi": lo + g.r.randint(1, 9)})
    return args

def plan_collective(g, op, ref):
    """allreduce, broadcast, allgather: this runs without mpirun, in a world of one, where
    they are identities (allgather adds the rank axis); tests/mpi runs them on 2 and 3 ranks."""
    pm = P(op)
    if "op" in pm:
        red = g.pick(["sum", "mean", "max", "min"])
        args = {"t": g.tensor(dtype=g.dtype(["f32", "f64"] if red == "mean" else ["i64", "f32", "f64"]))}
        if red != "sum" or g.chance(0.5):
            args["op"] = red
        return args
    args = {"t": g.tensor(dtype=g.dtype(ref.dtypes))}
    if "root" in pm and g.chance(0.5):
        args["root"] = 0
    return args

# ---------------------------------------------------------------------------------------
# references: op name -> how to call it and what NumPy says


class Ref:
    def __init__(self, fn, plan, tol=EXACT, dtype=None, vk="any", bvk=None, dtypes=DTYPES, fix=None,
                 specials=True, intext=False, single_axis=False, dups=False, zero_ok=True, matrix=None,
                 check=None, batched=True, static=True, skip=None):
        self.fn, self.plan, self.tol, self.dtype, self.vk, self.bvk = fn, plan, tol, dtype, vk, bvk
        self.dtypes, self.fix, self.specials, self.intext = dtypes, fix, specials, intext
        self.single_axis, self.dups, self.zero_ok, self.matrix = single_axis, dups, zero_ok, matrix
        self.check, self.batched, self.static, self.skip = check, batched, static, skip


class A:
    """What a reference function sees: the case's arguments, the compute dtype `cd`, the
    result dtype `rd` and helpers."""
    def __init__(self, case, cd, rd):
        self.args, self.cd, self.rd, self.case = case.args, cd, rd, case

    def __getitem__(self, k):
        return self.args.get(k)

    def has(self, k):
        return k in self.args

    def c(self, k, d=None):
        return cast(self.args[k], d or self.cd)

    def f(self, k):
        """Operand k in float64, after rounding to the compute dtype (an f32 op sees 1.55 as
        1.5499999523)."""
        v = self.args[k]
        if self.cd in ("f32", "f64"):
            v = cast(v, self.cd)
        return f64(v)


def need(cond, why):
    if not cond:
        raise Raise(why)


def int_like(d):
    return d in ("i64", "bool")


def unary(npf, tol=ULP(4), **kw):
    """A float math function: computed in float64 from the operand's values, rounded."""
    return Ref(lambda A: npf(A.f("x")), plan_unary, tol, **kw)


def exact_unary(npf, **kw):
    return Ref(lambda A: npf(A.c("x")), plan_unary, kw.pop("tol", EXACT), **kw)


def int_same(npf):
    """Rounding functions leave integers as they are (NumPy would go through float64)."""
    return lambda x: x if x.dtype.kind in "bi" else npf(x)


def round_int(x, d):
    """Integers rounded to 10^-d (d < 0), half to even, exactly."""
    q = 10 ** (-d)
    def one(v):
        fl, rem = divmod(int(v), q)
        if 2 * rem > q or (2 * rem == q and fl % 2):
            fl += 1
        r = (fl * q) & (2**64 - 1)
        return r - 2**64 if r >= 2**63 else r
    return np.asarray(np.frompyfunc(one, 1, 1)(x)).astype(np.int64).reshape(x.shape)


def r_neg(A):
    need(A.rd != "bool", "unary - of a bool tensor (NumPy and PyTorch refuse)")
    return np.negative(A.c("x"))


def r_sign(A):
    x = A.c("x")
    return x if A.rd == "bool" else np.sign(x)


def r_round(A):
    x, d = A.c("x"), A["decimals"] or 0
    if int_like(A.rd):
        if d >= 0:
            return x
        return round_int(x.astype(np.int64), d).astype(x.dtype)
    return np.around(x, d)


def r_bitnot(A):
    # a bool alone is "boolnum": ~ of a truth value is logical (spec section 2)
    need(int_like(A.rd) or A.rd == "boolnum" or A.rd == "number" and A["x"].integral(), "~ of a float")
    if A.rd in ("number", "boolnum"):
        v = A["x"].v
        return np.array(not v) if isinstance(v, bool) else np.array(float(~int(v)))
    return np.invert(A.c("x"))


def binary_exact(npf, boolf=None, **kw):
    def fn(A):
        if A.rd == "bool" and boolf is not None:
            return boolf(A)
        return npf(A.c("a"), A.c("b"))
    return Ref(fn, plan_binary, kw.pop("tol", EXACT), **kw)


def r_sub_bool(A):
    raise Raise("- of two bool operands (NumPy and PyTorch refuse)")


def used(A, k):
    """Operand k broadcast to the result's shape (so an empty result uses none of it)."""
    shp = np.broadcast_shapes(*[np.shape(A.c(n)) for n in ("a", "b")])
    return np.broadcast_to(A.c(k), shp)


def int_divisor_ok(A, op):
    if int_like(A.cd):
        need(not (used(A, "b") == 0).any(), "integer %s by zero" % op)


def r_floordiv(A):
    int_divisor_ok(A, "division")
    if A.rd == "bool":
        return np.floor_divide(A.c("a", "i64"), A.c("b", "i64")).astype(bool)
    return np.floor_divide(A.c("a"), A.c("b"))


def r_mod(A):
    int_divisor_ok(A, "modulo")
    if A.rd == "bool":
        return np.remainder(A.c("a", "i64"), A.c("b", "i64")).astype(bool)
    return np.remainder(A.c("a"), A.c("b"))


def r_pow(A):
    if int_like(A.rd):
        b = A.c("b", "i64")
        need(not (used(A, "b") < 0).any(), "integers to negative integer powers")
        return np.power(A.c("a", "i64"), b)
    return np.power(A.f("a"), A.f("b"))


def pow_tol(A):
    return EXACT if int_like(A.rd) else ULP(4)


def fix_pow(args, rd):
    """Integer powers: mostly small non-negative exponents (a negative one is an error case)."""
    b = args["b"]
    if int_like(rd):
        if isinstance(b, np.ndarray) and b.dtype == np.int64 and b.size and not (b.size == 1 and b.flat[0] < 0):
            args["b"] = np.abs(b) % 7
    return args


def fix_intdiv(args, rd):
    """Integer // and %: no zero divisor (a zero divisor is an error case), rarely min // -1."""
    b = args["b"]
    if int_like(rd) and isinstance(b, np.ndarray) and b.size > 1:
        b = b.copy()
        b[b == 0] = 3 if b.dtype == np.int64 else True
        args["b"] = b
    return args


def cmp_ref(npf, pyop):
    """Comparisons: promote (an f32 tensor meets the number rounded to f32); an i64 or bool
    tensor against a number compares mathematically."""
    def fn(A):
        a, b = A["a"], A["b"]
        for x, y, swapped in ((a, b, False), (b, a, True)):
            if isinstance(x, np.ndarray) and is_num(y) and int_like(dt_of(x)):
                yv = y.v
                def one(e):
                    e = int(e)
                    return pyop(yv, e) if swapped else pyop(e, yv)
                return np.asarray(np.frompyfunc(one, 1, 1)(x)).astype(bool).reshape(x.shape)
        return npf(A.c("a"), A.c("b"))
    return Ref(fn, plan_binary, EXACT)


def logical(npf):
    return Ref(lambda A: npf(A.c("a", "bool") if not is_num(A["a"]) else bool(A["a"].v),
                             A.c("b", "bool") if not is_num(A["b"]) else bool(A["b"].v)), plan_binary, EXACT)


def r_logical_not(A):
    x = A["x"]
    return np.logical_not(bool(x.v) if is_num(x) else x.astype(bool))


def bitwise(npf):
    def fn(A):
        need(A.rd in ("i64", "bool", "number", "boolnum"), "bitwise op on a float")
        if A.rd in ("number", "boolnum"):
            need(A["a"].integral() and A["b"].integral(), "bitwise op on a non-integral number")
            if isinstance(A["a"].v, bool) and isinstance(A["b"].v, bool):
                return np.array(bool(npf(A["a"].v, A["b"].v)))
            return np.array(float(npf(int(A["a"].v), int(A["b"].v))))
        return npf(A.c("a"), A.c("b"))
    return Ref(fn, plan_binary, EXACT)


def r_clip(A):
    x = A.c("t")
    if A["lo"] is not None and A.has("lo"):
        x = np.maximum(x, A.c("lo"))
    if A["hi"] is not None and A.has("hi"):
        x = np.minimum(x, A.c("hi"))
    return x


def r_where(A):
    cnd = A["cond"]
    cnd = np.array(bool(cnd.v)) if is_num(cnd) else cnd.astype(bool)
    return np.where(cnd, A.c("a"), A.c("b"))


def r_astype(A):
    x, d = A["t"], A["dtype"]
    if d == "i64" and x.dtype.kind == "f":
        need(np.isfinite(x).all(), "NaN or inf to i64")
        need((np.abs(x.astype(np.float64)) < 2.0**63).all(), "out of range for i64")
        return np.trunc(x.astype(np.float64)).astype(np.int64)
    return x.astype(NPT[d])

# reductions: results in float64 from the values, with an error bound


def red_args(A):
    ax = A["axis"]
    ax = tuple(ax) if isinstance(ax, list) else ax
    return ax, bool(A["keepdims"])


def check_axes(A, empty_error=False):
    t = A["t"]
    ax, kd = red_args(A)
    axl = list(range(t.ndim)) if ax is None else ([ax] if isinstance(ax, int) else list(ax))
    if t.ndim == 0 and axl:
        # NumPy (np.sum(np.float32(2), axis=0)) and PyTorch reduce a 0-d tensor over axis 0 or
        # -1, named once, to itself
        need(all(a in (0, -1) for a in axl), "axis %d out of range for rank 0" % axl[-1])
        need(len(axl) == 1, "repeated axis")
        return None, kd, 1
    for a in axl:
        need(-t.ndim <= a < t.ndim, "axis %d out of range for rank %d" % (a, t.ndim))
    norm = [a % t.ndim for a in axl] if t.ndim else []
    need(len(set(norm)) == len(norm), "repeated axis")
    if empty_error:
        need(all(t.shape[a] for a in norm), "%s over an empty axis" % A.case.op.name)
    n = 1
    for a in norm:
        n *= t.shape[a]
    return ax, kd, n


def native(A, f):
    """The same reduction done by NumPy in the result's dtype: an intermediate overflow
    there (x * x of 1e30 in f32) is an accepted outcome too."""
    A.alt = f(A["t"].astype(NPT[A.rd]))


def r_sum(A):
    ax, kd, n = check_axes(A)
    if int_like(A.rd):
        return np.sum(A.c("t", "i64"), axis=ax, keepdims=kd)
    native(A, lambda x: np.sum(x, axis=ax, keepdims=kd))
    x = A.f("t")
    A.bound = np.sum(np.abs(x), axis=ax, keepdims=kd) * (2 + math.log2(max(n, 1)))
    return np.sum(x, axis=ax, keepdims=kd)


def r_prod(A):
    ax, kd, n = check_axes(A)
    if int_like(A.rd):
        return np.prod(A.c("t", "i64"), axis=ax, keepdims=kd)
    native(A, lambda x: np.prod(x, axis=ax, keepdims=kd))
    x = A.f("t")
    r = np.prod(x, axis=ax, keepdims=kd)
    A.bound = np.abs(r) * (n + 2)
    return r


def r_mean(A):
    ax, kd, n = check_axes(A)
    native(A, lambda x: np.mean(x, axis=ax, keepdims=kd))
    x = A.f("t")
    A.bound = np.mean(np.abs(x), axis=ax, keepdims=kd) * (2 + math.log2(max(n, 1))) if n else 0
    return np.mean(x, axis=ax, keepdims=kd)


def r_var(A, sq=False):
    ax, kd, n = check_axes(A)
    native(A, lambda x: (np.std if sq else np.var)(x, axis=ax, keepdims=kd))
    x = A.f("t")
    v = np.var(x, axis=ax, keepdims=kd)
    m2 = np.max(np.abs(x), axis=ax, keepdims=kd, initial=0) ** 2 if x.size else np.zeros(np.shape(v))
    b = m2 * (4 + 2 * n)
    if sq:
        s = np.sqrt(v)
        A.bound = np.sqrt(b / float(np.finfo(NPT[A.rd]).eps)) * np.ones_like(s) + s * 4
        return s
    A.bound = b
    return v


def r_maxmin(npf):
    def fn(A):
        ax, kd, n = check_axes(A, empty_error=True)
        return npf(A.c("t"), axis=ax, keepdims=kd)
    return fn


def r_arg(npf):
    def fn(A):
        ax, kd, n = check_axes(A, empty_error=True)
        need(not isinstance(ax, tuple) or len(ax) <= 1, "argmax/argmin take one axis")
        if isinstance(ax, tuple):
            ax = ax[0] if ax else None
            need(ax is not None, "argmax with axis=[]")
        x = A["t"]
        r = npf(x, axis=ax)
        if kd:
            r = np.expand_dims(r, ax) if ax is not None else np.reshape(r, (1,) * x.ndim)
        return r
    return fn


def r_allany(npf):
    def fn(A):
        ax, kd, n = check_axes(A)
        return npf(A["t"].astype(bool), axis=ax, keepdims=kd)
    return fn


def r_logsumexp(A):
    ax, kd, n = check_axes(A)
    x = A.f("t")
    m = np.max(x, axis=ax, keepdims=True, initial=-np.inf)
    ms = np.where(np.isfinite(m), m, 0)
    r = np.log(np.sum(np.exp(x - ms), axis=ax, keepdims=True)) + ms
    r = np.where(np.isnan(m), np.nan, r)
    if not kd:
        r = np.squeeze(r, axis=ax) if ax is not None else r.reshape(())
    A.bound = (np.abs(r) + 2 + math.log2(max(n, 1))) * 4
    return r


def r_norm(A):
    ax, kd, n = check_axes(A)
    native(A, lambda x: np.sqrt(np.sum(x * x, axis=ax, keepdims=kd)))
    x = A.f("t")
    r = np.sqrt(np.sum(x * x, axis=ax, keepdims=kd))
    A.bound = r * (4 + math.log2(max(n, 1)))
    return r


def r_softmax(log):
    def fn(A):
        x = A.f("t")
        ax = A["axis"] if A.has("axis") else -1
        need(-x.ndim <= ax < x.ndim, "axis out of range")
        m = np.max(x, axis=ax, keepdims=True, initial=-np.inf)
        e = np.exp(x - m)
        s = np.sum(e, axis=ax, keepdims=True)
        if log:   # the doc's definition: t - logsumexp(t) (logsumexp of a +inf is +inf)
            ms = np.where(np.isfinite(m), m, 0)
            lse = np.where(np.isnan(m), np.nan, np.log(np.sum(np.exp(x - ms), axis=ax, keepdims=True)) + ms)
            r = x - lse
            A.bound = (np.abs(r) + np.abs(x) + np.abs(m) + 4) * 4
        else:
            r = e / s
            A.bound = np.ones_like(r) * 8
        return r
    return fn


def axis_of(A, default=-1):
    t = A["t"]
    ax = A["axis"] if A.has("axis") else default
    need(-t.ndim <= ax < t.ndim, "axis %d out of range for rank %d" % (ax, t.ndim))
    return ax


def r_cum(npf):
    def fn(A):
        ax = axis_of(A)
        if int_like(A.rd):
            return npf(A.c("t", "i64"), axis=ax)
        native(A, lambda x: npf(x, axis=ax))
        x = A.f("t")
        r = npf(x, axis=ax)
        A.bound = (np.cumsum(np.abs(x), axis=ax) if npf is np.cumsum else np.abs(r) * (x.shape[ax] + 2)) * \
            (2 + x.shape[ax])
        return r
    return fn


def stable_argsort(x, ax, desc):
    """Stable argsort, NaN last; descending is the stable flip (ties keep index order, NaN first)."""
    if not desc:
        return np.argsort(x, axis=ax, kind="stable")
    n = x.shape[ax]
    s = np.argsort(np.flip(x, ax), axis=ax, kind="stable")
    return (n - 1) - np.flip(s, ax)


def r_sort(arg):
    def fn(A):
        ax = axis_of(A)
        x = A["t"]
        i = stable_argsort(x, ax, bool(A["descending"]))
        return i if arg else np.take_along_axis(x, i, ax)
    return fn


def r_topk(A):
    ax = axis_of(A)
    x, k = A["t"], A["k"]
    need(0 <= k <= x.shape[ax], "k out of range")
    i = np.take(stable_argsort(x, ax, True), np.arange(k), axis=ax)
    return [np.take_along_axis(x, i, ax), i]


def r_unique(A):
    x = A["t"].ravel()
    return np.unique(x)


def r_one_hot(A):
    lab, n = A["labels"], A["n"]
    need(((lab >= 0) & (lab < n)).all(), "label out of range")
    return (lab[..., None] == np.arange(n)).astype(np.float32)


def r_repeat(A):
    t = A["t"]
    ax = A["axis"]
    if ax is not None:
        need(-t.ndim <= ax < t.ndim, "axis out of range")
    return np.repeat(t, A["n"], axis=ax)


def r_pad(A):
    t = A["t"]
    v = A["value"] if A.has("value") else Num(0.0)
    if A.rd == "i64":
        need(v.integral(), "non-integral pad value for i64")
    return np.pad(t, [tuple(w) for w in A["widths"]], constant_values=cast(v, A.rd))


def r_diff(A):
    ax = axis_of(A)
    return np.diff(A["t"], axis=ax)


def r_take(A):
    t, idx = A["t"], A["indices"]
    need(((idx >= -t.size) & (idx < t.size)).all(), "index out of bounds")
    return np.take(t, idx)


def r_scatter_add(A):
    t, idx, v = A["t"], A["indices"], A["v"]
    need(is_num(v) or v.size in (1, idx.size), "v does not match indices")
    need(((idx >= -t.size) & (idx < t.size)).all(), "index out of bounds")
    out = cast(t, A.rd).copy().reshape(-1)
    vv = cast(v, A.rd).reshape(-1)
    np.add.at(out, idx.reshape(-1), vv if vv.size == idx.size else vv[0])
    return out.reshape(t.shape)


def mm_bound(a, b, f):
    return f(np.abs(a), np.abs(b)) * (4 + max(a.shape[-1] if a.ndim else 1, 1))


def r_matmul(A):
    a, b = A["a"], A["b"]
    need(not is_num(a) and not is_num(b) and a.ndim and b.ndim, "matmul of a 0-d operand")
    ca, cb = A.c("a"), A.c("b")
    if A["transpose_a"] and ca.ndim >= 2:
        ca = np.swapaxes(ca, -1, -2)
    if int_like(A.rd):
        if A.rd == "bool":
            return np.matmul(ca.astype(np.int64), cb.astype(np.int64)) != 0
        return np.matmul(ca, cb)
    fa, fb = ca.astype(np.float64), cb.astype(np.float64)
    A.alt = np.matmul(ca, cb)   # an overflow in the dtype (inf - inf) is accepted too
    r = np.matmul(fa, fb)
    A.bound = mm_bound(fa, fb, np.matmul)
    return r


def r_sdpa(A):
    """PyTorch's F.scaled_dot_product_attention, in float64 from the operands in the
    compute dtype: softmax(q k^T / sqrt(D), masked) v."""
    q, k, v = A.f("q"), A.f("k"), A.f("v")
    with np.errstate(all="ignore"):
        s = np.matmul(q, np.swapaxes(k, -1, -2)) / math.sqrt(q.shape[-1])
        m = A.args.get("mask")
        if isinstance(m, np.ndarray):
            s = np.where(m, s, -np.inf) if m.dtype == np.bool_ else s + A.f("mask")
        if A.has("causal") and A["causal"]:
            s = np.where(np.tril(np.ones(s.shape[-2:], dtype=bool)), s, -np.inf)
        mx = np.max(s, axis=-1, keepdims=True, initial=-np.inf)
        e = np.exp(s - mx)
        p = e / np.sum(e, axis=-1, keepdims=True)
        r = np.matmul(p, v)
        big = np.max(np.abs(np.where(np.isfinite(s), s, 0)), initial=0)
        A.bound = np.matmul(np.abs(np.nan_to_num(p)), np.abs(v)) * (4 * big + s.shape[-1] + q.shape[-1] + 8) + 1
    return r


def dt_sdpa(A):
    d = promote([A["q"], A["k"], A["v"]])
    return d if d in ("f32", "f64") else "f32"


def plan_sdpa(g, op, ref):
    L, S, D, Dv = g.dim(), g.dim(), g.dim(zero=False), g.dim()
    b = g.shape(rmin=0, rmax=2, maxsize=6)
    args = {"q": g.tensor(b + (L, D), g.dtype(), "moderate"), "k": g.tensor(g.bshape(b) + (S, D), g.dtype(), "moderate"),
            "v": g.tensor(g.bshape(b) + (S, Dv), g.dtype(), "moderate")}
    if g.chance(0.2):
        args["k"] = g.tensor(b + (S, D + 1), g.dtype(), "moderate")   # head sizes that differ: an error
    if g.chance(0.4):
        args["mask"] = g.tensor(g.bshape((L, S)), "bool" if g.chance(0.5) else g.pick(["f32", "f64"]), "moderate")
    if g.chance(0.4):
        args["causal"] = True
    return args


def r_dot(A):
    a, b = A["a"], A["b"]
    if is_num(a) or is_num(b) or a.ndim == 0 or b.ndim == 0:
        if A.rd == "bool":
            return np.logical_and(A.c("a"), A.c("b"))
        return np.multiply(A.c("a"), A.c("b"))
    need(a.ndim <= 2 and b.ndim <= 2, "dot of rank > 2")
    return r_matmul(A)


def r_outer(A):
    a, b = A.c("a").ravel(), A.c("b").ravel()
    if A.rd == "bool":
        return np.logical_and.outer(a, b)
    return np.multiply.outer(a, b)


def r_trace(A):
    t = A["t"]
    if int_like(A.rd):
        return np.trace(t.astype(np.int64))
    x = t.astype(np.float64)
    A.bound = np.trace(np.abs(x)) * 4
    return np.trace(x)


def lin_in(A, k="a"):
    """LAPACK operands: bool/i64 compute in f32 (values rounded to f32 first), f64 stays."""
    x = A[k]
    d = "f64" if x.dtype == np.float64 else "f32"
    return x.astype(NPT[d]).astype(np.float64)


def lin_tol(A):
    return 1e-11 if A.rd == "f64" else 2e-4


def lin_close(got, want, scale, tol):
    if got.shape != want.shape:
        return "shape %s, want %s" % (list(got.shape), list(want.shape))
    if got.size == 0:
        return None
    err = np.abs(got.astype(np.float64) - want)
    lim = tol * (scale + 1)
    if (err <= lim).all():
        return None
    i = tuple(int(j) for j in np.argwhere(~(err <= lim))[0])
    return "element %s: got %r, want %r (tolerance %.3g)" % (list(i), float(got[i]), float(want[i]), float(np.broadcast_to(lim, err.shape)[i]))


def maxabs(x, axes=(-2, -1)):
    return np.max(np.abs(x), axis=axes, keepdims=True, initial=0) if x.size else 0


def singular(a):
    """A zero row: the singular matrices the plans make (LAPACK finds those exactly)."""
    return bool(a.size) and bool((a == 0).all(axis=-1).any())


def r_solve(A):
    a, b = lin_in(A, "a"), lin_in(A, "b")
    need(a.ndim >= 2 and a.shape[-1] == a.shape[-2], "solve needs square matrices")
    n = a.shape[-1]
    need(not singular(a), "singular matrix")
    if b.ndim == 1:
        need(b.shape[0] == n, "shape mismatch")
        return np.linalg.solve(a, np.broadcast_to(b[:, None], a.shape[:-2] + (n, 1)))[..., 0]
    need(b.ndim >= 2 and b.shape[-2] == n, "shape mismatch")
    bs = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    return np.linalg.solve(np.broadcast_to(a, bs + a.shape[-2:]), np.broadcast_to(b, bs + b.shape[-2:]))


def check_solve(A, got):
    want = A.want[0]
    return lin_close(got[0], want, np.max(np.abs(want)) if want.size else 0, lin_tol(A) * 10)


def r_inv(A):
    a = lin_in(A)
    need(not singular(a), "singular matrix")
    return np.linalg.inv(a)


def check_plain(rtol_mult=1.0):
    def check(A, got):
        for g_, w in zip(got, A.want):
            e = lin_close(g_, w, maxabs(w) if w.ndim >= 2 else np.max(np.abs(w), initial=0), lin_tol(A) * rtol_mult)
            if e:
                return e
        return None
    return check


def r_det(A):
    return np.linalg.det(lin_in(A))


def check_det(A, got):
    w = A.want[0]
    a = lin_in(A)
    n = a.shape[-1]
    scale = np.prod(np.linalg.norm(a, axis=-1), axis=-1) if a.size else np.ones(a.shape[:-2])
    return lin_close(got[0], w, scale, lin_tol(A) * (n + 1))


def r_cholesky(A):
    a = lin_in(A)
    if a.size:
        need(np.all(np.linalg.eigvalsh(a) > 1e-6 * np.max(np.abs(a))), "not positive definite")
    return np.linalg.cholesky(a)


def r_qr(A):
    q, r = np.linalg.qr(lin_in(A))
    return [q, r]


def check_qr(A, got):
    a = lin_in(A)
    q, r = [x.astype(np.float64) for x in got]
    wq, wr = A.want
    if q.shape != wq.shape or r.shape != wr.shape:
        return "shapes %s %s, want %s %s" % (list(q.shape), list(r.shape), list(wq.shape), list(wr.shape))
    tol = lin_tol(A) * 4
    s = maxabs(a)
    if np.abs(q @ r - a).max(initial=0) > tol * (np.max(s) + 1):
        return "q @ r differs from a by %g" % np.abs(q @ r - a).max()
    k = q.shape[-1]
    if np.abs(np.swapaxes(q, -1, -2) @ q - np.eye(k)).max(initial=0) > tol:
        return "q is not orthonormal"
    if np.abs(np.tril(r, -1)).max(initial=0) > 0:
        return "r is not upper triangular"
    # the factorization is unique up to the sign of each of r's rows, when a has full rank
    dg = np.abs(np.diagonal(wr, axis1=-2, axis2=-1))
    if dg.size and dg.min() > 1e-3 * (np.max(s) + 1):
        sg = np.sign(np.diagonal(r, axis1=-2, axis2=-1)) * np.sign(np.diagonal(wr, axis1=-2, axis2=-1))
        e = lin_close(r * sg[..., :, None], wr, np.max(s), tol)
        if e:
            return "r: " + e
    return None


def r_svd(A):
    u, s, vt = np.linalg.svd(lin_in(A), full_matrices=False)
    return [u, s, vt]


def check_svd(A, got):
    a = lin_in(A)
    u, s, vt = [x.astype(np.float64) for x in got]
    wu, ws, wvt = A.want
    if (u.shape, s.shape, vt.shape) != (wu.shape, ws.shape, wvt.shape):
        return "shapes %s %s %s, want %s %s %s" % tuple(list(x.shape) for x in (u, s, vt, wu, ws, wvt))
    tol = lin_tol(A) * 4
    sc = np.max(ws, initial=0)
    e = lin_close(s, ws, sc, tol)
    if e:
        return "singular values: " + e
    if np.abs((u * s[..., None, :]) @ vt - a).max(initial=0) > tol * (sc + 1):
        return "u @ diag(s) @ vt differs from a by %g" % np.abs((u * s[..., None, :]) @ vt - a).max()
    k = s.shape[-1]
    if np.abs(np.swapaxes(u, -1, -2) @ u - np.eye(k)).max(initial=0) > tol or \
            np.abs(vt @ np.swapaxes(vt, -1, -2) - np.eye(k)).max(initial=0) > tol:
        return "u or vt is not orthonormal"
    return None


def r_eigh(A):
    w, v = np.linalg.eigh(lin_in(A))
    return [w, v]


def check_eigh(A, got):
    a = lin_in(A)
    w, v = [x.astype(np.float64) for x in got]
    ww, wv = A.want
    if (w.shape, v.shape) != (ww.shape, wv.shape):
        return "shapes %s %s, want %s %s" % (list(w.shape), list(v.shape), list(ww.shape), list(wv.shape))
    tol = lin_tol(A) * 4
    sc = np.max(np.abs(ww), initial=0)
    e = lin_close(w, ww, sc, tol)
    if e:
        return "eigenvalues: " + e
    if np.abs(a @ v - v * w[..., None, :]).max(initial=0) > tol * (sc + 1):
        return "a @ v differs from v * w by %g" % np.abs(a @ v - v * w[..., None, :]).max()
    n = w.shape[-1]
    if np.abs(np.swapaxes(v, -1, -2) @ v - np.eye(n)).max(initial=0) > tol:
        return "the eigenvectors are not orthonormal"
    return None


def r_reshape(A):
    t, sh = A["t"], A["shape"]
    sh = [sh] if isinstance(sh, int) else sh
    need(sh.count(-1) <= 1, "more than one -1")
    return np.reshape(t, sh)


def r_expand_dims(A):
    t, ax = A["t"], A["axis"]
    need(-t.ndim - 1 <= ax <= t.ndim, "axis out of range")
    return np.expand_dims(t, ax)


def r_squeeze(A):
    t, ax = A["t"], A["axis"]
    if isinstance(ax, list):
        ax = tuple(ax)
    return np.squeeze(t, ax)


def r_transpose(A):
    t, ax = A["t"], A["axes"]
    return np.transpose(t, ax)


def r_broadcast_to(A):
    return np.broadcast_to(A["t"], tuple(A["shape"])).copy()


def r_join(stack):
    def fn(A):
        parts = [cast(p, A.rd) for p in A["tensors"]]
        ax = A["axis"] if A.has("axis") else 0
        return np.stack(parts, ax) if stack else np.concatenate(parts, ax)
    return fn


def shape_of(A):
    s = A["shape"]
    return (s,) if isinstance(s, int) else tuple(s)


def r_full(A):
    name = A.case.op.name
    s = shape_of(A)
    if name == "full":
        v = A["value"]
        if A.rd == "i64":
            need(v.integral() and abs(v.v) < 2.0**63, "cannot convert to i64")
        return np.full(s, cast(v, A.rd))
    return (np.zeros if name == "zeros" else np.ones)(s, NPT[A.rd])


def dt_full(A):
    if A["dtype"] is not None:
        return A["dtype"]
    return "bool" if A.case.op.name == "full" and isinstance(A["value"].v, bool) else "f32"


def r_arange(A):
    a = A["a"].v
    if A.has("b"):
        lo, hi = a, A["b"].v
    else:
        lo, hi = 0.0, a
    st = A["step"].v if A.has("step") else 1.0
    need(st != 0, "step 0")
    n = max(int(math.ceil((hi - lo) / st)), 0)
    r = lo + np.arange(n, dtype=np.float64) * st
    A.bound = np.maximum(np.abs(r), abs(st)) * 2
    return r


def dt_arange(A):
    if A["dtype"] is not None:
        return A["dtype"]
    vals = [A[k].v for k in ("a", "b", "step") if A.has(k)]
    return "i64" if all(float(v).is_integer() for v in vals) else "f32"


def r_linspace(A):
    a, b, n = A["a"].v, A["b"].v, A["n"]
    r = np.linspace(a, b, n)
    A.bound = np.maximum(abs(a), abs(b)) * np.ones(n) * 2
    return r


def no_ref(A):
    raise AssertionError("not compared")


def dt_topk(A):
    return [dt_of(A["t"]), "i64"]


def dt_lapack(A):
    d = "f64" if A["a"].dtype == np.float64 else "f32"
    if A.case.op.name == "solve" and A["b"].dtype == np.float64:
        d = "f64"
    return [d] * A.case.op.nout


def dt_where(A):
    return promote([A["a"], A["b"]])


def dt_join(A):
    return promote(list(A["tensors"]))


# ---------------------------------------------------------------------------------------
# convolution and pooling (NCHW; PyTorch's rules, computed here in float64 with NumPy)


def win2(v, default=None):
    """A window attribute as (h, w): a number or a list of one or two."""
    if v is None:
        return default
    if isinstance(v, (list, tuple)):
        return (v[0], v[-1])
    return (v, v)


def plan_conv(g, op, ref):
    """x, w (and b) of one float dtype, windows that mostly fit; now and then a channel
    mismatch or a window too large (both modes must refuse them)."""
    dt = g.pick(["f32", "f64"])
    one_d, tr, wg = op.name == "conv1d", op.name == "conv_transpose2d", op.name == "conv2d_weight_grad"
    groups = g.pick([1, 1, 1, 2])
    cg, og = g.r.randint(1, 3), g.r.randint(1, 3)
    n = g.r.randint(1, 2)
    kh, kw = (1 if one_d else g.r.randint(1, 3)), g.r.randint(1, 3)
    h, w = (1 if one_d else g.r.randint(1, 6)), g.r.randint(1, 7)
    args = {}
    stride = g.pick([1, 1, 2, [1, 2], [2, 1]]) if not one_d else g.pick([1, 2])
    dil = g.pick([1, 1, 2, [2, 1]]) if not one_d else g.pick([1, 2])
    pad = g.pick([0, 0, 1, [1, 0], "valid", "same"]) if not one_d else g.pick([0, 1, "valid", "same"])
    if tr and pad == "same":
        pad = 1
    if pad == "same" and stride != 1 and g.chance(0.8):
        stride = 1
    c, o = cg * groups, og * groups
    if tr:
        x = g.tensor((n, c, h, w), dt, "moderate")
        wt = g.tensor((c, og, kh, kw), dt, "moderate")
        sh, sw = win2(stride)
        op_pad = [g.r.randint(0, sh - 1), g.r.randint(0, sw - 1)] if g.chance(0.4) else 0
        args = {"x": x, "w": wt, "stride": stride, "padding": pad, "output_padding": op_pad, "groups": groups, "dilation": dil}
        if g.chance(0.5):
            args["b"] = g.tensor((o,), dt, "moderate")
        return args
    xs = (n, c, w) if one_d else (n, c, h, w)
    if wg:
        sh, sw = win2(stride)
        dh, dw = win2(dil)
        ph, pw = (0, 0) if pad in ("valid", "same") else win2(pad)
        if pad == "same":
            pad = 0
        oh = (h + 2 * ph - dh * (kh - 1) - 1) // sh + 1
        ow = (w + 2 * pw - dw * (kw - 1) - 1) // sw + 1
        return {"x": g.tensor(xs, dt, "moderate"), "gy": g.tensor((n, o, max(oh, 1), max(ow, 1)), dt, "moderate"),
                "kernel_size": [kh, kw], "stride": stride, "padding": pad, "dilation": dil, "groups": groups}
    ws = (o, cg + (1 if g.chance(0.04) else 0), kw) if one_d else (o, cg + (1 if g.chance(0.04) else 0), kh, kw)
    args = {"x": g.tensor(xs, dt, "moderate"), "w": g.tensor(ws, dt, "moderate"), "stride": stride, "padding": pad,
            "dilation": dil, "groups": groups}
    if g.chance(0.5):
        args["b"] = g.tensor((o,), dt, "moderate")
    return args


def conv_pads(A, kh, kw, dh, dw, one_d):
    """(top, bottom, left, right) of a convolution's padding argument."""
    p = A["padding"] if A.has("padding") else 0
    if p == "valid":
        return (0, 0, 0, 0)
    if p == "same":
        th, tw = dh * (kh - 1), dw * (kw - 1)
        return (0, 0, tw // 2, tw - tw // 2) if one_d else (th // 2, th - th // 2, tw // 2, tw - tw // 2)
    ph, pw = win2(p)
    return (0, 0, pw, pw) if one_d else (ph, ph, pw, pw)


def conv_window(A, one_d):
    sh, sw = win2(A["stride"], (1, 1))
    dh, dw = win2(A["dilation"], (1, 1))
    if one_d:
        sh, dh = 1, 1
    need(sh >= 1 and sw >= 1 and dh >= 1 and dw >= 1, "stride and dilation at least 1")
    return sh, sw, dh, dw


def conv_core(x, w, sh, sw, dh, dw, pads, groups, oh, ow):
    """y [n, o, oh, ow] = sum over the window of x's taps times w, per group (float64)."""
    n, c = x.shape[:2]
    o, cg, kh, kw = w.shape
    og = o // groups
    xp = np.pad(x, ((0, 0), (0, 0), (pads[0], pads[1]), (pads[2], pads[3])))
    y = np.zeros((n, o, oh, ow))
    for gi in range(groups):
        for i in range(kh):
            for j in range(kw):
                tap = xp[:, gi * cg:(gi + 1) * cg, i * dh:i * dh + sh * (oh - 1) + 1:sh, j * dw:j * dw + sw * (ow - 1) + 1:sw]
                y[:, gi * og:(gi + 1) * og] += np.einsum("nchw,oc->nohw", tap, w[gi * og:(gi + 1) * og, :, i, j])
    return y


def float_operands(A, names):
    ops = [A[k] for k in names if A.has(k) and A[k] is not None]
    need(all(isinstance(v, np.ndarray) and v.dtype in (np.float32, np.float64) for v in ops), "float operands")
    need(all(v.dtype == ops[0].dtype for v in ops), "one dtype")
    return [v.astype(np.float64) for v in ops]


def r_conv(A):
    name = A.case.op.name
    one_d = name == "conv1d"
    float_operands(A, ["x", "w", "b"])
    x, w = A["x"].astype(np.float64), A["w"].astype(np.float64)
    need(x.ndim == (3 if one_d else 4) and w.ndim == x.ndim, "rank")
    if one_d:
        x, w = x[:, :, None, :], w[:, :, None, :]
    groups = A["groups"] if A.has("groups") else 1
    need(groups >= 1, "groups")
    sh, sw, dh, dw = conv_window(A, one_d)
    kh, kw = w.shape[2:]
    need(kh >= 1 and kw >= 1, "kernel size")
    pads = conv_pads(A, kh, kw, dh, dw, one_d)
    n, c, h, wd = x.shape
    if name == "conv_transpose2d":
        need(A["padding"] != "same", "same for a transposed convolution")
        need(w.shape[0] == c and c % groups == 0, "channels")
        o = w.shape[1] * groups
        oph, opw = win2(A["output_padding"], (0, 0))
        need(oph < sh and opw < sw, "output_padding below stride")
        H = (h - 1) * sh - pads[0] - pads[1] + dh * (kh - 1) + oph + 1
        W = (wd - 1) * sw - pads[2] - pads[3] + dw * (kw - 1) + opw + 1
        need(H >= 1 and W >= 1, "no output")
        if A.has("b") and A["b"] is not None:
            need(A["b"].shape == (o,), "bias shape")
        full = np.zeros((n, o, (h - 1) * sh + dh * (kh - 1) + 1 + oph + pads[1], (wd - 1) * sw + dw * (kw - 1) + 1 + opw + pads[3]))
        cg, og = c // groups, o // groups
        for gi in range(groups):
            for i in range(kh):
                for j in range(kw):
                    full[:, gi * og:(gi + 1) * og, i * dh:i * dh + sh * (h - 1) + 1:sh, j * dw:j * dw + sw * (wd - 1) + 1:sw] += \
                        np.einsum("nchw,co->nohw", x[:, gi * cg:(gi + 1) * cg], w[gi * cg:(gi + 1) * cg, :, i, j])
        y = full[:, :, pads[0]:pads[0] + H, pads[2]:pads[2] + W]
        A.bound = np.ones_like(y) * (np.abs(x).max(initial=0) * np.abs(w).max(initial=0) * (c * kh * kw + 4) + 1)
    else:
        o = w.shape[0]
        need(c % groups == 0 and o % groups == 0 and w.shape[1] * groups == c, "channels")
        oh = (h + pads[0] + pads[1] - dh * (kh - 1) - 1)
        ow = (wd + pads[2] + pads[3] - dw * (kw - 1) - 1)
        need(oh >= 0 and ow >= 0, "kernel larger than the padded input")
        need(not (A["padding"] == "same" and (sh != 1 or sw != 1)), "same with a stride")
        if A.has("b") and A["b"] is not None:
            need(A["b"].shape == (o,), "bias shape")
        y = conv_core(x, w, sh, sw, dh, dw, pads, groups, oh // sh + 1, ow // sw + 1)
        A.bound = conv_core(np.abs(x), np.abs(w), sh, sw, dh, dw, pads, groups, oh // sh + 1, ow // sw + 1) * (w[0].size + 4)
    if A.has("b") and A["b"] is not None:
        y = y + A["b"].astype(np.float64)[None, :, None, None]
        A.bound = A.bound + np.abs(A["b"].astype(np.float64))[None, :, None, None] * 4
    if one_d:
        y, A.bound = y[:, :, 0, :], A.bound[:, :, 0, :]
    return y.astype(NPT[A.rd])


def r_conv_weight_grad(A):
    float_operands(A, ["x", "gy"])
    x, gy = A["x"].astype(np.float64), A["gy"].astype(np.float64)
    need(x.ndim == 4 and gy.ndim == 4, "rank")
    groups = A["groups"] if A.has("groups") else 1
    sh, sw, dh, dw = conv_window(A, False)
    kh, kw = win2(A["kernel_size"])
    need(kh >= 1 and kw >= 1 and groups >= 1, "kernel size and groups")
    pads = conv_pads(A, kh, kw, dh, dw, False)
    n, c, h, wd = x.shape
    o = gy.shape[1]
    need(c % groups == 0 and o % groups == 0, "channels")
    need(not (A["padding"] == "same" and (sh != 1 or sw != 1)), "same with a stride")
    oh, ow = h + pads[0] + pads[1] - dh * (kh - 1) - 1, wd + pads[2] + pads[3] - dw * (kw - 1) - 1
    need(oh >= 0 and ow >= 0, "kernel larger than the padded input")
    need(gy.shape == (n, o, oh // sh + 1, ow // sw + 1), "gy's shape")
    cg, og = c // groups, o // groups
    xp = np.pad(x, ((0, 0), (0, 0), (pads[0], pads[1]), (pads[2], pads[3])))
    dwt = np.zeros((o, cg, kh, kw))
    bnd = np.zeros((o, cg, kh, kw))
    for gi in range(groups):
        for i in range(kh):
            for j in range(kw):
                tap = xp[:, gi * cg:(gi + 1) * cg, i * dh:i * dh + sh * (gy.shape[2] - 1) + 1:sh, j * dw:j * dw + sw * (gy.shape[3] - 1) + 1:sw]
                dwt[gi * og:(gi + 1) * og, :, i, j] = np.einsum("nchw,nohw->oc", tap, gy[:, gi * og:(gi + 1) * og])
                bnd[gi * og:(gi + 1) * og, :, i, j] = np.einsum("nchw,nohw->oc", np.abs(tap), np.abs(gy[:, gi * og:(gi + 1) * og]))
    A.bound = bnd * (n * gy.shape[2] * gy.shape[3] + 4)
    return dwt.astype(NPT[A.rd])


def plan_pool(g, op, ref):
    dt = g.pick(["f32", "f64"])
    n, c, h, w = g.r.randint(1, 2), g.r.randint(1, 3), g.r.randint(1, 6), g.r.randint(1, 7)
    vk = "moderate" if g.chance(0.7) else "any"
    x = g.tensor((n, c, h, w), dt, vk)
    if op.name.startswith("adaptive"):
        osz = g.pick([1, 2, [2, 3], [3, 1], [h, w]])
        if op.name.endswith("backward"):
            oh, ow = win2(osz)
            return {"x": x, "gy": g.tensor((n, c, oh, ow), dt, "moderate")}
        return {"x": x, "output_size": osz}
    k = g.pick([1, 2, 2, 3, [2, 3], [3, 1]])
    kh, kw = win2(k)
    args = {"x": x, "kernel_size": k}
    if g.chance(0.5):
        args["stride"] = g.pick([1, 2, [1, 2], [2, 1]])
    if g.chance(0.4):
        args["padding"] = g.pick([[kh // 2, kw // 2], [0, kw // 2], 1])
    if op.name.endswith("backward"):
        sh, sw = win2(args.get("stride"), (kh, kw))
        ph, pw = win2(args.get("padding", 0))
        oh, ow = (h + 2 * ph - kh) // sh + 1, (w + 2 * pw - kw) // sw + 1
        args["gy"] = g.tensor((n, c, max(oh, 1), max(ow, 1)), dt, "moderate")
    return args


def pool_windows(A):
    """(x as float64, the windows: a list over (oy, ox) of (y0, y1, x0, x1, count), oh, ow)."""
    name = A.case.op.name
    float_operands(A, ["x", "gy"])
    x = A["x"].astype(np.float64)
    need(x.ndim == 4, "rank")
    n, c, h, w = x.shape
    if name.startswith("adaptive"):
        if name.endswith("backward"):
            need(A["gy"].ndim == 4, "gy rank")
            oh, ow = A["gy"].shape[2:]
        else:
            oh, ow = win2(A["output_size"])
        need(oh >= 1 and ow >= 1 and h >= 1 and w >= 1, "empty")
        wins = [[(i * h // oh, -(-(i + 1) * h // oh), j * w // ow, -(-(j + 1) * w // ow), 0) for j in range(ow)] for i in range(oh)]
        wins = [[(a, b, cc, d, (b - a) * (d - cc)) for (a, b, cc, d, _) in row] for row in wins]
        return x, wins, oh, ow
    kh, kw = win2(A["kernel_size"])
    sh, sw = win2(A["stride"], (kh, kw))
    ph, pw = win2(A["padding"], (0, 0))
    need(kh >= 1 and kw >= 1 and sh >= 1 and sw >= 1, "window")
    need(2 * ph <= kh and 2 * pw <= kw, "padding at most half the window")
    need(h + 2 * ph - kh >= 0 and w + 2 * pw - kw >= 0, "window larger than the padded input")
    oh, ow = (h + 2 * ph - kh) // sh + 1, (w + 2 * pw - kw) // sw + 1
    wins = []
    for i in range(oh):
        row = []
        for j in range(ow):
            ys, xs = i * sh - ph, j * sw - pw
            ye, xe = min(ys + kh, h + ph), min(xs + kw, w + pw)
            row.append((max(ys, 0), min(ye, h), max(xs, 0), min(xe, w), (ye - ys) * (xe - xs)))
        wins.append(row)
    return x, wins, oh, ow


def r_pool(A):
    name = A.case.op.name
    x, wins, oh, ow = pool_windows(A)
    n, c = x.shape[:2]
    mx = name.startswith("max")
    if name.endswith("backward"):
        gy = A["gy"].astype(np.float64)
        need(gy.shape == (n, c, oh, ow), "gy's shape")
        dx = np.zeros_like(x)
        for i in range(oh):
            for j in range(ow):
                y0, y1, x0, x1, cnt = wins[i][j]
                if mx:
                    win = x[:, :, y0:y1, x0:x1].reshape(n, c, -1)
                    nan = np.isnan(win)
                    at = np.where(nan.any(axis=2), nan.argmax(axis=2), np.argmax(np.where(nan, -np.inf, win), axis=2))
                    for a in range(n):
                        for b in range(c):
                            if win.shape[2]:
                                q = at[a, b]
                                dx[a, b, y0 + q // (x1 - x0), x0 + q % (x1 - x0)] += gy[a, b, i, j]
                else:
                    dx[:, :, y0:y1, x0:x1] += (gy[:, :, i, j] / cnt)[:, :, None, None]
        A.bound = np.abs(dx) * 4 + np.abs(gy).max(initial=0) * 4
        return dx.astype(NPT[A.rd])
    y = np.zeros((n, c, oh, ow))
    for i in range(oh):
        for j in range(ow):
            y0, y1, x0, x1, cnt = wins[i][j]
            win = x[:, :, y0:y1, x0:x1].reshape(n, c, -1)
            y[:, :, i, j] = np.max(win, axis=2) if mx else np.sum(win, axis=2) / cnt
    if mx:
        return y.astype(NPT[A.rd])
    A.bound = np.zeros_like(y)
    for i in range(oh):
        for j in range(ow):
            y0, y1, x0, x1, cnt = wins[i][j]
            A.bound[:, :, i, j] = np.sum(np.abs(x[:, :, y0:y1, x0:x1]), axis=(2, 3)) / cnt * (cnt + 4)
    return y.astype(NPT[A.rd])


def dt_first(A):
    return [dt_of(A["x"])]


# The reference of each op of ops.def. (The op list itself comes from ops.def.)

# ---------- neural-network ops (issue 28): float64 references, error bounds for the
# composites that round at each step in the compute dtype (as PyTorch's own kernels do)

_erf = np.vectorize(math.erf, otypes=[np.float64])
_erfc = np.vectorize(math.erfc, otypes=[np.float64])


def bounded(npf, k=8):
    """An elementwise function of the float64 values, within k eps of (|result| + |x| + 1)."""
    def fn(A):
        x = A.f("x")
        r = npf(x)
        with np.errstate(all="ignore"):
            A.bound = (np.abs(np.nan_to_num(r)) + np.abs(np.nan_to_num(x)) + 1) * k
        return r
    return fn


def r_gelu_tanh(x):
    with np.errstate(all="ignore"):
        return 0.5 * x * (1 + np.tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)))


def r_param2(npf, pname):
    def fn(A):
        x, y = A.f("x"), A.f(pname)
        with np.errstate(all="ignore"):
            r = npf(x, y)
            A.bound = (np.abs(np.nan_to_num(r)) + 1) * 8
        return r
    return Ref(fn, plan_binary, BOUND(8))


def plan_softplus(g, op, ref):
    args = {"x": g.tensor(dtype=g.dtype(), vk="moderate")}
    if g.chance(0.5):
        args["beta"] = g.pick([0.5, 1, 2])
    if g.chance(0.5):
        args["threshold"] = g.pick([1, 5, 20])
    return args


def r_softplus(A):
    x = A.c("x")
    dt = x.dtype
    beta, th = dt.type(A["beta"] if A.has("beta") else 1), dt.type(A["threshold"] if A.has("threshold") else 20)
    with np.errstate(all="ignore"):
        bx = (x * beta).astype(dt)
        r = np.where(bx > th, x.astype(np.float64), np.log1p(np.exp(bx.astype(np.float64))) / float(beta))
    A.bound = (np.abs(r) + 1) * 8
    return r


def plan_norm(g, op, ref):
    dt = g.dtype(["f32", "f64"])
    if op.name in ("layer_norm", "rms_norm"):
        x = g.tensor(dtype=dt, vk="moderate", rmin=1)
        k = g.r.randint(1, x.ndim)
        ns = list(x.shape[x.ndim - k:])
        args = {"x": x, "normalized_shape": ns}
        if g.chance(0.5):
            args["weight"] = g.tensor(shape=tuple(ns), dtype=dt, vk="moderate")
        if op.name == "layer_norm" and g.chance(0.5):
            args["bias"] = g.tensor(shape=tuple(ns), dtype=dt, vk="moderate")
        if g.chance(0.3):
            args["eps"] = g.pick([1e-3, 0.1])
        return args
    n, c, s = g.r.randint(1, 3), g.pick([2, 4, 6]), g.r.randint(1, 4)
    args = {"x": g.tensor(shape=(n, c, s), dtype=dt, vk="moderate")}
    if op.name == "group_norm":
        args["num_groups"] = g.pick([1, 2])
    else:
        args["training"] = g.chance(0.5)
        if not args["training"] or g.chance(0.5):
            args["running_mean"] = g.tensor(shape=(c,), dtype=dt, vk="moderate")
            args["running_var"] = np.abs(g.tensor(shape=(c,), dtype=dt, vk="moderate")) + np.array(0.5, NPT[dt])
        if args["training"] and n * s == 1:
            args["training"] = False   # one value per channel: PyTorch refuses to train on it
    for k in ("weight", "bias"):
        if g.chance(0.5):
            args[k] = g.tensor(shape=(c,), dtype=dt, vk="moderate")
    return args


def r_normalize(A):
    x = A.f("x")
    name = A.case.op.name
    w = A.f("weight") if A.has("weight") else None
    b = A.f("bias") if A.has("bias") else None
    if name in ("layer_norm", "rms_norm"):
        k = len(A["normalized_shape"])
        ax = tuple(range(x.ndim - k, x.ndim))
        eps = A["eps"] if A.has("eps") else (1e-5 if name == "layer_norm" else float(np.finfo(NPT[A.rd]).eps))
        mu = x.mean(axis=ax, keepdims=True) if name == "layer_norm" else 0
        r = (x - mu) / np.sqrt(((x - mu) ** 2).mean(axis=ax, keepdims=True) + eps)
    elif name == "group_norm":
        n, c = x.shape[:2]
        gx = x.reshape(n, A["num_groups"], -1)
        mu = gx.mean(axis=2, keepdims=True)
        r = ((gx - mu) / np.sqrt(((gx - mu) ** 2).mean(axis=2, keepdims=True) + 1e-5)).reshape(x.shape)
    else:
        if A["training"]:
            mu = x.mean(axis=(0, 2), keepdims=True)
            v = ((x - mu) ** 2).mean(axis=(0, 2), keepdims=True)
        else:
            mu, v = A.f("running_mean").reshape(1, -1, 1), A.f("running_var").reshape(1, -1, 1)
        r = (x - mu) / np.sqrt(v + 1e-5)
    if name in ("group_norm", "batch_norm"):
        w = w.reshape(1, -1, 1) if w is not None else None
        b = b.reshape(1, -1, 1) if b is not None else None
    if w is not None:
        r = r * w
    if b is not None:
        r = r + b
    A.bound = (np.abs(r) + 1) * 16 + (np.abs(w) * 16 if w is not None else 0)
    return r


def plan_xent(g, op, ref):
    n, c = g.r.randint(1, 4), g.r.randint(1, 5)
    lab = g.n.integers(0, c, (n,)).astype(np.int64)
    if g.chance(0.03):
        lab[0] = g.pick([c, -1])
    args = {"logits": g.tensor(shape=(n, c), dtype=g.dtype(["f32", "f64"]), vk="moderate"), "labels": lab}
    if g.chance(0.4):
        args["label_smoothing"] = g.pick([0.1, 0.5])
    return args


def r_xent(A):
    x, lab = A.f("logits"), A["labels"]
    need(((lab >= 0) & (lab < x.shape[1])).all(), "label out of range")
    e = A["label_smoothing"] if A.has("label_smoothing") else 0.0
    m = x.max(axis=1, keepdims=True)
    lse = (m + np.log(np.exp(x - m).sum(axis=1, keepdims=True)))[:, 0]
    loss = (1 - e) * (lse - x[np.arange(x.shape[0]), lab]) + e * (lse - x.mean(axis=1))
    r = np.array(loss.mean())
    A.bound = np.array((np.abs(lse).mean() + np.abs(x).max() + 1) * 16)
    return r


def plan_gather_axis(g, op, ref):
    x = g.tensor(rmin=1, rmax=3, maxsize=24)
    ax = g.r.randint(0, x.ndim - 1)
    ish = tuple(g.r.randint(0, d) if i != ax else g.r.randint(0, 3) for i, d in enumerate(x.shape))
    n = x.shape[ax]
    idx = g.n.integers(0, max(n, 1), ish).astype(np.int64)
    if n == 0:
        ish = tuple(0 if i == ax else d for i, d in enumerate(ish))
        idx = np.zeros(ish, np.int64)
    if g.chance(0.03) and idx.size:
        idx.flat[0] = g.pick([n, -1])
    args = {"x": x, "axis": ax - x.ndim if g.chance(0.3) else ax, "index": idx}
    if op.name == "scatter":
        args["src"] = g.tensor(shape=ish, dtype=dt_of(x))
        if g.chance(0.5):
            args["reduce"] = "add"
            if dt_of(x) == "bool":
                args["src"] = args["src"].astype(np.bool_)
    return args


def r_gather_axis(A):
    x, idx = A.c("x"), A["index"]
    ax = A["axis"] % x.ndim
    need(((idx >= 0) & (idx < x.shape[ax])).all(), "index out of range")
    if A.case.op.name == "gather":   # PyTorch's: the index's shape, no broadcasting
        r = np.zeros(idx.shape, x.dtype)
        for e in np.ndindex(*idx.shape):
            r[e] = x[tuple(idx[e] if d == ax else e[d] for d in range(x.ndim))]
        return r
    r, src = x.copy(), A.c("src")
    if A["reduce"] == "add":
        for e in np.ndindex(*idx.shape):
            at = tuple(idx[e] if d == ax else e[d] for d in range(x.ndim))
            r[at] = (r[at] | src[e]) if r.dtype == np.bool_ else r[at] + src[e]
    else:   # repeated positions: the last write wins, as the CPU's serial loop writes them
        for e in np.ndindex(*idx.shape):
            r[tuple(idx[e] if d == ax else e[d] for d in range(x.ndim))] = src[e]
    return r


def plan_masked_fill(g, op, ref):
    x = g.tensor(rmax=3)
    m = g.tensor(shape=g.bshape(x.shape) if g.chance(0.3) else x.shape, dtype="bool")
    if m.ndim > x.ndim or any(a not in (1, b) for a, b in zip(m.shape[::-1], x.shape[::-1])):
        m = g.tensor(shape=x.shape, dtype="bool")
    d = dt_of(x)
    v = g.number() if d in ("f32", "f64") else (Num(float(g.r.randint(-3, 3))) if d == "i64" else Num(1.0))
    return {"x": x, "mask": m, "value": v}


def r_masked_fill(A):
    x = A.c("x")
    v = A["value"].v
    return np.where(A["mask"], np.array(v).astype(x.dtype), x)

REF = {
    # convolution and pooling
    "conv1d": Ref(r_conv, plan_conv, BOUND(4), dtype=dt_first),
    "conv2d": Ref(r_conv, plan_conv, BOUND(4), dtype=dt_first),
    "conv_transpose2d": Ref(r_conv, plan_conv, BOUND(4), dtype=dt_first),
    "conv2d_weight_grad": Ref(r_conv_weight_grad, plan_conv, BOUND(4), dtype=dt_first),
    "max_pool2d": Ref(r_pool, plan_pool, EXACT_NOZ, dtype=dt_first),
    "avg_pool2d": Ref(r_pool, plan_pool, BOUND(4), dtype=dt_first),
    "adaptive_avg_pool2d": Ref(r_pool, plan_pool, BOUND(4), dtype=dt_first),
    "max_pool2d_backward": Ref(r_pool, plan_pool, BOUND(4), dtype=dt_first),
    "avg_pool2d_backward": Ref(r_pool, plan_pool, BOUND(4), dtype=dt_first),
    "adaptive_avg_pool2d_backward": Ref(r_pool, plan_pool, BOUND(4), dtype=dt_first),
    # elementwise, one operand
    "neg": Ref(r_neg, plan_unary, EXACT),
    "abs": exact_unary(np.abs),
    "exp": unary(np.exp), "exp2": unary(np.exp2), "expm1": unary(np.expm1),
    "log": unary(np.log), "log2": unary(np.log2), "log10": unary(np.log10), "log1p": unary(np.log1p),
    "sqrt": unary(np.sqrt, tol=ULP(1, zsign=True)),
    "sin": unary(np.sin), "cos": unary(np.cos), "tan": unary(np.tan),
    "asin": unary(np.arcsin), "acos": unary(np.arccos), "atan": unary(np.arctan),
    "sinh": unary(np.sinh), "cosh": unary(np.cosh), "tanh": unary(np.tanh),
    "asinh": unary(np.arcsinh), "acosh": unary(np.arccosh), "atanh": unary(np.arctanh),
    "sigmoid": unary(lambda x: 1 / (1 + np.exp(-x))),
    "softsign": unary(lambda x: x / (1 + np.abs(x))),
    "erf": unary(_erf), "erfc": Ref(bounded(_erfc, 2), plan_unary, BOUND(2)),
    "gelu": Ref(bounded(lambda x: x * 0.5 * (1 + _erf(x * 0.7071067811865476))), plan_unary, BOUND(8)),
    "gelu_tanh": Ref(bounded(r_gelu_tanh), plan_unary, BOUND(8)),
    "silu": Ref(bounded(lambda x: x / (1 + np.exp(-x))), plan_unary, BOUND(8)),
    "leaky_relu": r_param2(lambda x, y: np.where(x > 0, x, x * y), "negative_slope"),
    "elu": r_param2(lambda x, y: np.where(x > 0, x, y * np.expm1(x)), "alpha"),
    "softplus": Ref(r_softplus, plan_softplus, BOUND(8), dtype=lambda A: "f64" if dt_of(A["x"]) == "f64" else "f32"),
    "layer_norm": Ref(r_normalize, plan_norm, BOUND(16)), "rms_norm": Ref(r_normalize, plan_norm, BOUND(16)),
    "group_norm": Ref(r_normalize, plan_norm, BOUND(16)), "batch_norm": Ref(r_normalize, plan_norm, BOUND(16)),
    "cross_entropy": Ref(r_xent, plan_xent, BOUND(16)),
    "gather": Ref(r_gather_axis, plan_gather_axis, EXACT, dtype=lambda A: dt_of(A["x"])),
    "scatter": Ref(r_gather_axis, plan_gather_axis, EXACT, dtype=lambda A: dt_of(A["x"])),
    "masked_fill": Ref(r_masked_fill, plan_masked_fill, EXACT, dtype=lambda A: dt_of(A["x"])),
    "relu": Ref(lambda A: np.where(A.c("x") > 0, A.c("x"), np.where(np.isnan(A.c("x")), A.c("x"), np.zeros_like(A.c("x")))),
                plan_unary, EXACT_NOZ),
    "floor": exact_unary(int_same(np.floor)), "ceil": exact_unary(int_same(np.ceil)),
    "round": Ref(r_round, plan_unary, EXACT),
    "sign": Ref(r_sign, plan_unary, EXACT),
    "isnan": exact_unary(np.isnan), "isinf": exact_unary(np.isinf), "isfinite": exact_unary(np.isfinite),
    "logical_not": Ref(r_logical_not, plan_unary, EXACT),
    "bitwise_not": Ref(r_bitnot, plan_unary, EXACT),
    # elementwise, two operands
    "add": binary_exact(np.add, lambda A: np.logical_or(A.c("a"), A.c("b"))),
    "sub": binary_exact(np.subtract, r_sub_bool),
    "mul": binary_exact(np.multiply, lambda A: np.logical_and(A.c("a"), A.c("b"))),
    "div": binary_exact(np.true_divide),
    "floor_divide": Ref(r_floordiv, plan_binary, EXACT, fix=fix_intdiv),
    "mod": Ref(r_mod, plan_binary, EXACT, fix=fix_intdiv),
    "pow": Ref(r_pow, plan_binary, pow_tol, fix=fix_pow),
    "maximum": binary_exact(np.maximum, tol=EXACT_NOZ),
    "minimum": binary_exact(np.minimum, tol=EXACT_NOZ),
    "atan2": Ref(lambda A: np.arctan2(A.f("y"), A.f("x")), plan_binary, ULP(4, zsign=True)),
    "logical_and": logical(np.logical_and), "logical_or": logical(np.logical_or),
    "logical_xor": logical(np.logical_xor),
    "bitwise_and": bitwise(lambda a, b: a & b), "bitwise_or": bitwise(lambda a, b: a | b),
    "bitwise_xor": bitwise(lambda a, b: a ^ b),
    "eq": cmp_ref(np.equal, lambda a, b: a == b), "ne": cmp_ref(np.not_equal, lambda a, b: a != b),
    "lt": cmp_ref(np.less, lambda a, b: a < b), "le": cmp_ref(np.less_equal, lambda a, b: a <= b),
    "gt": cmp_ref(np.greater, lambda a, b: a > b), "ge": cmp_ref(np.greater_equal, lambda a, b: a >= b),
    "clip": Ref(r_clip, plan_clip, EXACT_NOZ),
    "where": Ref(r_where, plan_where, EXACT, dtype=dt_where),
    "astype": Ref(r_astype, plan_astype, EXACT),
    # reductions
    "sum": Ref(r_sum, plan_reduce, lambda A: EXACT if int_like(A.rd) else BOUND(2), intext=True),
    "mean": Ref(r_mean, plan_reduce, BOUND(2)),
    "max": Ref(r_maxmin(np.max), plan_reduce, EXACT_NOZ),
    "min": Ref(r_maxmin(np.min), plan_reduce, EXACT_NOZ),
    "prod": Ref(r_prod, plan_reduce, lambda A: EXACT if int_like(A.rd) else BOUND(2), intext=True),
    "var": Ref(r_var, plan_reduce, BOUND(2)),
    "std": Ref(lambda A: r_var(A, True), plan_reduce, BOUND(2)),
    "argmax": Ref(r_arg(np.argmax), plan_reduce, EXACT, single_axis=True),
    "argmin": Ref(r_arg(np.argmin), plan_reduce, EXACT, single_axis=True),
    "all": Ref(r_allany(np.all), plan_reduce, EXACT),
    "any": Ref(r_allany(np.any), plan_reduce, EXACT),
    "logsumexp": Ref(r_logsumexp, plan_reduce, BOUND(2)),
    "norm": Ref(r_norm, plan_reduce, BOUND(2)),
    "softmax": Ref(r_softmax(False), plan_axis_op, BOUND(2)),
    "log_softmax": Ref(r_softmax(True), plan_axis_op, BOUND(2)),
    # along an axis
    "cumsum": Ref(r_cum(np.cumsum), plan_axis_op, lambda A: EXACT if int_like(A.rd) else BOUND(2)),
    "cumprod": Ref(r_cum(np.cumprod), plan_axis_op, lambda A: EXACT if int_like(A.rd) else BOUND(2), vk="moderate"),
    "sort": Ref(r_sort(False), plan_axis_op, EXACT, dups=True),
    "argsort": Ref(r_sort(True), plan_axis_op, EXACT, dups=True),
    "topk": Ref(r_topk, plan_axis_op, EXACT, dtype=dt_topk, dups=True),
    "unique": Ref(r_unique, plan_unique, EXACT_NOZ),
    "one_hot": Ref(r_one_hot, plan_one_hot, EXACT),
    "tile": Ref(lambda A: np.tile(A["t"], A["reps"]), plan_tile, EXACT),
    "repeat": Ref(r_repeat, plan_repeat, EXACT),
    "pad": Ref(r_pad, plan_pad, EXACT),
    "diff": Ref(r_diff, plan_axis_op, EXACT),
    "take": Ref(r_take, plan_take, EXACT, dtype=lambda A: dt_of(A["t"])),
    "scatter_add": Ref(r_scatter_add, plan_take, EXACT, dtype=lambda A: promote([A["t"], A["v"]])),
    "equal": Ref(r_equal, plan_equal, EXACT),
    "allclose": Ref(r_allclose, plan_equal, EXACT),
    # linear algebra
    "matmul": Ref(r_matmul, plan_matmul, lambda A: EXACT if int_like(A.rd) else BOUND(2)),
    "dot": Ref(r_dot, plan_matmul, lambda A: EXACT if int_like(A.rd) or A.args["a"] is None or
               is_num(A["a"]) or is_num(A["b"]) or A["a"].ndim == 0 or A["b"].ndim == 0 else BOUND(2), batched=False),
    "outer": Ref(r_outer, plan_outer, EXACT),
    "scaled_dot_product_attention": Ref(r_sdpa, plan_sdpa, BOUND(8), dtype=dt_sdpa, specials=False),
    "trace": Ref(r_trace, plan_trace, lambda A: EXACT if int_like(A.rd) else BOUND(2)),
    "solve": Ref(r_solve, plan_lapack, None, dtype=dt_lapack, matrix="general", check=check_solve),
    "inv": Ref(r_inv, plan_lapack, None, dtype=dt_lapack, matrix="general", check=check_plain(10)),
    "det": Ref(r_det, plan_lapack, None, dtype=dt_lapack, matrix="any", check=check_det),
    "cholesky": Ref(r_cholesky, plan_lapack, None, dtype=dt_lapack, matrix="spd", check=check_plain(10)),
    "qr": Ref(r_qr, plan_lapack, None, dtype=dt_lapack, matrix="rect", check=check_qr),
    "svd": Ref(r_svd, plan_lapack, None, dtype=dt_lapack, matrix="rect", check=check_svd),
    "eigh": Ref(r_eigh, plan_lapack, None, dtype=dt_lapack, matrix="sym", check=check_eigh),
    # shape
    "reshape": Ref(r_reshape, plan_reshape, EXACT),
    "flatten": Ref(lambda A: A["t"].ravel(), plan_reshape, EXACT),
    "expand_dims": Ref(r_expand_dims, plan_reshape, EXACT),
    "squeeze": Ref(r_squeeze, plan_reshape, EXACT),
    "transpose": Ref(r_transpose, plan_transpose, EXACT),
    "broadcast_to": Ref(r_broadcast_to, plan_broadcast_to, EXACT),
    "concat": Ref(r_join(False), plan_join, EXACT, dtype=dt_join),
    "stack": Ref(r_join(True), plan_join, EXACT, dtype=dt_join),
    # construction
    "zeros": Ref(r_full, plan_full, EXACT, dtype=dt_full),
    "ones": Ref(r_full, plan_full, EXACT, dtype=dt_full),
    "full": Ref(r_full, plan_full, EXACT, dtype=dt_full),
    "arange": Ref(r_arange, plan_arange, lambda A: EXACT if A.rd == "i64" else BOUND(2), dtype=dt_arange),
    "linspace": Ref(r_linspace, plan_arange, BOUND(2)),
    "eye": Ref(lambda A: np.eye(A["n"], dtype=np.float32), plan_arange, EXACT),
    # random: no NumPy counterpart; dtype, shape and range are checked instead
    "rand": Ref(no_ref, plan_random, skip=lambda x, A: ((x >= 0) & (x < 1)).all()),
    "randn": Ref(no_ref, plan_random, skip=lambda x, A: np.isfinite(x).all()),
    "randint": Ref(no_ref, plan_random, skip=lambda x, A: ((x >= A["lo"]) & (x < A["hi"])).all()),
    # collectives in a world of one (no mpirun)
    "allreduce": Ref(lambda A: A["t"], plan_collective, EXACT),
    "broadcast": Ref(lambda A: A["t"], plan_collective, EXACT),
    "allgather": Ref(lambda A: A["t"][None], plan_collective, EXACT),
}

# ---------------------------------------------------------------------------------------
# expected dtype (spec section 5) from the op's dtype rule


def expected_dtypes(op, case, ref):
    args = case.args
    opnds = []
    for p in op.operands():
        if p.name in args:
            v = args[p.name]
            if p.type == "Ts":
                opnds += list(v)
            elif v is not None:
                opnds.append(v)
    tdts = [dt_of(v) for v in opnds if isinstance(v, np.ndarray)]
    first = opnds[0] if opnds else None
    allnum = bool(opnds) and not tdts
    rule = op.rule
    if ref.dtype is not None:
        d = ref.dtype(A(case, None, None))
        return d if isinstance(d, list) else [d]
    if "F_ITEM" in op.flags:   # the built-in returns the 0-d result's element
        return ["boolnum" if rule in ("DR_BOOL", "DR_CMP") else "number"]
    if allnum:   # numbers map to numbers (F_NUM), bools where the op gives bools
        if rule in ("DR_BOOL", "DR_CMP"):
            return ["boolnum"]
        if rule == "DR_INT" and all(isinstance(v.v, bool) for v in opnds):
            return ["boolnum"]
        return ["number"]
    p = promote(opnds)
    d = {
        "DR_SAME": lambda: dt_of(first) if isinstance(first, np.ndarray) else p,
        "DR_FLOAT": lambda: floatify(p),
        "DR_BOOL": lambda: "bool",
        # TSL's rule (docs/language.md): bool % bool, bool ** bool and bool // bool compute
        # in i64 (NumPy gives int8, PyTorch refuses them); other promoted ops keep bool
        "DR_PROMOTE": lambda: "i64" if p == "bool" and op.name in ("mod", "pow", "floor_divide") else p,
        "DR_CMP": lambda: "bool",
        "DR_INT": lambda: p,
        "DR_SUM": lambda: "i64" if int_like(p) else p,
        "DR_MEAN": lambda: "f32" if int_like(p) else p,
        "DR_I64": lambda: "i64",
        "DR_F32": lambda: "f32",
        "DR_ATTR": lambda: args.get("dtype") or "f32",
    }.get(rule)
    if d is None:
        raise SystemExit("FAIL: numpy_diff: dtype rule %s of op %s is new: teach expected_dtypes() about it" % (rule, op.name))
    return [d()] * op.nout


def compute_dtype(op, case, rd):
    """The dtype a reference computes exactly in: the promoted operands' for comparisons and
    logical ops, else the result's."""
    if op.rule in ("DR_CMP", "DR_BOOL", "DR_INT") or op.kind == "K_COMPARE":
        opnds = [case.args[p.name] for p in op.operands() if case.args.get(p.name) is not None]
        p = promote(opnds)
        return "f64" if p == "number" else p
    return "f64" if rd in ("number", "boolnum") else rd

# ---------------------------------------------------------------------------------------
# cases and the TSL program


class Case:
    def __init__(self, op, args, ref):
        self.op, self.args, self.ref = op, args, ref
        self.static = False
        self.runtime_nums = False
        self.form = "call"
        self.kwstyle = 0
        self.kwrev = False
        self.error = None     # the reason NumPy/the spec raise
        self.want = None
        self.rd = None
        self.tol = None
        self.bound = None
        self.pinned = None    # the KNOWN_DIFFERENCES entry it reproduces
        self.mismatch = None  # operand shapes that do not broadcast
        self.layout = {}      # operand -> how the program makes it (a view: reversed, strided, transposed)
        self.view_inside = False
        self.idx = -1

    def operand_dtypes(self):
        out = []
        for p in self.op.operands():
            v = self.args.get(p.name)
            if p.type == "Ts" and v is not None:
                out += [dt_of(x) for x in v]
            elif isinstance(v, np.ndarray):
                out.append(dt_of(v))
            elif is_num(v):
                out.append("bool#" if isinstance(v.v, bool) else "num")
        return out

    def describe(self):
        parts = []
        for p in self.op.params:
            if p.name not in self.args:
                continue
            v = self.args[p.name]
            parts.append("%s=%s" % (p.name, describe_val(v)))
        mode = "static" if self.static else "eager"
        return "%s(%s) [%s, %s form]" % (self.op.name, ", ".join(parts), mode, self.form)


def describe_val(v):
    if isinstance(v, np.ndarray):
        s = "%s%s" % (dt_of(v), list(v.shape))
        if v.size <= 8:
            s += " " + np.array2string(v.ravel(), separator=",", threshold=10).replace("\n", "")
        return s
    if is_num(v):
        return "num " + (repr(v.v) if not (isinstance(v.v, float) and v.v == 0 and math.copysign(1, v.v) < 0) else "-0.0")
    if isinstance(v, list) and v and isinstance(v[0], np.ndarray):
        return "[" + ", ".join(describe_val(x) for x in v) + "]"
    return repr(v)


def num_lit(v):
    if isinstance(v, bool):
        return "true" if v else "false"
    v = float(v)
    if math.isnan(v):
        return "_nan"
    if math.isinf(v):
        return "_inf" if v > 0 else "(-_inf)"
    if v == 0:
        return "(-0.0)" if math.copysign(1, v) < 0 else "0"
    r = repr(v)
    if r.endswith(".0"):
        r = r[:-2]
    return "(" + r + ")" if v < 0 else r


def lit(p, v):
    """A non-tensor argument as TSL text, by the parameter's type."""
    if v is None:
        return "nil"
    if is_num(v):
        return num_lit(v.v)
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, str):
        return '"%s"' % v
    if isinstance(v, (int, np.integer)):
        return str(int(v)) if v >= 0 else "(%d)" % v
    if isinstance(v, float):
        return num_lit(v)
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(lit(p, x) for x in v) + "]"
    raise AssertionError("cannot write %r" % (v,))


class Program:
    """One TSL program: the cases in order; maps each source line back to its case."""
    PRE = [
        'D = args()[0]',
        'I = args()[1]',
        '_nan = float("nan")',
        '_inf = float("inf")',
        'fn _sv(p, x) {',
        '  k = type(x)',
        '  if k == "tensor" { save_npy(D + "/" + p + ".t.npy", x) }',
        '  else if k == "number" { save_npy(D + "/" + p + ".n.npy", tensor(x, "f64")) }',
        '  else if k == "bool" { save_npy(D + "/" + p + ".b.npy", tensor(x)) }',
        '  else if k == "list" {',
        '    save_npy(D + "/" + p + ".l.npy", tensor(len(x), "i64"))',
        '    for i in range(len(x)) { _sv(p + "_" + str(i), x[i]) }',
        '  } else { save_npy(D + "/" + p + ".o.npy", tensor(0, "i64")) }',
        '}',
    ]

    def __init__(self, cases, indir):
        self.lines = list(self.PRE)
        self.line_case = {}
        for c in cases:
            first = len(self.lines) + 1
            self.lines += case_lines(c, indir)
            for ln in range(first, len(self.lines) + 1):
                self.line_case[ln] = c

    def text(self):
        return "\n".join(self.lines) + "\n"


def call_text(c, names):
    """The op applied to its arguments: operator form or a call with positional and keyword
    arguments (keywords for a random tail, defaults sometimes left out)."""
    op = c.op
    if c.form == "sym":
        vals = [names[p.name] for p in op.operands()]
        if len(vals) == 1:
            return "(%s%s)" % (op.symbol, vals[0])
        return "(%s %s %s)" % (vals[0], op.symbol, vals[1])
    parts, kws = [], []
    kw = False
    present = [p for p in op.params if p.name in c.args]
    cut = len(present) - c.kwstyle if c.kwstyle else len(present)
    for i, p in enumerate(op.params):
        if p.name not in c.args:
            kw = True    # after a left-out default, the rest go by keyword
            continue
        if i >= cut:
            kw = True
        if kw:
            kws.append("%s=%s" % (p.name, names[p.name]))
        else:
            parts.append(names[p.name])
    if c.kwrev:
        kws.reverse()   # keywords in any order
    if op.call_as:
        return "%s(%s)" % (op.call_as[0], ", ".join(parts + kws + [op.call_as[1]]))
    return "%s(%s)" % (op.name, ", ".join(parts + kws))


def case_lines(c, indir):
    i = c.idx
    lines = ["# case %d: %s" % (i, c.op.name)]
    names = {}
    for p in c.op.params:
        if p.name not in c.args:
            continue
        v = c.args[p.name]
        if p.type == "Ts":
            vs = []
            for j, t in enumerate(v):
                vn = "a%d_%s%d" % (i, p.name, j)
                lines.append('%s = load_npy(I + "/%d_%s%d.npy")' % (vn, i, p.name, j))
                vs.append(vn)
            names[p.name] = "[" + ", ".join(vs) + "]"
        elif isinstance(v, np.ndarray):
            vn = "a%d_%s" % (i, p.name)
            lay = c.layout.get(p.name, "plain")
            view = {"plain": "%s", "rev": "%s[::-1]", "step": "%s[::2]", "T": "transpose(%s)", ".T": "%s.T",
                    "last": "%s[..., 1::2]"}[lay]
            load = 'load_npy(I + "/%d_%s.npy")' % (i, p.name)
            if lay != "plain" and c.view_inside:
                lines.append("%s = %s" % (vn, load))
                names[p.name] = view % vn
            else:
                lines.append("%s = %s" % (vn, view % load))
                names[p.name] = vn
        elif is_num(v) and c.runtime_nums:
            vn = "a%d_%s" % (i, p.name)
            lines.append("%s = %s" % (vn, num_lit(v.v)))
            names[p.name] = vn
        else:
            names[p.name] = lit(p, v)
    call = call_text(c, names)
    if c.static:
        lines.append("static { r%d = %s }" % (i, call))
    else:
        lines.append("r%d = %s" % (i, call))
    lines.append('_sv("%d", r%d)' % (i, i))
    return lines


def write_inputs(c, indir):
    for p in c.op.params:
        v = c.args.get(p.name)
        if p.type == "Ts" and v is not None:
            for j, t in enumerate(v):
                np.save(os.path.join(indir, "%d_%s%d.npy" % (c.idx, p.name, j)), t)
        elif isinstance(v, np.ndarray):
            np.save(os.path.join(indir, "%d_%s.npy" % (c.idx, p.name)), stored(v, c.layout.get(p.name, "plain")))


def stored(x, lay):
    """What the .npy file holds so that the view expression of `lay` gives back x."""
    if lay == "rev":
        return np.ascontiguousarray(x[::-1])
    if lay in ("T", ".T"):
        return np.ascontiguousarray(x.T)
    if lay in ("step", "last"):
        ax = 0 if lay == "step" else x.ndim - 1
        shp = list(x.shape)
        shp[ax] *= 2
        big = np.full(shp, 7, x.dtype)   # junk between the elements
        idx = [slice(None)] * x.ndim
        idx[ax] = slice(0, None, 2) if lay == "step" else slice(1, None, 2)
        big[tuple(idx)] = x
        return big
    return x
# ---------------------------------------------------------------------------------------
# building cases


def finish_case(c, g=None):
    """Fill in the expected result (or the expected error) of a case."""
    op, ref = c.op, c.ref
    if op.kind in ("K_BINARY", "K_COMPARE"):
        shp = [np.shape(c.args[p.name]) for p in op.operands() if isinstance(c.args.get(p.name), np.ndarray)]
        try:
            np.broadcast_shapes(*shp)
        except ValueError:
            c.error = "shape mismatch"
            c.mismatch = [np.shape(c.args[p.name]) if isinstance(c.args[p.name], np.ndarray) else () for p in op.operands()]
            return c
    try:
        rds = expected_dtypes(op, c, ref)
    except Raise as e:
        c.error = str(e)
        return c
    rd = rds[0]
    if ref.fix is not None:
        c.args = ref.fix(dict(c.args), rd)
        for k, v in c.args.items():
            if isinstance(v, np.generic):
                c.args[k] = np.asarray(v)
    if ref.skip is not None:
        c.rd, c.rds = rd, rds
        return c
    cd = compute_dtype(op, c, rd)
    acc = A(c, cd, rd)
    acc.bound = None
    try:
        with np.errstate(all="ignore"):
            want = ref.fn(acc)
    except Raise as e:
        c.error = str(e)
        return c
    except (ValueError, IndexError, TypeError, np.AxisError, np.linalg.LinAlgError) as e:
        c.error = "NumPy raises %s: %s" % (type(e).__name__, e)
        return c
    wants = want if isinstance(want, list) else [want]
    c.want = []
    for w, d in zip(wants, rds):
        w = np.asarray(w)
        nd = "f64" if d == "number" else ("bool" if d == "boolnum" else d)
        c.want.append(w.astype(NPT[nd]))
    c.rd, c.rds = rd, rds
    tol = ref.tol(acc) if callable(ref.tol) else ref.tol
    c.tol = tol
    c.bound = acc.bound
    c.alt = getattr(acc, "alt", None)
    if c.alt is not None:
        c.alt = np.asarray(c.alt).astype(c.want[0].dtype)
    c.acc = acc
    acc.want = c.want
    return c


def make_case(g, op, ref):
    args = ref.plan(g, op, ref)
    for k, v in args.items():   # numpy scalars (from indexing) are 0-d tensors here
        if isinstance(v, np.generic):
            args[k] = np.asarray(v)
    c = Case(op, args, ref)
    finish_case(c, g)
    return c


def style_case(g, c, symbols_ok):
    op = c.op
    if op.symbol and symbols_ok.get(op.symbol) and (op.syntax_only or g.chance(0.5)):
        c.form = "sym"
    elif op.syntax_only and not op.call_as:
        c.form = "sym"
    c.kwstyle = g.r.randint(0, 2) if g.chance(0.4) else 0
    c.kwrev = g.chance(0.5)
    c.static = "F_DYNAMIC" not in op.flags and g.chance(0.35)
    c.runtime_nums = g.chance(0.5)
    for p in op.operands():
        v = c.args.get(p.name)
        if isinstance(v, np.ndarray) and v.ndim and g.chance(0.25):
            c.layout[p.name] = g.pick(["rev", "step", "T", ".T"] + (["last"] if v.ndim >= 2 else []))
    c.view_inside = g.chance(0.5)
    if c.form == "sym" and (any(p.name not in c.args for p in op.operands()) or c.args.get("transpose_a")):
        c.form = "call"   # (the operator has no attributes)

# ---------------------------------------------------------------------------------------
# running TSL


LOC_RE = re.compile(r"^(.*?):(\d+):(\d+): error: (.*)$")


def run_tsl(tsl, flags, prog_path, outdir, indir, timeout=120, env=None):
    e = dict(os.environ)
    if env:
        e.update(env)
    try:
        p = subprocess.run([tsl] + flags + [prog_path, outdir, indir], capture_output=True, text=True,
                           timeout=timeout, env=e, errors="replace")
        return p.returncode, p.stdout, p.stderr
    except subprocess.TimeoutExpired:
        return 124, "", "timeout after %d s" % timeout


def first_error(stderr):
    for line in stderr.splitlines():
        m = LOC_RE.match(line)
        if m:
            return m
    return None


def case_done(outdir, c):
    i = c.idx
    for suf in (".t.npy", ".n.npy", ".b.npy", ".l.npy", ".o.npy"):
        if os.path.exists(os.path.join(outdir, "%d%s" % (i, suf))):
            return True
    return False


class Finding:
    def __init__(self, case, kind, msg):
        self.case, self.kind, self.msg = case, kind, msg
        self.known = None

    def text(self):
        return "%s: %s: %s\n      case: %s" % (self.case.op.name if self.case else "-", self.kind, self.msg,
                                             self.case.describe() if self.case else "-")


def run_batch(tsl, cases, workdir, tag, flags, findings, sanitizer, env=None):
    """Runs the cases as one program (rerunning from the next case after each unexpected
    error); returns the output folder."""
    outdir = os.path.join(workdir, "out-" + tag)
    indir = os.path.join(workdir, "in")
    os.makedirs(outdir, exist_ok=True)
    todo = list(cases)
    failed = set()
    reruns = 0
    unlocated = 0
    explain = []
    while todo:
        prog = Program(todo, indir)
        path = os.path.join(workdir, "prog-%s-%d.tsl" % (tag, reruns))
        with open(path, "w") as f:
            f.write(prog.text())
        rc, out, err = run_tsl(tsl, flags, path, outdir, indir, env=env)
        if "Sanitizer" in err:
            sanitizer.append("%s: %s" % (tag, [l for l in err.splitlines() if "Sanitizer" in l][0]))
        explain += [l for l in err.splitlines() if "runs eagerly" in l]
        if rc == 0:
            break
        m = first_error(err)
        c = None
        trace = "\n".join(l for l in err.splitlines() if ": error: " in l or "called from" in l)
        for lm in re.finditer(re.escape(path) + r":(\d+):", trace):   # the error, or the call that led to it
            c = prog.line_case.get(int(lm.group(1)))
            if c is not None:
                break
        if c is None:   # a crash or an error without a location: the first case not done
            c = next((x for x in todo if not case_done(outdir, x)), None)
            if c is None:
                findings.append(Finding(None, "harness", "%s run failed after every case: exit %d: %s" % (tag, rc, err[-500:])))
                break
            what = "crash" if rc not in (0, 1) else "error"
            msg = "exit %d: %s" % (rc, (err.strip().splitlines() or ["(no message)"])[-1][:300])
            unlocated += 1
            if unlocated >= 20 and not any(case_done(outdir, x) for x in cases):
                findings.append(Finding(None, "harness", "%s run: TSL fails on every program: %s" % (tag, msg)))
                break
        else:
            what = "static" if "verify-static" in m.group(4) else "error"
            msg = m.group(4)[:400]
        if c.error is None or what in ("static", "crash"):
            findings.append(Finding(c, what if tag == "plain" or what in ("static", "crash") else "static-error",
                                    ("%s run: " % tag if tag != "plain" else "") + msg))
        failed.add(c.idx)
        pos = todo.index(c)
        todo = [x for x in todo[pos + 1:]]
        reruns += 1
        if reruns > 400:
            findings.append(Finding(None, "harness", "too many reruns in the %s run" % tag))
            break
    return outdir, failed, explain, reruns


def load_result(outdir, i):
    """What case i left: ('tensor'|'number'|'bool'|'list'|'other', value)."""
    base = os.path.join(outdir, str(i))
    if os.path.exists(base + ".t.npy"):
        return "tensor", np.load(base + ".t.npy")
    if os.path.exists(base + ".n.npy"):
        return "number", np.load(base + ".n.npy")
    if os.path.exists(base + ".b.npy"):
        return "bool", np.load(base + ".b.npy")
    if os.path.exists(base + ".l.npy"):
        n = int(np.load(base + ".l.npy"))
        return "list", [load_result(outdir, "%s_%d" % (i, k)) for k in range(n)]
    if os.path.exists(base + ".o.npy"):
        return "other", "not a tensor, number, bool or list"
    return None, None


def check_case(c, res, findings):
    kind, val = res
    op = c.op
    want_kind = "list" if op.nout > 1 else {"number": "number", "boolnum": "bool"}.get(c.rd, "tensor")
    if kind != want_kind:
        findings.append(Finding(c, "kind", "TSL returned a %s, want a %s" % (kind, want_kind)))
        return
    gots = [v for k, v in val] if kind == "list" else [val]
    if kind == "list" and len(gots) != op.nout:
        findings.append(Finding(c, "kind", "a list of %d, want %d" % (len(gots), op.nout)))
        return
    for k, (g_, d) in enumerate(zip(gots, c.rds)):
        nd = {"number": "f64", "boolnum": "bool"}.get(d, d)
        if kind == "list" and not isinstance(g_, np.ndarray):
            findings.append(Finding(c, "kind", "result %d is not a tensor" % k))
            return
        if dt_of(g_) != nd:
            findings.append(Finding(c, "dtype", "result%s dtype %s, want %s" % (
                " %d" % k if op.nout > 1 else "", dt_of(g_), nd)))
            return
    if c.ref.skip is not None:
        g_ = gots[0]
        if g_.shape != tuple(shape_of(c.acc_or_new())):
            findings.append(Finding(c, "shape", "shape %s" % list(g_.shape)))
        elif not c.ref.skip(g_, c.acc_or_new()):
            findings.append(Finding(c, "value", "values out of range"))
        return
    if c.ref.check is not None:
        e = c.ref.check(c.acc, gots)
        if e:
            findings.append(Finding(c, "value", e))
        return
    for k, (g_, w) in enumerate(zip(gots, c.want)):
        e = compare(g_, w, c.tol, c.bound)
        if e and k == 0 and c.alt is not None and compare(g_, c.alt, c.tol, c.bound) is None:
            e = None
        if e:
            findings.append(Finding(c, "shape" if e.startswith("shape") else "value",
                                    ("result %d: " % k if op.nout > 1 else "") + e))
            return


def _acc_or_new(self):
    return A(self, None, None)


Case.acc_or_new = _acc_or_new


def same_bits(a, b):
    ka, va = a
    kb, vb = b
    if ka != kb:
        return False
    if ka == "list":
        return len(va) == len(vb) and all(same_bits(x, y) for x, y in zip(va, vb))
    if ka == "other":
        return va == vb
    return va.dtype == vb.dtype and va.shape == vb.shape and va.tobytes() == vb.tobytes()

# ---------------------------------------------------------------------------------------
# error cases: tiny programs, eagerly and in a static block


def error_program(c, static):
    """The case alone: its inputs, then the call (in a static block or not); the call's line."""
    c.static = static
    lines = Program.PRE[:4] + [l for l in case_lines(c, "I") if not l.startswith("_sv(")]
    return "\n".join(lines) + "\n", len(lines)


def run_error_case(tsl, c, workdir, sanitizer):
    indir = os.path.join(workdir, "in")
    res = []
    for static in (False, True):
        text, line = error_program(c, static)
        path = os.path.join(workdir, "err-%d-%s.tsl" % (c.idx, "s" if static else "e"))
        with open(path, "w") as f:
            f.write(text)
        rc, out, err = run_tsl(tsl, [], path, workdir, indir, timeout=60)
        if "Sanitizer" in err:
            sanitizer.append("error case %d: %s" % (c.idx, [l for l in err.splitlines() if "Sanitizer" in l][0]))
        m = first_error(err)
        res.append((rc, m, line, err))
    out = []
    (rc0, m0, l0, e0), (rc1, m1, l1, e1) = res
    if rc0 == 0:
        out.append(Finding(c, "noerror", "TSL gives no error; want one (%s)" % c.error))
        return out
    if rc0 != 1 or not m0:
        out.append(Finding(c, "crash", "exit %d, want 1 with a located error (%s): %s" % (rc0, c.error, e0.strip()[-300:])))
        return out
    if c.mismatch is not None:   # the call form may name the operator or the function
        names = [c.op.symbol] if c.form == "sym" else [c.op.name, c.op.symbol]
        wants = ["shape mismatch for '%s': %s and %s" % (n, list(c.mismatch[0]), list(c.mismatch[1])) for n in names if n]
        want = wants[0]
        if not any(w in m0.group(4) for w in wants):
            out.append(Finding(c, "errmsg", "message '%s', want '%s' (spec section 5)" % (m0.group(4), want)))
    if int(m0.group(2)) != l0:
        out.append(Finding(c, "errloc", "error at line %s, want the call's line %d: %s" % (m0.group(2), l0, m0.group(4))))
    if rc1 != 1 or not m1:
        out.append(Finding(c, "static-error", "in a static block: exit %d: %s" % (rc1, e1.strip()[-300:])))
    elif m1.group(4) != m0.group(4) or m1.group(2) != m0.group(2):
        out.append(Finding(c, "static-error", "static message %s:%s '%s' differs from eager %s:%s '%s'" % (
            m1.group(2), m1.group(3), m1.group(4), m0.group(2), m0.group(3), m0.group(4))))
    return out

# ---------------------------------------------------------------------------------------
# operator symbols: does each one parse?


def probe_symbols(tsl, ops, workdir):
    syms = {}
    for op in ops:
        if op.symbol:
            syms[op.symbol] = len(op.operands())
    def prog(sym, n):
        return "a = tensor([1], \"i64\")\nb = %s\n" % (("(%sa)" % sym) if n == 1 else ("(a %s a)" % sym))
    path = os.path.join(workdir, "probe.tsl")
    with open(path, "w") as f:
        f.write("".join(prog(s, n) for s, n in syms.items()))
    rc, _, _ = run_tsl(tsl, [], path, workdir, workdir, timeout=30)
    if rc == 0:
        return {s: True for s in syms}, {}
    ok, why = {}, {}
    for s, n in syms.items():
        with open(path, "w") as f:
            f.write(prog(s, n))
        rc, _, err = run_tsl(tsl, [], path, workdir, workdir, timeout=30)
        ok[s] = rc == 0
        if rc:
            m = first_error(err)
            why[s] = m.group(4) if m else err.strip()[-200:]
    return ok, why

# ---------------------------------------------------------------------------------------
# differences TSL is known to have: each entry explains findings and has a reproducer that
# runs every time (when it stops reproducing, the entry must go)


class Known:
    """A difference TSL is known to have. `ops` the op names it concerns, `kind` the finding's
    kind, `when(case, finding)` which findings it explains; `repro` builds the arguments of a
    case that must reproduce it (run every time), or `tsl` is a program that must fail with
    the message `expect`; neither for a 'syntax' finding (the operator probe runs every time)."""
    def __init__(self, id, ops, kind, why, when=lambda c, f: True, repro=None, tsl=None, expect=None):
        self.id, self.ops, self.kind, self.why, self.when = id, ops.split(), kind.split(), why, when
        self.repro, self.tsl, self.expect = repro, tsl, expect
        self.hits = 0
        self.reproduced = False

    def matches(self, f):
        return f.case is not None and f.case.op.name in self.ops and f.kind in self.kind and self.when(f.case, f)


def dt_of_arg(v):
    return dt_of(v) if isinstance(v, np.ndarray) else "number"


def all_bool(c, f=None):
    return all(d in ("bool", "bool#") for d in c.operand_dtypes())


def has_posinf(c, f=None):
    t = c.args.get("t")
    return isinstance(t, np.ndarray) and t.dtype.kind == "f" and bool(np.isposinf(t).any())


B = lambda *v: np.array(v, dtype=np.bool_)
F32 = lambda *v: np.array(v, dtype=np.float32)

KNOWN_DIFFERENCES = [
]

# ---------------------------------------------------------------------------------------


def print_stats(cases, err_cases):
    def forms(c):
        k = ["t" if isinstance(c.args.get(p.name), np.ndarray) else "n" for p in c.op.operands()
             if p.name in c.args and c.args[p.name] is not None and p.type != "Ts"]
        return "".join(k)
    tally = {}
    def add(k):
        tally[k] = tally.get(k, 0) + 1
    pairs = set()
    for c in cases:
        add("cases")
        if c.op.kind in ("K_BINARY", "K_COMPARE"):
            f = forms(c)
            add("binary " + {"tt": "tensor-tensor", "tn": "tensor-number", "nt": "number-tensor",
                             "nn": "number-number"}.get(f, f))
            if f == "tt":
                pairs.add((c.op.name, tuple(c.operand_dtypes())))
        add("static" if c.static else "eager")
        if c.form == "sym":
            add("operator form")
        if c.layout:
            add("with a view operand")
        if any(isinstance(v, np.ndarray) and v.size == 0 for v in c.args.values()):
            add("with a size-0 operand")
        if any(isinstance(v, np.ndarray) and v.size > 1000 for v in c.args.values()):
            add("with a >1000-element operand")
        if any(isinstance(v, np.ndarray) and v.dtype.kind == "f" and not np.isfinite(v).all() for v in c.args.values()):
            add("with NaN/inf inputs")
    nbin = len(set(n for n, _ in pairs))
    print("stats: " + ", ".join("%s %d" % (k, v) for k, v in sorted(tally.items())))
    print("stats: %d (op, dtype pair) tensor-tensor combinations over %d binary ops" % (len(pairs), nbin))
    errs = {}
    for c in err_cases:
        errs[c.error.split(":")[0][:40]] = errs.get(c.error.split(":")[0][:40], 0) + 1
    print("stats: %d error cases: %s" % (len(err_cases), "; ".join("%s %d" % kv for kv in sorted(errs.items()))))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tsl", default=os.path.join(ROOT, "bin", "tsl"))
    ap.add_argument("--count", type=int, default=int(os.environ.get("NUMPY_DIFF_COUNT", "16")),
                    help="random cases per op (default $NUMPY_DIFF_COUNT or 16)")
    ap.add_argument("--seed", type=int, default=int(os.environ.get("NUMPY_DIFF_SEED", "1")))
    ap.add_argument("--ops", default=None, help="only the ops whose name matches this regex")
    ap.add_argument("--keep", default=None, help="write the programs and files here and keep them")
    ap.add_argument("--max-errors", type=int, default=None, help="error cases per op (default count / 3)")
    ap.add_argument("-v", "--verbose", action="store_true", help="print every finding, known ones too")
    ap.add_argument("--stats", action="store_true", help="print what the cases cover")
    opt = ap.parse_args()
    t0 = time.time()
    tsl = os.path.abspath(opt.tsl)
    if not os.access(tsl, os.X_OK):
        print("FAIL: numpy_diff: no TSL binary at %s" % tsl)
        return 2
    ops = parse_opsdef(os.path.join(ROOT, "ops", "ops.def"))
    names = [op.name for op in ops]
    missing = [n for n in names if n not in REF]
    stale = [n for n in REF if n not in names]
    if missing or stale:
        if missing:
            print("FAIL: numpy_diff: ops.def has op(s) with no NumPy reference in REF: %s" % ", ".join(missing))
        if stale:
            print("FAIL: numpy_diff: REF has entries for ops that ops.def no longer has: %s" % ", ".join(stale))
        return 1
    if opt.ops:
        ops = [op for op in ops if re.search(opt.ops, op.name)]
    workdir = opt.keep or tempfile.mkdtemp(prefix="numpy_diff.")
    if opt.keep:
        shutil.rmtree(workdir, ignore_errors=True)
    os.makedirs(os.path.join(workdir, "in"), exist_ok=True)
    try:
        return run(opt, tsl, ops, workdir, t0)
    finally:
        if not opt.keep:
            shutil.rmtree(workdir, ignore_errors=True)


def run(opt, tsl, ops, workdir, t0):
    symbols_ok, symbols_why = probe_symbols(tsl, ops, workdir)
    findings = []
    for op in ops:
        if op.symbol and not symbols_ok.get(op.symbol):
            findings.append(Finding(Case(op, {}, REF[op.name]), "syntax", "operator '%s' does not parse: %s" % (
                op.symbol, symbols_why.get(op.symbol))))
    max_err = opt.max_errors if opt.max_errors is not None else max(2, opt.count // 3)
    cases, err_cases, skipped = [], [], {}
    for op in ops:
        ref = REF[op.name]
        g = Gen(opt.seed * 1000003 + zlib.crc32(op.name.encode()))   # each op's cases depend on the seed only
        if op.syntax_only and not op.call_as and not symbols_ok.get(op.symbol):
            skipped[op.name] = "operator does not parse"
            continue
        nerr = 0
        tries = 0
        made = 0
        quota = max(opt.count, 31) if op.kind in ("K_BINARY", "K_COMPARE") else opt.count
        while made < quota and tries < quota * 8:
            tries += 1
            g.k = tries - 1
            c = make_case(g, op, ref)
            style_case(g, c, symbols_ok)
            if c.error is not None:
                if nerr >= max_err:
                    continue
                nerr += 1
                err_cases.append(c)
            else:
                cases.append(c)
            made += 1
        if ref.skip is not None:
            skipped[op.name] = "random: dtype, shape and range checked only"
    # the reproducers of the known differences run every time
    known = [k for k in KNOWN_DIFFERENCES if any(op.name in k.ops for op in ops)]
    for k in known:
        if k.repro is None:
            continue
        op = next(o for o in ops if o.name in k.ops)
        c = Case(op, k.repro(), REF[op.name])
        finish_case(c)
        c.pinned = k
        c.form = "sym" if op.syntax_only else "call"
        (err_cases if c.error is not None else cases).append(c)
    for i, c in enumerate(cases + err_cases):
        c.idx = i
        write_inputs(c, os.path.join(workdir, "in"))
    sanitizer = []
    out_a, failed_a, explain, reruns_a = run_batch(tsl, cases, workdir, "plain", [], findings, sanitizer,
                                                   env={"TSL_EXPLAIN": "1"})
    out_b, failed_b, _, reruns_b = run_batch(tsl, [c for c in cases if c.idx not in failed_a], workdir, "verify", ["--verify-static"], findings, sanitizer)
    for c in cases:
        if c.idx in failed_a:
            continue
        res = load_result(out_a, c.idx)
        if res[0] is None:
            findings.append(Finding(c, "harness", "no result file"))
            continue
        check_case(c, res, findings)
        if c.idx not in failed_b:
            rb = load_result(out_b, c.idx)
            if not same_bits(res, rb):
                findings.append(Finding(c, "static", "the --verify-static run's result differs from the plain run's"))
    with ThreadPoolExecutor(max_workers=max(2, os.cpu_count() or 2)) as ex:
        for fs in ex.map(lambda c: run_error_case(tsl, c, workdir, sanitizer), err_cases):
            findings += fs
    # static blocks that did not compile
    eager_static = len(explain)
    # classify
    for f in findings:
        for k in known:
            if k.matches(f):
                f.known = k
                k.hits += 1
                if f.case is not None and f.case.pinned is k:
                    k.reproduced = True
                break
    for k in known:
        if k.tsl is not None:
            path = os.path.join(workdir, "known-%s.tsl" % k.id)
            with open(path, "w") as f:
                f.write(k.tsl)
            rc, _, err = run_tsl(tsl, [], path, workdir, workdir, timeout=60)
            k.reproduced = rc == 1 and k.expect in err
        elif k.repro is None and k.hits:
            k.reproduced = True
    unknown = [f for f in findings if f.known is None]
    stale = [k for k in known if not k.reproduced]
    # report
    nstatic = sum(1 for c in cases if c.static)
    for f in (findings if opt.verbose else unknown):
        print(("known (%s): " % f.known.id if f.known else "FAIL: ") + f.text())
    for k in stale:
        print("FAIL: KNOWN_DIFFERENCES entry '%s' (%s) no longer reproduces: if it is fixed, remove the entry" % (
            k.id, " ".join(k.ops)))
    for s in sanitizer:
        print("FAIL: sanitizer report: " + s)
    if eager_static:
        print("note: %d static blocks ran eagerly: %s" % (eager_static, explain[0]))
    nops = len(ops)
    summary = ("numpy_diff: seed %d, %d ops, %d cases (%d in static blocks, %d operator form), %d error cases, "
               "%d reruns; skipped %d (%s); %d known differences (%d entries); %.1f s" % (
                   opt.seed, nops, len(cases), nstatic, sum(1 for c in cases if c.form == "sym"), len(err_cases),
                   reruns_a + reruns_b, len(skipped), ", ".join(sorted(skipped)), sum(1 for f in findings if f.known),
                   len(known), time.time() - t0))
    if opt.stats:
        print_stats(cases, err_cases)
    bad = unknown or stale or sanitizer
    print(("FAIL: " if bad else "ok: ") + summary)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
