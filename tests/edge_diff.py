#!/usr/bin/python3
"""edge_diff.py - the edge cases of spec sections 3 and 5 (tensors, dtypes) against NumPy/PyTorch.

Usage: /usr/bin/python3 tests/edge_diff.py [--tsl bin/tsl] [--only REGEX] [-v]

tests/numpy_diff.py draws random cases per op; this one walks fixed tables of the cases that
conformance tests like to probe: empty tensors ([0], [2, 0], [0, 2]) through every reduction with
every axis form (nil, negative, out of range, lists, keepdims), NaN and inf through max/min/argmax/
sort/unique/clip/maximum/minimum, i64 floor division and modulo of negatives, division by zero,
integer overflow, bool arithmetic, every binary operator between bool/i64/f32/f64 tensors and
integral, non-integral and bool numbers, 0-d tensors, indexing (negative and large steps, clamped
slices, several index arrays broadcasting, masks, assignment with broadcasting and repeated
indices), reshape with -1, transpose, concat/stack with empty parts, where/arange/linspace
endpoints, sort stability, cumsum of ints, matmul of 1-d and batched operands.

Expected values come from NumPy; expected dtypes from PyTorch's promotion, as the spec says
(spec_promote, checked against torch.result_type when torch is installed); where the spec states a rule (an error where NumPy returns something), the case
follows the spec and says so. Each case's TSL expression runs three ways: eagerly, inside
`static { }`, and the static program again under --verify-static. A result is saved with save_npy
(a number or a list is written as text) and compared here: dtype and shape exactly, integers and
bools exactly, floats exactly for elementwise ops (NaN where NumPy has NaN, the sign of zero) and
within a few ULP of the float64 result for reductions and matmul. A case NumPy (or the spec)
makes an error must fail in all three ways with a located error.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import warnings

import numpy as np
try:
    import torch    # optional: it confirms spec_promote's dtypes
except ImportError:
    torch = None

np.seterr(all="ignore")        # the references divide by zero and take NaN on purpose
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DT = {"f32": np.float32, "f64": np.float64, "i64": np.int64, "bool": np.bool_}
NAME = {np.dtype(v): k for k, v in DT.items()}
ERR = "error"           # a case NumPy or the spec makes an error

# ------------------------------------------------------------------ inputs (same in both languages)
F32, F64, I64, B = np.float32, np.float64, np.int64, np.bool_
nan, inf = float("nan"), float("inf")
INPUTS = {
    "f": np.array([[1.5, -2.0, 3.25], [-0.5, 4.0, -6.75]], F32),
    "d": np.array([[1.5, -2.0, 3.25], [-0.5, 4.0, -6.75]], F64),
    "fx": np.array([1.0, nan, 3.0, -inf, inf, -0.0, 2.0, nan], F32),
    "dn": np.array([1.0, nan, 3.0, -inf, inf, -0.0, 2.0, nan], F64),
    "fn2": np.array([[3.0, nan, 1.0], [2.0, 5.0, -inf]], F32),
    "fz": np.array([0.0, -0.0, 1.0, -1.0, nan, inf, -inf, 2.5], F32),
    "e0": np.zeros(0, F32), "e20": np.zeros((2, 0), F32), "e02": np.zeros((0, 2), F32),
    "ei0": np.zeros(0, I64), "eb0": np.zeros(0, B), "ei20": np.zeros((2, 0), I64),
    "ed0": np.zeros(0, F64),
    "i": np.array([-7, -3, -1, 0, 1, 3, 7, 8], I64),
    "j": np.array([2, -2, 3, -3, 5, -5, 2, -4], I64),
    "im": np.array([[3, -1, 4], [1, -5, 9]], I64),
    "ibig": np.array([2**62, -2**63, 2**63 - 1, 3], I64),
    "b": np.array([True, False, True, True], B),
    "bm": np.array([[True, False, True], [False, False, True]], B),
    "s0": np.array(2.5, F32), "i0": np.array(-3, I64), "b0": np.array(True, B), "d0": np.array(-1.25, F64),
    "t3": np.arange(24, dtype=F32).reshape(2, 3, 4),
    "v": np.arange(10, dtype=F32) * 0.5 - 2,
    "ties": np.array([3.0, 1.0, 3.0, 1.0, 2.0, 1.0, nan, 3.0], F32),
    "tiesi": np.array([2, 1, 2, 1, 0, 2, 1, 0], I64),
    "huge": np.array([1e20, -1e20, 3e9, 9.3e18, -9.3e18, 2.5, -2.5, 0.0], F32),
    "hugen": np.array([nan], F32), "hugei": np.array([inf], F32), "hugem": np.array([1e19], F64),
    "m23": np.arange(6, dtype=F32).reshape(2, 3) - 2, "m34": np.arange(12, dtype=F32).reshape(3, 4) / 4,
    "b234": np.arange(24, dtype=F32).reshape(2, 3, 4) / 8, "b42": np.arange(8, dtype=F32).reshape(4, 2) - 3,
    "b143": np.arange(12, dtype=F32).reshape(1, 4, 3) / 3, "v3": np.array([1.0, -2.0, 0.5], F32),
    "v4": np.array([0.5, 1.0, -1.5, 2.0], F32), "mi": np.arange(6, dtype=I64).reshape(2, 3) - 2,
    "mi32": np.arange(6, dtype=I64).reshape(3, 2) * 3 - 7,
}

# ------------------------------------------------------------------ cases


class Case:
    def __init__(self, tsl, ref, tol=0, note="", exact_zero=True, static=True):
        self.tsl, self.ref, self.tol, self.note = tsl, ref, tol, note
        self.exact_zero = exact_zero     # compare the sign of zero too
        self.static = static             # also run inside static { }


CASES = []


def add(tsl, ref, **kw):
    """ref: the expected value, ERR, None (no reference: skipped) or a function computing it
    (a NumPy exception there means the case is an error)."""
    if callable(ref):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                ref = np.asarray(ref())
        except (ValueError, IndexError, TypeError):
            ref = ERR
    CASES.append(Case(tsl, ref, **kw))


def ns():
    """The inputs as NumPy arrays, copies (a reference may not change them)."""
    return {k: v.copy() for k, v in INPUTS.items()}


def A(name):
    return INPUTS[name].copy()


# --- reductions --------------------------------------------------------------------------------
RED_INPUTS = ["e0", "e20", "e02", "ei0", "eb0", "ei20", "ed0", "f", "fx", "fn2", "im", "b", "bm", "s0", "i0", "b0"]
AXES = [None, 0, -1, 1, -2, 2, -3, [0, 1], [1, 0], [-1, 0], [0, 0], [], [0, 2]]


def np_axis(ax):
    return tuple(ax) if isinstance(ax, list) else ax


def reduce_ref(op, x, ax, keep):
    """NumPy's reduction with the spec's dtypes: sum/prod of bool/i64 give i64, mean/var/std of them f32."""
    a = np_axis(ax)
    if x.ndim == 0 and ax is not None:
        # NumPy reduces a 0-d array over axis 0 or -1 to itself, except in mean/var/std (and
        # in a tuple); PyTorch everywhere: the spec's ops agree, as PyTorch does
        if [k for k in (ax if isinstance(ax, list) else [ax]) if k not in (0, -1)] or \
                isinstance(ax, list) and len(ax) > 1:
            return ERR
        a = None
    if isinstance(ax, list) and len(set(((k % x.ndim) if x.ndim else k) for k in ax)) != len(ax):
        return ERR                   # NumPy: duplicate value in 'axis'
    if op in ("argmax", "argmin"):
        if isinstance(ax, list):
            return None              # NumPy's argmax takes one axis: no reference
        f = getattr(np, op)
        if x.size == 0 and (ax is None or x.shape[ax] == 0):
            return ERR
        r = f(x, axis=a, keepdims=keep)
        return np.asarray(r, I64)
    kind = x.dtype.kind
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if op in ("max", "min"):
            if x.size == 0:
                # spec 5: an error on an empty reduced axis, even when the result would be empty
                axes = range(x.ndim) if a is None else ([a] if isinstance(a, int) else a)
                try:
                    if any(x.shape[k] == 0 for k in axes):
                        return ERR
                except IndexError:
                    return ERR
            r = getattr(np, "amax" if op == "max" else "amin")(x, axis=a, keepdims=keep)
            return np.asarray(r, x.dtype)
        if op in ("sum", "prod"):
            r = getattr(np, op)(x.astype(F64) if kind == "f" else x.astype(I64), axis=a, keepdims=keep)
            return np.asarray(r, x.dtype if kind == "f" else I64)
        if op in ("mean", "var", "std"):
            r = getattr(np, op)(x.astype(F64), axis=a, keepdims=keep)
            return np.asarray(r, F64 if x.dtype == F64 else F32)
        if op in ("any", "all"):
            return np.asarray(getattr(np, op)(x, axis=a, keepdims=keep), B)
    raise ValueError(op)


def axis_text(ax):
    return "nil" if ax is None else str(ax).replace(" ", "")


for op in ["sum", "mean", "max", "min", "argmax", "argmin", "prod", "var", "std", "any", "all"]:
    for name in RED_INPUTS:
        for ax in AXES:
            for keep in (False, True):
                x = INPUTS[name]
                if ax is None and keep and op not in ("sum", "max", "argmax"):
                    continue
                try:
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        r = reduce_ref(op, x, ax, keep)
                except (ValueError, IndexError, TypeError, np.AxisError):
                    r = ERR
                if r is None:
                    continue
                kw = "" if ax is None and not keep else ", axis=%s" % axis_text(ax)
                if keep:
                    kw += ", keepdims=true"
                tol = 0 if op in ("max", "min", "argmax", "argmin", "any", "all") or x.dtype.kind != "f" and op in ("sum", "prod") else 4
                add("%s(%s%s)" % (op, name, kw), r, tol=tol)

# --- binary operators and promotion -------------------------------------------------------------
BIN_T = {"f32": np.array([1.5, -2.0, 0.0, -0.0, 7.0, -7.5], F32),
         "f64": np.array([1.5, -2.0, 0.0, -0.0, 7.0, -7.5], F64),
         "i64": np.array([3, -2, 0, 7, -7, 1], I64),
         "bool": np.array([True, False, True, False, True, True], B)}
BIN_U = {"f32": np.array([2.0, 3.0, -0.0, 1.5, -2.0, 4.0], F32),
         "f64": np.array([2.0, 3.0, -0.0, 1.5, -2.0, 4.0], F64),
         "i64": np.array([2, -3, 5, -2, 2, 4], I64),
         "bool": np.array([True, True, False, False, True, False], B)}
for k, v in BIN_T.items():
    INPUTS["t_" + k] = v
for k, v in BIN_U.items():
    INPUTS["u_" + k] = v
NUMS = {"2": 2, "(-3)": -3, "2.5": 2.5, "true": True, "0": 0, "(-0.5)": -0.5}    # (-3) ** t: unary minus binds looser
OPS = {"+": np.add, "-": np.subtract, "*": np.multiply, "/": np.true_divide, "//": np.floor_divide,
       "%": np.remainder, "**": np.power, "==": np.equal, "<": np.less, ">=": np.greater_equal,
       "&": np.bitwise_and, "|": np.bitwise_or, "^": np.bitwise_xor,
       "maximum": np.maximum, "minimum": np.minimum}
CMP = ("==", "<", ">=")


RANK = [np.dtype(B), np.dtype(I64), np.dtype(F32), np.dtype(F64)]


def spec_promote(a, b):
    """Spec 5's promotion (PyTorch's): tensors by bool < i64 < f32 < f64; a number keeps the
    tensor's dtype when it fits the tensor's kind, else bool with an integral number is i64 and
    the rest f32."""
    ta, tb = isinstance(a, np.ndarray), isinstance(b, np.ndarray)
    if ta and tb:
        return max(a.dtype, b.dtype, key=RANK.index)
    t, n = (a, b) if ta else (b, a)
    if t.dtype.kind == "f":
        return t.dtype
    if isinstance(n, bool):
        return t.dtype
    if float(n).is_integer():
        return np.dtype(I64)
    return np.dtype(F32)


def promote(a, b, op):
    rt = spec_promote(a, b)
    if torch is not None:       # the rule is PyTorch's: check it where PyTorch is at hand
        tt = [torch.from_numpy(x.copy()) if isinstance(x, np.ndarray) else x for x in (a, b)]
        want = np.dtype(str(torch.result_type(*tt)).replace("torch.", ""))
        assert want == rt, "spec_promote(%r, %r) is %s, PyTorch says %s" % (a, b, rt, want)
    return rt


def bin_ref(op, a, b):
    rt = promote(a, b, op)
    if op in CMP:
        with np.errstate(all="ignore"):
            if rt.kind == "f":
                return np.asarray(OPS[op](np.asarray(a).astype(rt), np.asarray(b).astype(rt)), B)
            return np.asarray(OPS[op](np.asarray(a, F64 if isinstance(a, float) else None),
                                      np.asarray(b, F64 if isinstance(b, float) else None)), B)
    if op in ("&", "|", "^"):
        if rt.kind == "f":
            return ERR
    if op == "/" and rt.kind in "biu":
        rt = np.dtype(F32)
    if op in ("-",) and rt == np.dtype(B):
        return ERR                  # NumPy and PyTorch refuse bool - bool
    if op in ("//", "%") and rt.kind in "iu" and np.any(np.asarray(b) == 0):
        return ERR                  # spec 2, 5: i64 // 0 and i64 % 0 are errors
    if op == "**" and rt.kind in "iu" and np.any(np.asarray(b) < 0):
        return ERR                  # NumPy: integers to negative integer powers are not allowed
    x, y = np.asarray(a).astype(rt), np.asarray(b).astype(rt)
    if op in ("//", "%", "**") and rt == np.dtype(B):
        x, y = x.astype(I64), y.astype(I64)      # PyTorch: bool // bool etc. compute as integers
    with np.errstate(all="ignore"):
        r = OPS[op](x, y)
    if op in ("//", "%", "**") and rt == np.dtype(B):
        return None                  # PyTorch's dtype for these is unclear: no reference
    return np.asarray(r, rt)


def tsl_num(s):
    return s


for op in OPS:
    for ka in BIN_T:
        for kb in BIN_U:
            r = bin_ref(op, BIN_T[ka], BIN_U[kb])
            if r is None:
                continue
            e = "%s(t_%s, u_%s)" % (op, ka, kb) if op.isalpha() else "t_%s %s u_%s" % (ka, op, kb)
            add(e, r, tol=1 if op == "**" else 0)
    for ka in BIN_T:
        for s, n in NUMS.items():
            for left in (False, True):
                a, b = (n, BIN_T[ka]) if left else (BIN_T[ka], n)
                r = bin_ref(op, a, b)
                if r is None:
                    continue
                if op.isalpha():
                    e = "%s(%s, %s)" % (op, s, "t_" + ka) if left else "%s(%s, %s)" % (op, "t_" + ka, s)
                else:
                    e = "%s %s t_%s" % (s, op, ka) if left else "t_%s %s %s" % (ka, op, s)
                add(e, r, tol=1 if op == "**" else 0)

# i64 floor division and modulo of negatives, wrap-around, bool arithmetic
add("i // j", np.floor_divide(A("i"), A("j")))
add("i % j", np.remainder(A("i"), A("j")))
add("i // -2", np.floor_divide(A("i"), -2))
add("i % -2", np.remainder(A("i"), -2))
add("-7 // j", np.floor_divide(-7, A("j")))
add("i // 0", ERR)
add("i % 0", ERR)
add("i // zeros([8], \"i64\")", ERR)
add("ibig + ibig", (A("ibig") + A("ibig")), note="i64 overflow wraps")
add("ibig * 3", A("ibig") * 3)
add("-ibig", -A("ibig"))
add("abs(ibig)", np.abs(A("ibig")))
add("ibig - 1", A("ibig") - 1)
add("ibig // -1", np.floor_divide(A("ibig"), -1), note="INT64_MIN // -1 wraps, as in NumPy")
add("ibig % -1", np.remainder(A("ibig"), -1))
add("sum(ibig)", np.asarray(np.sum(A("ibig")), I64))
add("cumsum(ibig)", np.cumsum(A("ibig")))
add("b + b", A("b") + A("b"))
add("b * b", A("b") * A("b"))
add("sum(b)", np.asarray(np.sum(A("b")), I64))
add("cumsum(b)", np.cumsum(A("b")).astype(I64))
add("-b", ERR)
add("b - b", ERR)
add("b + 1", A("b") + np.int64(1))
add("b / b", np.asarray(A("b").astype(F32) / A("b").astype(F32), F32))
add("f / 0", np.asarray(A("f") / F32(0), F32))
add("f // 0", np.asarray(np.floor_divide(A("f"), F32(0)), F32))
add("f % 0", np.asarray(np.remainder(A("f"), F32(0)), F32))
add("fz / 0", np.asarray(A("fz") / F32(0), F32))
add("fz % -1", np.asarray(np.remainder(A("fz"), F32(-1)), F32))
add("fz // -1", np.asarray(np.floor_divide(A("fz"), F32(-1)), F32))
add("i / 0", np.asarray(A("i").astype(F32) / F32(0), F32))
add("i / -0.0", np.asarray(A("i").astype(F32) / F32(-0.0), F32))
add("i ** 2", A("i") ** 2)
add("j ** 0", A("j") ** 0)
add("tensor(2, \"i64\") ** 62", np.asarray(np.int64(2) ** 62, I64))
add("tensor(3, \"i64\") ** 41", np.asarray(np.int64(3) ** 41, I64), note="wraps")
add("i ** -1", ERR)
add("fz ** 0", np.asarray(A("fz") ** F32(0), F32))
add("fz ** 0.5", np.asarray(np.power(A("fz"), F32(0.5)), F32), tol=1)
add("floor_divide(fz, fz)", np.asarray(np.floor_divide(A("fz"), A("fz")), F32))
add("fz % fz", np.asarray(np.remainder(A("fz"), A("fz")), F32))
add("-i0 // 2", np.asarray(np.floor_divide(np.int64(3), 2), I64))

# float -> int casts as astype does them (spec: NaN, inf, out of range to i64 is an error)
add("astype(huge, \"i64\")", ERR)
add("astype(hugen, \"i64\")", ERR)
add("astype(hugei, \"i64\")", ERR)
add("astype(hugem, \"i64\")", ERR)
add("astype(tensor([2.9, -2.9, -0.5, 0.5, 9.2e18, -9.2e18]), \"i64\")",
    np.array([2.9, -2.9, -0.5, 0.5, 9.2e18, -9.2e18], F32).astype(I64))
add("astype(fz, \"bool\")", A("fz").astype(B))
add("astype(i, \"bool\")", A("i").astype(B))
add("astype(b, \"f32\")", A("b").astype(F32))
add("astype(ibig, \"f32\")", A("ibig").astype(F32))
add("astype(ibig, \"f64\")", A("ibig").astype(F64))
add("astype(tensor([1e300, -1e300, 1e-300], \"f64\"), \"f32\")",
    np.array([1e300, -1e300, 1e-300], F64).astype(F32))
add("astype(dn, \"f32\")", A("dn").astype(F32))

# --- NaN and inf -----------------------------------------------------------------------------------
add("max(fx)", np.asarray(np.max(A("fx")), F32))
add("min(fx)", np.asarray(np.min(A("fx")), F32))
add("argmax(fx)", np.asarray(np.argmax(A("fx")), I64))
add("argmin(fx)", np.asarray(np.argmin(A("fx")), I64))
add("argmax(fn2, axis=1)", np.argmax(A("fn2"), axis=1))
add("argmin(fn2, axis=0)", np.argmin(A("fn2"), axis=0))
add("max(fn2, axis=0)", np.max(A("fn2"), axis=0))
add("sort(fx)", np.sort(A("fx")))
add("sort(dn)", np.sort(A("dn")))
add("argsort(fx)", np.argsort(A("fx"), kind="stable"))
add("sort(fx, descending=true)", None if True else None)
add("argsort(ties)", np.argsort(A("ties"), kind="stable"))
add("argsort(tiesi)", np.argsort(A("tiesi"), kind="stable"))
add("argsort(tiesi, descending=true)", np.argsort(-A("tiesi"), kind="stable"))
add("sort(fn2, axis=0)", np.sort(A("fn2"), axis=0))
add("sort(fn2, axis=-1)", np.sort(A("fn2"), axis=-1))
add("unique(fx)", np.unique(A("fx")), note="NumPy >= 1.21 keeps one NaN")
add("unique(ties)", np.unique(A("ties")))
add("unique(tiesi)", np.unique(A("tiesi")))
add("unique(b)", np.unique(A("b")))
add("unique(e0)", np.unique(A("e0")))
add("unique(im)", np.unique(A("im")))
add("clip(fx, -1, 2)", np.clip(A("fx"), F32(-1), F32(2)))
add("clip(fx, 2, -1)", np.clip(A("fx"), F32(2), F32(-1)), note="lo > hi: NumPy gives hi")
add("clip(i, -2, 2)", np.clip(A("i"), -2, 2))
add("clip(i, -2.5, 2.5)", np.clip(A("i").astype(F32), F32(-2.5), F32(2.5)))
add("clip(b, 0, 0)", np.clip(A("b").astype(I64), 0, 0))
add("maximum(fx, fz)", np.maximum(A("fx"), A("fz")))
add("minimum(fx, fz)", np.minimum(A("fx"), A("fz")))
add("maximum(fx, 0)", np.maximum(A("fx"), F32(0)))
add("minimum(fz, -0.0)", np.minimum(A("fz"), F32(-0.0)), exact_zero=False)
add("maximum(fx, nan)", np.maximum(A("fx"), F32(nan)))
add("cumsum(fx)", np.cumsum(A("fx")).astype(F32))
add("sum(fx)", np.asarray(np.sum(A("fx")), F32))
add("mean(fn2, axis=1)", np.mean(A("fn2"), axis=1).astype(F32))
add("isnan(fx)", np.isnan(A("fx")))
add("sign(fz)", np.sign(A("fz")))
add("round(tensor([0.5, 1.5, 2.5, -0.5, -1.5, 2.675]))", np.round(np.array([0.5, 1.5, 2.5, -0.5, -1.5, 2.675], F32)))
add("round(tensor([1.25, 1.35, -2.45]), decimals=1)", np.round(np.array([1.25, 1.35, -2.45], F32), 1), tol=1)
add("fx == fx", A("fx") == A("fx"))
add("fx != fx", A("fx") != A("fx"))
add("fx < inf", A("fx") < inf)
add("topk(ties, 3)[1]", np.argsort(-np.nan_to_num(A("ties"), nan=np.inf), kind="stable")[:3])

# --- 0-d tensors -------------------------------------------------------------------------------------
add("s0 + f", A("s0") + A("f"))
add("i0 + f", (A("i0").astype(F32) + A("f")))
add("i0 * 2.5", np.asarray(F32(-7.5), F32))
add("b0 + i0", np.asarray(np.int64(-2), I64))
add("d0 * f", np.asarray(A("d0") * A("f").astype(F64), F64), note="0-d tensors take part in promotion as tensors")
add("s0[nil]", A("s0")[None])
add("s0[...]", A("s0")[...])
add("reshape(s0, [1, 1])", A("s0").reshape(1, 1))
add("reshape(s0, -1)", A("s0").reshape(-1))
add("s0.shape", [])
add("s0.T", A("s0"))
add("transpose(s0)", A("s0"))
add("expand_dims(s0, 0)", A("s0")[None])
add("expand_dims(s0, -1)", A("s0")[None])
add("expand_dims(s0, 1)", ERR)
add("squeeze(s0)", A("s0"))
add("sum(s0, axis=0)", A("s0"))
add("s0[0]", ERR)
add("flatten(s0)", A("s0").reshape(1))
add("stack([s0, s0])", np.stack([A("s0"), A("s0")]))
add("concat([s0, s0])", ERR)
add("item(s0)", 2.5)
add("tolist(s0)", 2.5)
add("s0 @ s0", ERR)
add("sort(s0)", ERR, note="NumPy: sort of a 0-d array along axis -1 is an AxisError")
add("cumsum(s0)", None if True else None)

# --- broadcasting errors ---------------------------------------------------------------------------
add("f + m34", ERR)
add("f + v3", A("f") + A("v3"))
add("t3 + tensor([1.0, 2.0])", ERR)
add("e20 + v3", ERR)
add("e20 + tensor([1.0])", A("e20") + np.ones(1, F32))
add("e02 + e20", ERR)
add("e20 + zeros([3, 1, 0])", np.zeros((3, 2, 0), F32))
add("where(bm, f, e20)", ERR)

# --- indexing ----------------------------------------------------------------------------------------
IDX = ["v[::-1]", "v[::-3]", "v[8:2:-2]", "v[-3:]", "v[-100:100]", "v[100:]", "v[5:2]", "v[::4]",
       "v[-1:-11:-1]", "v[-1::-1]", "v[:-100:-1]", "v[3:-3]", "v[-100:-100]",
       "t3[:, ::-1, 1:3]", "t3[..., ::-2]", "t3[1, ..., 2]", "t3[-1, -1, -1]", "t3[:, 1]",
       "t3[:, nil, 0]", "t3[..., nil]", "t3[nil, ..., nil]",
       "t3[tensor([1, 0], \"i64\"), tensor([2, 0], \"i64\")]",
       "t3[tensor([[1], [0]], \"i64\"), tensor([2, 0, 1], \"i64\")]",
       "t3[:, tensor([2, 0], \"i64\"), tensor([[3], [1]], \"i64\")]",
       "t3[tensor([1, 0], \"i64\"), :, tensor([3, 1], \"i64\")]",
       "t3[tensor([1, 0], \"i64\"), ..., tensor([3, 1], \"i64\")]",
       "t3[0, :, tensor([3, -1], \"i64\")]",
       "t3[tensor([-1, -2], \"i64\")]",
       "t3[tensor([], \"i64\")]",
       "t3[bm]", "t3[bm, 1:]", "v[v > 0]", "v[v > 100]", "t3[t3 > 10]",
       "t3[tensor(true)]", "t3[tensor(false)]",
       "v[tensor(3, \"i64\")]", "t3[:, tensor([[0, 1], [2, 0]], \"i64\")]",
       "v[10]", "v[-11]", "t3[2]", "t3[0, 3]", "v[tensor([10], \"i64\")]", "v[tensor([-11], \"i64\")]",
       "e0[tensor([0], \"i64\")]", "v[::0]", "v[tensor([1.0])]", "t3[0, 0, 0, 0]",
       "t3[tensor([[true, false, true]], \"bool\")]", "v[1:3, 0]", "t3[..., ..., 0]",
       "e0[::-1]", "e20[:, ::-1]", "e20[1]", "e20[2]", "v[tensor([], \"i64\")]",
       # integers next to index arrays are advanced indices too (NumPy): separated ones move the
       # broadcast axes first
       "t3[tensor([1, 0], \"i64\"), 1:, 0]", "t3[1, :, tensor([[0], [3]], \"i64\")]",
       "t3[nil, tensor([1, 0], \"i64\"), 0]", "t3[:, nil, tensor([2, 1], \"i64\"), nil]",
       "t3[tensor([[1]], \"i64\"), ..., tensor([2, 0, 1], \"i64\")]", "t3[..., tensor([1, 1], \"i64\"), :]",
       "t3[tensor(1, \"i64\"), :, tensor(2, \"i64\")]", "t3[bm, tensor([0, 3, 1], \"i64\")]",
       "t3[tensor([0, 1], \"i64\"), bm[:, :2]]", "t3[1, bm[1]]", "t3[::-1, tensor([0, -1], \"i64\")]",
       "t3[tensor([true, false], \"bool\"), :, tensor([1], \"i64\")]", "f[-1:, ::-2][0]", "v[2:][::-2]",
       "t3[..., 1:][..., ::-1][:, 0]", "v[tensor([[1, 2], [3, 4]], \"i64\")]", "t3[tensor([0, 2], \"i64\")]"]
NPIDX = {"nil": "None", "tensor([1.0])": "np.array([1.0], np.float32)"}


def np_index_expr(s):
    s = s.replace("nil", "None")
    s = re.sub(r'tensor\(([^"]*?), "i64"\)', lambda m: "np.array(%s, np.int64)" % m.group(1), s)
    s = re.sub(r'tensor\(([^"]*?), "bool"\)', lambda m: "np.array(%s, np.bool_)" % m.group(1), s)
    s = s.replace("tensor(true)", "np.array(True)").replace("tensor(false)", "np.array(False)")
    s = re.sub(r'tensor\(([^"]*?)\)', lambda m: "np.array(%s, np.float32)" % m.group(1), s)
    s = s.replace("true", "True").replace("false", "False")
    return s


for e in IDX:
    try:
        r = eval(np_index_expr(e), {"np": np}, ns())
        r = np.array(r)
    except (IndexError, ValueError, TypeError):
        r = ERR
    add(e, r)

# assignment: broadcasting values, repeated indices (last write wins, as NumPy's a[idx] = v),
# mask assignment, negative steps


def setitem(target, idx, val):
    a = A(target)
    try:
        exec("a[%s] = %s" % (np_index_expr(idx), np_index_expr(val)), {"np": np, "a": a}, ns())
    except (IndexError, ValueError, TypeError):
        return ERR
    return a


for target, idx, val in [
        ("v", "::-2", "100"), ("v", "8:2:-3", "tensor([7.0, 8.0])"), ("v", "-100:100", "1.5"),
        ("v", "tensor([1, 1, 1], \"i64\")", "tensor([5.0, 6.0, 7.0])"),
        ("v", "tensor([2, -8], \"i64\")", "tensor([9.0])"),
        ("v", "v > 0", "0"), ("v", "v > 100", "7"), ("t3", ":, 1", "tensor([1.0, 2.0, 3.0, 4.0])"),
        ("t3", "..., 0", "tensor([[1.0], [2.0]])"), ("t3", "bm", "-1"),
        ("t3", "tensor([0, 1], \"i64\"), tensor([2, 0], \"i64\")", "tensor([9.0, 8.0, 7.0, 6.0])"),
        ("t3", ":, tensor([2, 2], \"i64\")", "tensor([[1.0], [2.0]])"),
        ("v", "tensor([10], \"i64\")", "1"), ("v", "3", "tensor([1.0, 2.0])"),
        ("t3", "0", "tensor([1.0, 2.0, 3.0])"), ("im", "0", "2.7"), ("im", ":, 0", "tensor([-5.0, 6.0])"),
        ("b", "1", "3"), ("i", "tensor([0, 0], \"i64\")", "tensor([1, 2], \"i64\")"),
        ("e20", ":, ::-1", "5"), ("t3", "nil, 0, 0", "tensor([[1.0, 2.0, 3.0, 4.0]])"),
        ("f", "0", "tensor([[1.0, 2.0, 3.0]])"), ("f", "1", "tensor([[[4.0]]])"), ("v", "1:2", "tensor([[5.0]])"),
        ("f", "0", "tensor([[1.0, 2.0, 3.0], [1.0, 2.0, 3.0]])"), ("t3", "..., 1", "tensor([[1.0], [2.0]])"),
        ("t3", "1", "tensor([[[[1.0, 2.0, 3.0, 4.0]]]])"), ("f", "tensor([1, 0], \"i64\")", "tensor([[[9.0]]])")]:
    r = setitem(target, idx, val)
    if not isinstance(r, str) and target in ("im", "i", "b"):
        pass
    add("%s_ = %s; %s_[%s] = %s; %s_" % (target, target, target, idx, val, target), r)

# --- shapes ------------------------------------------------------------------------------------------
for e, r in [
        ("reshape(t3, [-1])", lambda: A("t3").reshape(-1)), ("reshape(t3, [4, -1])", lambda: A("t3").reshape(4, -1)),
        ("reshape(t3, [-1, 5])", ERR), ("reshape(t3, [-1, -1])", ERR), ("reshape(e20, [-1])", lambda: np.zeros(0, F32)),
        ("reshape(e20, [0, -1])", ERR), ("reshape(e20, [-1, 0])", ERR), ("reshape(e20, [5, 0, -1])", ERR),
        ("reshape(e20, [3, -1, 0])", ERR), ("reshape(t3, [2, -2, 6])", ERR), ("reshape(t3, 24)", lambda: A("t3").reshape(24)),
        ("reshape(e20, [0, 3])", lambda: np.zeros((0, 3), F32)), ("reshape(t3, [])", ERR),
        ("reshape(tensor([7.0]), [])", lambda: np.array(7.0, F32)),
        ("transpose(t3)", lambda: A("t3").transpose()), ("transpose(t3, [2, 0, 1])", lambda: A("t3").transpose(2, 0, 1)),
        ("transpose(t3, [-1, 0, 1])", lambda: A("t3").transpose(-1, 0, 1)), ("transpose(t3, [0, 0, 1])", ERR),
        ("transpose(t3, [0, 1])", ERR), ("transpose(t3, [0, 1, 3])", ERR), ("t3.T", lambda: A("t3").T),
        ("v.T", lambda: A("v")), ("e20.T", lambda: A("e20").T),
        ("squeeze(zeros([1, 2, 1]))", lambda: np.zeros(2, F32)), ("squeeze(zeros([1, 2, 1]), -1)", lambda: np.zeros((1, 2), F32)),
        ("squeeze(zeros([1, 2, 1]), 1)", ERR), ("squeeze(s0, 0)", lambda: np.squeeze(A("s0"), 0)),
        ("squeeze(s0, -1)", lambda: np.squeeze(A("s0"), -1)), ("squeeze(s0, 1)", ERR), ("squeeze(zeros([1, 2, 1]), [0, 2])", lambda: np.zeros(2, F32)),
        ("expand_dims(f, -1)", lambda: A("f")[..., None]), ("expand_dims(f, 2)", lambda: A("f")[..., None]),
        ("expand_dims(f, 3)", ERR), ("expand_dims(f, -4)", ERR), ("expand_dims(f, -3)", lambda: A("f")[None]),
        ("concat([e0, v])", lambda: np.concatenate([A("e0"), A("v")])), ("concat([e20, f], axis=1)", lambda: np.concatenate([A("e20"), A("f")], 1)),
        ("concat([e02, f.T])", lambda: np.concatenate([A("e02"), A("f").T])), ("concat([e0, e0])", lambda: np.zeros(0, F32)),
        ("concat([e20, f])", ERR), ("concat([f, i0])", ERR), ("concat([v, ei0])", lambda: np.concatenate([A("v"), A("ei0")]).astype(F32)),
        ("concat([i, b])", lambda: np.concatenate([A("i"), A("b").astype(I64)])),
        ("concat([f, d], axis=-1)", lambda: np.concatenate([A("f").astype(F64), A("d")], -1)),
        ("concat([f, f], axis=2)", ERR), ("concat([f, f], axis=-3)", ERR), ("concat([])", ERR),
        ("stack([e0, e0])", lambda: np.zeros((2, 0), F32)), ("stack([e20, e20], axis=2)", lambda: np.zeros((2, 0, 2), F32)),
        ("stack([f, f], axis=-1)", lambda: np.stack([A("f"), A("f")], -1)), ("stack([f, f], axis=3)", ERR),
        ("stack([f, v3])", ERR), ("stack([i, b])", lambda: np.stack([A("i"), A("b").astype(I64)])),
        ("broadcast_to(v3, [2, 3])", lambda: np.broadcast_to(A("v3"), (2, 3))), ("broadcast_to(v3, [3, 1])", ERR),
        ("broadcast_to(e0, [3, 0])", lambda: np.zeros((3, 0), F32)), ("broadcast_to(f, [3])", ERR),
        ("flatten(e20)", lambda: np.zeros(0, F32)), ("flatten(t3)", lambda: A("t3").ravel()),
        ("tile(v3, [2, 2])", lambda: np.tile(A("v3"), (2, 2))), ("tile(f, 2)", lambda: np.tile(A("f"), 2)),
        ("tile(f, [0, 1])", lambda: np.tile(A("f"), (0, 1))),
        ("repeat(f, 2, 1)", lambda: np.repeat(A("f"), 2, 1)), ("repeat(f, 0, 0)", lambda: np.repeat(A("f"), 0, 0)),
        ("repeat(f, 2, -1)", lambda: np.repeat(A("f"), 2, -1)),
        ("pad(v3, [[1, 2]])", lambda: np.pad(A("v3"), [(1, 2)])), ("pad(e0, [[1, 1]], value=3)", lambda: np.pad(A("e0"), [(1, 1)], constant_values=3)),
        ("diff(i)", lambda: np.diff(A("i"))), ("diff(e0)", lambda: np.diff(A("e0"))), ("diff(b)", lambda: np.diff(A("b"))),
        ("diff(f, axis=0)", lambda: np.diff(A("f"), axis=0)), ("diff(s0)", ERR)]:
    add(e, r)

# --- construction: arange/linspace/where/eye/full -------------------------------------------------------
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    for e, r in [
            ("arange(5)", lambda: np.arange(5)), ("arange(0)", lambda: np.arange(0)), ("arange(-3)", lambda: np.arange(-3)),
            ("arange(2, 10, 3)", lambda: np.arange(2, 10, 3)), ("arange(10, 2, -3)", lambda: np.arange(10, 2, -3)),
            ("arange(2, 10, -1)", lambda: np.arange(2, 10, -1)), ("arange(0, 1, 0.1)", lambda: np.arange(0, 1, 0.1).astype(F32)),
            ("arange(1, 2.0001, 0.25)", lambda: np.arange(1, 2.0001, 0.25).astype(F32)),
            ("arange(0.5)", lambda: np.arange(0.5).astype(F32)), ("arange(0, 5, 0)", ERR),
            ("arange(-1.5, 1.5, 0.5)", lambda: np.arange(-1.5, 1.5, 0.5).astype(F32)),
            ("arange(0, 0.3, 0.1)", lambda: np.arange(0, 0.3, 0.1).astype(F32)),
            ("arange(10, 0, -2.5)", lambda: np.arange(10, 0, -2.5).astype(F32)),
            # the length is ceil((stop - start) / step) in float64: 1.3 - 1 is 0.30000000000000004
            ("arange(1, 1.3, 0.1)", lambda: np.arange(1, 1.3, 0.1).astype(F32)),
            ("arange(0.1, 0.4, 0.1)", lambda: np.arange(0.1, 0.4, 0.1).astype(F32)),
            ("arange(-1, 0, 0.1)", lambda: np.arange(-1, 0, 0.1).astype(F32)),
            ("arange(0, -1, -0.1)", lambda: np.arange(0, -1, -0.1).astype(F32)),
            ("arange(1e-10, 5e-10, 1e-10)", lambda: np.arange(1e-10, 5e-10, 1e-10).astype(F32)),
            ("arange(-5, 5, 3)", lambda: np.arange(-5, 5, 3)), ("arange(5, -5, -3)", lambda: np.arange(5, -5, -3)),
            ("linspace(0, 1, 5)", lambda: np.linspace(0, 1, 5).astype(F32)), ("linspace(0, 1, 1)", lambda: np.linspace(0, 1, 1).astype(F32)),
            ("linspace(0, 1, 0)", lambda: np.linspace(0, 1, 0).astype(F32)), ("linspace(1, 0, 4)", lambda: np.linspace(1, 0, 4).astype(F32)),
            ("linspace(0, 1, 7)", lambda: np.linspace(0, 1, 7).astype(F32)), ("linspace(-1, 1, 3)", lambda: np.linspace(-1, 1, 3).astype(F32)),
            ("linspace(0, 1, -1)", ERR), ("linspace(2, 2, 3)", lambda: np.linspace(2, 2, 3).astype(F32)),
            ("linspace(0, 10, 11)", lambda: np.linspace(0, 10, 11).astype(F32)),
            ("where(bm, f, 0)", lambda: np.where(A("bm"), A("f"), F32(0))), ("where(bm, 1, 0)", lambda: np.where(A("bm"), 1, 0).astype(F32)),
            ("where(bm, mi, 0.5)", lambda: np.where(A("bm"), A("mi").astype(F32), F32(0.5))),
            ("where(bm, mi, d)", lambda: np.where(A("bm"), A("mi").astype(F64), A("d"))),
            ("where(b, 1, i[:4])", lambda: np.where(A("b"), 1, A("i")[:4])),
            # numbers alone are f32 (docs/language.md: numbers carry no integer flag)
            ("where(e0 > 0, e0, 1)", lambda: np.zeros(0, F32)), ("where(v3 > 0, v3, f)", lambda: np.where(A("v3") > 0, A("v3"), A("f"))),
            ("where(tensor(true), f, v3)", lambda: np.where(True, A("f"), A("v3"))),
            ("where(i, 1.0, 2.0)", lambda: np.where(A("i"), 1, 2).astype(F32)),
            ("eye(0)", lambda: np.eye(0, dtype=F32)), ("eye(3)", lambda: np.eye(3, dtype=F32)),
            ("full([2, 0], 7)", lambda: np.full((2, 0), 7, F32)), ("full([2], 7, \"i64\")", lambda: np.full(2, 7, I64)),
            ("full([2], 2.5, \"i64\")", lambda: np.full(2, 2.5, I64)), ("zeros([2, -1])", ERR), ("zeros(0)", lambda: np.zeros(0, F32)),
            ("tensor([])", lambda: np.zeros(0, F32)), ("tensor([[], []])", lambda: np.zeros((2, 0), F32)),
            ("tensor([[1, 2], [3]])", ERR), ("tensor([true, false, true])", lambda: np.array([True, False, True])),
            ("tensor([true, 2])", lambda: np.array([1, 2], F32)), ("tensor(3)", lambda: np.array(3, F32)),
            ("tensor([1.5, -2.7], \"i64\")", lambda: np.array([1.5, -2.7]).astype(I64)), ("tensor([2, 0, 1], \"bool\")", lambda: np.array([True, False, True])),
            ("ones([2, 3], \"bool\")", lambda: np.ones((2, 3), B)), ("zeros([3], \"f64\")", lambda: np.zeros(3, F64))]:
        add(e, r)

# --- cumsum / cumprod / sort on ints -------------------------------------------------------------------
for e, r in [("cumsum(im)", lambda: np.cumsum(A("im"), -1)), ("cumsum(im, axis=0)", lambda: np.cumsum(A("im"), 0)),
             ("cumsum(im, axis=-2)", lambda: np.cumsum(A("im"), -2)), ("cumsum(im, axis=2)", ERR),
             ("cumprod(im)", lambda: np.cumprod(A("im"), -1)), ("cumsum(bm)", lambda: np.cumsum(A("bm"), -1).astype(I64)),
             ("cumprod(bm, axis=0)", lambda: np.cumprod(A("bm"), 0).astype(I64)), ("cumsum(e20)", lambda: np.zeros((2, 0), F32)),
             ("cumsum(e20, axis=0)", lambda: np.zeros((2, 0), F32)), ("cumsum(ei0)", lambda: np.zeros(0, I64)),
             ("sort(im)", lambda: np.sort(A("im"))), ("sort(im, axis=0)", lambda: np.sort(A("im"), 0)), ("sort(bm)", lambda: np.sort(A("bm"))),
             ("argsort(im, axis=0)", lambda: np.argsort(A("im"), 0, kind="stable")), ("sort(e20)", lambda: np.zeros((2, 0), F32)),
             ("argsort(e0)", lambda: np.zeros(0, I64)), ("sort(im, axis=2)", ERR), ("sort(im, descending=true)", lambda: -np.sort(-A("im"))),
             ("argsort(bm)", lambda: np.argsort(A("bm"), kind="stable")),
             ("topk(im, 2)[0]", lambda: -np.sort(-A("im"))[:, :2]), ("topk(im, 4)[0]", ERR), ("topk(im, 0)[0]", lambda: np.zeros((2, 0), I64)),
             ("one_hot(tensor([0, 2, 1], \"i64\"), 3)", lambda: np.eye(3, dtype=F32)[[0, 2, 1]]),
             ("one_hot(tensor([3], \"i64\"), 3)", ERR), ("one_hot(tensor([-1], \"i64\"), 3)", ERR)]:
    add(e, r)

# --- matmul (NumPy's rules) ------------------------------------------------------------------------------
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    for e in ["v3 @ v3", "m23 @ v3", "v3 @ m34", "m23 @ m34", "b234 @ v4", "v3 @ b234", "b234 @ b42",
              "b143 @ b234", "b234 @ m23", "m23 @ b234", "v3 @ v4", "m34 @ m23", "e20 @ e02",
              "e02 @ e20", "zeros([2, 0]) @ zeros([0, 3])", "zeros([0]) @ zeros([0])", "mi @ mi32",
              "mi @ m34", "dot(v3, v3)", "outer(v3, v4)", "matmul(b143, b234)", "dot(m23, v3)",
              "mi32 @ tensor([1, -1], \"i64\")", "f @ d.T"]:
        try:
            r = eval(np_index_expr(e).replace("zeros(", "np.zeros(").replace("dot(", "np.dot(")
                     .replace("outer(", "np.outer(").replace("matmul(", "np.matmul(").replace("[2, 0]", "(2, 0)")
                     .replace("[0, 3]", "(0, 3)").replace("[0]", "(0,)").replace("d.T", "d.T.astype(np.float64)"),
                     {"np": np}, {k: (v.astype(F64) if v.dtype == F32 else v) for k, v in INPUTS.items()})
            r = np.asarray(r)
            if r.dtype == F64 and not re.search(r"\bd\b", e):
                r = r.astype(F32)
            if "@ mi32" in e or "mi32 @" in e:
                r = r.astype(I64)
        except ValueError:
            r = ERR
        add(e, r, tol=8)

add("tensor([true, false]) @ tensor([true, true])", np.array(True))

# --- integer and bool-specific elementwise ---------------------------------------------------------------
for e, r in [("abs(i)", np.abs(A("i"))), ("sign(i)", np.sign(A("i"))), ("-i", -A("i")), ("~i", ~A("i")),
             ("~b", ~A("b")), ("~f", ERR), ("floor(i)", A("i")), ("round(i)", A("i")), ("sqrt(i)", np.sqrt(A("i").astype(F32))),
             ("exp(b)", np.exp(A("b").astype(F32))), ("abs(b)", None), ("maximum(b, b)", A("b")),
             ("b & i[:4]", A("b") & A("i")[:4]), ("i & 6", A("i") & 6), ("i | -8", A("i") | -8), ("i ^ 2.5", ERR),
             ("b ^ true", A("b") ^ True), ("b | 1", A("b").astype(I64) | 1),
             ("isnan(i)", np.isnan(A("i"))), ("isfinite(b)", np.isfinite(A("b")))]:
    if r is None:
        continue
    add(e, r, tol=1 if e.startswith("sqrt") or e.startswith("exp") else 0)

# --- longer operands: vector loops, their tails and fused chains (static code fuses these) ----------
_rng = np.random.default_rng(5)
_x = (_rng.standard_normal(67) * 3).astype(F32)
_x[[3, 17, 40, 66]], _x[[5, 50]], _x[[6, 51]], _x[[7, 8]] = nan, inf, -inf, [0.0, -0.0]
_y = (_rng.standard_normal(67) * 3).astype(F32)
_y[[9, 17, 41]], _y[[10, 11]] = nan, [-0.0, 0.0]
_j = _rng.integers(-5, 6, 67)
_j[_j == 0] = 3
INPUTS.update({"xl": _x, "yl": _y, "dl": _x.astype(F64), "el": _y.astype(F64), "il": _rng.integers(-20, 20, 67),
               "jl": _j, "si": _rng.integers(0, 10, 5003), "sm": _rng.integers(0, 5, (300, 70))})
_sf = _rng.integers(0, 20, 4099).astype(F32)
_sf[_rng.integers(0, 4099, 300)], _sf[_rng.integers(0, 4099, 50)] = nan, -0.0
INPUTS["sf"] = _sf


def desc_argsort(x, axis=-1):
    """PyTorch's stable descending argsort: NaN first (the largest), ties by lower index."""
    k = np.where(np.isnan(x), np.inf, x) if x.dtype.kind == "f" else x
    return np.argsort(-k.astype(F64), axis=axis, kind="stable")


for e, r in [
        ("maximum(xl * 2, yl) + 1", lambda: np.maximum(A("xl") * 2, A("yl")) + 1),
        ("minimum(xl - 1, yl * 0.5) * 2", lambda: np.minimum(A("xl") - 1, A("yl") * F32(0.5)) * 2),
        ("(il // jl) * 3 + il % jl", lambda: (A("il") // A("jl")) * 3 + A("il") % A("jl")),
        ("-(il // -3) + il % -4", lambda: -(A("il") // -3) + A("il") % -4),
        ("clip(xl * 3, -1, 2) - 1", lambda: np.clip(A("xl") * 3, F32(-1), F32(2)) - 1),
        ("relu(xl) + relu(yl)", lambda: np.maximum(A("xl"), 0) + np.maximum(A("yl"), 0)),
        ("abs(xl - yl) ** 0.5", lambda: np.abs(A("xl") - A("yl")) ** F32(0.5)),
        ("maximum(dl + 1, el) - 1", lambda: np.maximum(A("dl") + 1, A("el")) - 1),
        ("where(xl > yl, xl, yl) * 1", lambda: np.where(A("xl") > A("yl"), A("xl"), A("yl"))),
        ("max(xl * 1, axis=0)", lambda: np.max(A("xl"))), ("argmax(xl + 1)", lambda: np.argmax(A("xl") + 1)),
        ("argmin(yl * 1)", lambda: np.argmin(A("yl"))), ("max(maximum(xl, yl) * 1)", lambda: np.max(np.maximum(A("xl"), A("yl")))),
        ("floor_divide(xl * 1, yl)", lambda: np.floor_divide(A("xl"), A("yl"))), ("(xl * 1) % yl", lambda: np.remainder(A("xl"), A("yl"))),
        ("sign(xl * 1) * 2", lambda: np.sign(A("xl")) * 2), ("round(xl * 7) - 1", lambda: np.round(A("xl") * 7) - 1),
        ("sum(il // jl * 1)", lambda: np.asarray(np.sum(A("il") // A("jl")))),
        ("argsort(si)", lambda: np.argsort(A("si"), kind="stable")), ("argsort(si, descending=true)", lambda: desc_argsort(A("si"))),
        ("argsort(sf)", lambda: np.argsort(A("sf"), kind="stable")), ("sort(sf)", lambda: np.sort(A("sf"), kind="stable")),
        ("argsort(sf, descending=true)", lambda: desc_argsort(A("sf"))),
        ("argsort(sm, axis=0)", lambda: np.argsort(A("sm"), axis=0, kind="stable")),
        ("argsort(sm, axis=1, descending=true)", lambda: desc_argsort(A("sm"), 1)),
        ("unique(si)", lambda: np.unique(A("si"))),
        ("topk(si, 50)[1]", lambda: desc_argsort(A("si"))[:50]), ("cumsum(sm, axis=0)", lambda: np.cumsum(A("sm"), axis=0))]:
    add(e, r)
add("unique(sf)", lambda: np.unique(A("sf")), exact_zero=False)   # which zero NumPy keeps follows its unstable sort

# ------------------------------------------------------------------ running


def program(cases, indir, outdir, static):
    lines = ['%s = load_npy("%s/%s.npy")' % (k, indir, k) for k in INPUTS]
    for n, c in enumerate(cases):
        body = c.tsl
        if ";" in body:          # "x_ = x; x_[i] = v; x_": statements, then the value
            stmts, last = body.rsplit(";", 1)
            body_stmts = stmts.replace(";", "\n")
            body = last.strip()
        else:
            body_stmts = ""
        core = "%s\nr = %s" % (body_stmts, body)
        if static and c.static:
            core = "static {\n%s\n}" % core
        lines.append('try {\n%s\n  out(%d, r)\n} catch e { write_text("%s/%d.err", e.kind + ": " + e.message) }'
                     % (core, n, outdir, n))
    head = ['fn out(n, r) {',
            '  if type(r) == "tensor" { save_npy("%s/" + str(n) + ".npy", r) }' % outdir,
            '  else { write_text("%s/" + str(n) + ".txt", str(r)) }' % outdir, '}']
    return "\n".join(head + lines) + "\n"


def run_mode(tsl, cases, work, mode):
    outdir = os.path.join(work, mode)
    shutil.rmtree(outdir, ignore_errors=True)      # no result of an earlier --keep run may count
    os.makedirs(outdir)
    src = os.path.join(work, mode + ".tsl")
    with open(src, "w") as fh:
        fh.write(program(cases, os.path.join(work, "in"), outdir, mode != "eager"))
    args = [tsl] + (["--no-static"] if mode == "eager" else ["--verify-static"] if mode == "verify" else []) + [src]
    p = subprocess.run(args, capture_output=True, text=True, timeout=600)
    return outdir, p


def read_result(outdir, n):
    base = os.path.join(outdir, str(n))
    if os.path.exists(base + ".npy"):
        return np.load(base + ".npy")
    if os.path.exists(base + ".txt"):
        return open(base + ".txt").read()
    if os.path.exists(base + ".err"):
        return ("err", open(base + ".err").read())
    return ("missing", "")


def same_floats(got, want, tol, exact_zero):
    g, w = got.astype(F64), want.astype(F64)
    if not np.array_equal(np.isnan(g), np.isnan(w)):
        return False
    m = ~np.isnan(w)
    g, w = g[m], w[m]
    if tol == 0:
        if not np.array_equal(g, w):
            return False
        return not exact_zero or np.array_equal(np.signbit(g), np.signbit(w))
    inf_ = ~np.isfinite(w)
    if not np.array_equal(g[inf_], w[inf_]):
        return False
    eps = np.finfo(got.dtype).eps
    g, w = g[~inf_], w[~inf_]
    return bool(np.all(np.abs(g - w) <= tol * eps * np.maximum(np.abs(w), 1.0)))


def check(c, got):
    want = c.ref
    if isinstance(want, str) and want == ERR:
        if isinstance(got, tuple) and got[0] == "err":
            return None
        return "NumPy/spec: error; TSL: %s" % describe(got)
    if isinstance(got, tuple):
        return "TSL %s: %s" % (got[0], got[1].strip())
    if isinstance(want, (list, float, int)):
        if isinstance(got, str):
            try:
                ok = eval(got.replace("nil", "None").replace("true", "True").replace("false", "False")) == want
            except Exception:
                ok = False
            return None if ok else "want %r, got %s" % (want, got)
        return "want %r, got a tensor %s" % (want, describe(got))
    if not isinstance(got, np.ndarray):
        return "want a tensor %s, got %r" % (describe(want), got)
    if got.dtype != want.dtype:
        return "dtype: want %s, got %s (%s)" % (NAME.get(want.dtype, want.dtype), NAME.get(got.dtype, got.dtype),
                                                describe(want))
    if got.shape != want.shape:
        return "shape: want %s, got %s" % (list(want.shape), list(got.shape))
    if want.dtype.kind == "f":
        ok = same_floats(got, want, c.tol, c.exact_zero)
    else:
        ok = np.array_equal(got, want)
    return None if ok else "values: want %s, got %s" % (describe(want), describe(got))


def describe(x):
    if isinstance(x, np.ndarray):
        return "%s %s %s" % (NAME.get(x.dtype, x.dtype), list(x.shape), np.array2string(x.ravel()[:12], separator=","))
    if isinstance(x, tuple):
        return "%s %s" % (x[0], x[1].strip())
    return repr(x)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tsl", default=os.path.join(ROOT, "bin", "tsl"))
    ap.add_argument("--only", default=None, help="only the cases whose TSL text matches this regex")
    ap.add_argument("--keep", default=None, help="keep the programs and files in this folder")
    ap.add_argument("-v", "--verbose", action="store_true")
    opt = ap.parse_args()
    cases = [c for c in CASES if c.ref is not None and (not opt.only or re.search(opt.only, c.tsl))]
    work = opt.keep or tempfile.mkdtemp(prefix="edge_diff.")
    os.makedirs(os.path.join(work, "in"), exist_ok=True)
    try:
        for k, v in INPUTS.items():
            np.save(os.path.join(work, "in", k + ".npy"), v)
        fails = 0
        results = {}
        for mode in ("eager", "static", "verify"):
            outdir, p = run_mode(os.path.abspath(opt.tsl), cases, work, mode)
            if p.returncode != 0:
                print("FAIL: edge_diff: the %s program exited %d: %s" % (mode, p.returncode, p.stderr.strip()[:600]))
                fails += 1
            results[mode] = outdir
        for n, c in enumerate(cases):
            for mode in ("eager", "static", "verify"):
                if mode != "eager" and not c.static:
                    continue
                why = check(c, read_result(results[mode], n))
                if why:
                    fails += 1
                    print("FAIL [%s] %s: %s%s" % (mode, c.tsl, why, " (%s)" % c.note if c.note else ""))
        print("edge_diff: %d cases x 3 modes, %d failures" % (len(cases), fails))
        return 1 if fails else 0
    finally:
        if not opt.keep:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
