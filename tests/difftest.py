#!/usr/bin/env python3
"""difftest.py - writes random, well-typed TSL programs, each in a static block inside a
function, for `tsl --verify-static` to run eagerly and statically and compare bit for bit.

Usage: difftest.py [--count N] [--seed S] [--scale K] [--dump] [--repeat K] > programs.tsl
Programs mix elementwise chains with broadcasting and scalars, unary math, reductions over
random axes, matmul, slicing and small loops with loop-carried tensors; then one of: integer
tensors and where(), run-time branches and while loops, closures and dict/list updates in
loops, a training-like loop updating the program's own dict, stores at run-time indices with
`while ... and ...`, or break/continue in nested loops. Some add a static fn called with
other shapes and loop counts (guards, recompiles).

--scale K multiplies each program's last dimension by K (tensors of 10^5 elements and more,
which the thread pool splits); --dump writes every result with save_npy into the folder given
as the script's first argument (numbers are printed), so two runs compare file by file:
tests/threads/run.sh runs them with --threads 1 and --threads 2.

--repeat K (K >= 4) passes each program's inputs as arguments and calls it K times (see
repeat_calls: new tensors, the same ones, other numbers, results kept and compared), so
static graphs are captured on their third run and replayed after it (tests/gpu/static.sh).
Without it the output is unchanged for the same seed."""
import argparse, random

BIN = ["+", "-", "*", "/"]
FUNS2 = ["maximum", "minimum"]
UNARY = ["tanh", "sigmoid", "relu", "abs", "exp", "sin", "cos", "floor", "round", "sign", "neg"]

def shape_str(s):
    return "[" + ", ".join(str(d) for d in s) + "]"

def broadcastable(rng, shape):
    """A shape that broadcasts against `shape`: drop leading dims, set some to 1."""
    k = rng.randint(1, len(shape))
    out = list(shape[len(shape) - k:])
    for i in range(len(out)):
        if rng.random() < 0.3:
            out[i] = 1
    return out

def expr(rng, leaves, depth):
    if depth == 0 or rng.random() < 0.25:
        return rng.choice(leaves)
    r = rng.random()
    if r < 0.45:
        return "(%s %s %s)" % (expr(rng, leaves, depth - 1), rng.choice(BIN), expr(rng, leaves, depth - 1))
    if r < 0.6:
        return "%s(%s, %s)" % (rng.choice(FUNS2), expr(rng, leaves, depth - 1), expr(rng, leaves, depth - 1))
    u = rng.choice(UNARY)
    inner = expr(rng, leaves, depth - 1)
    if u == "neg":
        return "(-%s)" % inner
    if u == "exp":
        return "exp(clip(%s, -10, 10))" % inner
    return "%s(%s)" % (u, inner)

SCALE, DUMP, REPEAT = 1, False, 0
DUMP_FN = """fn dump(v, name) {
  if type(v) == "tensor" { save_npy(args()[0] + "/" + name + ".npy", v) } else if type(v) == "list" {
    for i in range(len(v)) { dump(v[i], name + "_" + str(i)) }
  } else if type(v) == "dict" {
    for k in keys(v) { dump(v[k], name + "_" + k) }
  } else { print(name, v) }
}"""

def program(rng, n):
    rank = rng.randint(1, 3)
    shape = [rng.randint(1, 5) for _ in range(rank)]
    shape[-1] *= SCALE
    bshape = broadcastable(rng, shape)
    s0 = round(rng.uniform(-2, 2), 3)
    if REPEAT:   # the inputs are arguments: repeat_calls() passes new ones, the same ones, other numbers
        lines = ["fn model_%d() { return {w: randn([%d, 3]), bias: randn([3])} }" % (n, shape[-1]),
                 "fn prog_%d(a, b, s, model) {" % n, "  static {"]
    else:
        lines = ["fn prog_%d() {" % n, "  seed(%d)" % n,
                 "  a = randn(%s)" % shape_str(shape), "  b = randn(%s)" % shape_str(bshape),
                 "  s = %r" % s0,
                 "  model = {w: randn([%d, 3]), bias: randn([3])}" % shape[-1], "  static {"]
    leaves = ["a", "b", "s", "a", "0.5", "2"]
    lines.append("    y = a + %s" % expr(rng, leaves, 3))
    outs = ["y"]
    ax = rng.randint(-rank, rank - 1)
    red = rng.choice(["sum", "mean", "max", "min", "var"])
    lines.append("    z = %s(y, axis=%d)" % (red, ax))
    outs.append("z")
    lines.append("    t = sum(y)")
    outs.append("t")
    if rank == 2:
        lines.append("    m = y @ transpose(y)")
        lines.append("    sm = softmax(y, axis=%d)" % rng.randint(-2, 1))
        outs += ["m", "sm"]
    if shape[-1] >= 2:
        lines.append("    q = y[..., 0:%d]" % rng.randint(1, shape[-1]))
        outs.append("q")
    if rng.random() < 0.5:
        k = rng.randint(1, 6)
        lines.append("    acc = zeros(%s)" % shape_str(shape))
        lines.append("    for i in range(%d) {" % k)
        lines.append("      acc = acc * 0.5 + %s" % expr(rng, ["a", "b", "acc", "s"], 2))
        lines.append("      if i % 2 == 0 { acc = acc - 0.25 }")
        lines.append("    }")
        outs.append("acc")
    r = rng.random()
    if r < 0.2:
        # integer tensors: wrap-around arithmetic, floor modulo, comparisons into where()
        lines.append('    ia = astype(floor(a * 10), "i64")')
        lines.append("    ib = ia * %d - %d" % (rng.randint(-5, 5), rng.randint(0, 9)))
        lines.append("    im = ia %% %d" % rng.choice([2, 3, 7, -4]))
        lines.append("    w = where(ia > ib, a, 0.5)")
        outs += ["ib", "im", "w"]
    elif r < 0.4:
        # a run-time branch on a tensor's value, and a while loop on a number
        lines.append("    flag = 0")
        lines.append("    if sum(y) > %r { flag = 1; y = y * 2 } else { y = y - 1 }" % round(rng.uniform(-3, 3), 2))
        lines.append("    k = 0")
        lines.append("    while k < %d { y = tanh(y) + s; k = k + 1 }" % rng.randint(0, 4))
        outs += ["flag", "k", "y"]
    elif r < 0.6:
        # a closure over a tensor, called in a loop; a dict and a list built in the block
        lines.append("    f = fn(v) { return v * a + b }")
        lines.append("    parts = [f(a), f(b)]")
        lines.append("    st = {first: parts[0], n: len(parts)}")
        lines.append("    for j in range(2) { st.first = f(st.first) * 0.5 }")
        outs += ["st"]
    elif r < 0.75:
        # a training-like loop: matmul + bias + activation, updating the program's own dict;
        # concat, stack, argmax and an indexed store
        act = rng.choice(["relu", "tanh", "sigmoid"])
        lines.append("    x2 = reshape(y, [-1, %d])" % shape[-1])
        lines.append("    for e in range(%d) {" % rng.randint(1, 3))
        lines.append("      h = %s(x2 @ model.w + model.bias)" % act)
        lines.append("      model.w = model.w - 0.01 * (transpose(x2) @ h)")
        lines.append("      model.bias = model.bias - 0.01 * sum(h, axis=0)")
        lines.append("    }")
        lines.append("    cat = concat([x2, x2 * 2], axis=%d)" % rng.randint(0, 1))
        lines.append("    stk = stack([x2, exp(clip(x2, -5, 5))])")
        lines.append("    am = argmax(x2, axis=-1)")
        lines.append("    x2[0] = x2[0] * 3")
        lines.append("    ls = log_softmax(x2, axis=-1)")
        outs += ["h", "cat", "stk", "am", "x2", "ls", "model"]
    elif r < 0.9:
        # stores into a tensor at a run-time index, a while on a tensor's value and a counter,
        # a loop over a tensor's rows
        k = rng.randint(1, 4)
        lines.append("    x3 = reshape(y, [-1, %d])" % shape[-1])
        lines.append("    buf = zeros([%d, %d])" % (k, shape[-1]))
        lines.append("    for i in range(%d) { buf[i] = x3[i %% len(x3)] * (i + 1) }" % k)
        lines.append("    buf[0, 0] = buf[0, 0] - s")
        lines.append("    w2 = 0")
        lines.append("    while sum(buf) < %r and w2 < 5 { buf = buf + 0.5; w2 = w2 + 1 }" % round(rng.uniform(-3, 6), 2))
        lines.append("    cum = zeros([])")
        lines.append("    for row in buf { cum = cum + sum(row * row) }")
        outs += ["buf", "w2", "cum"]
    else:
        # break and continue, on the counter and on a tensor's value, in nested loops
        lines.append("    cnt = 0")
        lines.append("    v = a * 1")
        lines.append("    for i in range(%d) {" % rng.randint(1, 7))
        lines.append("      if i == %d { continue }" % rng.randint(0, 4))
        lines.append("      v = v * 0.9 + s")
        lines.append("      if sum(v) > %r { break }" % round(rng.uniform(-4, 4), 2))
        lines.append("      j = 0")
        lines.append("      while true { j = j + 1; if j >= %d { break } }" % rng.randint(1, 3))
        lines.append("      cnt = cnt + j")
        lines.append("    }")
        outs += ["cnt", "v"]
    if REPEAT and rng.random() < 0.5:
        # gradients in the block, one through a loop (a backward loop's stack): --repeat only,
        # so the other modes' programs stay as they were for the same seed
        act = rng.choice(["tanh", "sigmoid", "relu"])
        lines.append("    gw = grad(fn(w) { return sum(%s(a * w + b) * s) })(a)" % act)
        lines.append("    gl = grad(fn(w) { h = w; for i in range(%d) { h = %s(h * 0.9 + b) }; return sum(h * s) })(a)"
                     % (rng.randint(1, 4), act))
        outs += ["gw", "gl"]
    lines.append("  }")
    lines.append("  return [%s]" % ", ".join(outs))
    lines.append("}")
    if REPEAT:
        lines += repeat_calls(n, shape, bshape, s0)
    else:
        lines.append("results = prog_%d()" % n)
    if DUMP:
        lines.append('dump(results, "p%d")' % n)
    if rng.random() < 0.3:
        # a static fn called with other shapes and loop counts: guards and recompiles
        lines.append("static fn sf_%d(x, k) {" % n)
        lines.append("  acc = x")
        lines.append("  for i in range(k) { acc = tanh(acc) * 0.9 + %s }" % expr(rng, ["x", "acc", "0.5"], 2))
        lines.append("  if k > 1 { acc = acc - 1 }")
        lines.append("  if sum(acc) > 0 { acc = acc * 2 }")
        lines.append("  return [acc, sum(acc, axis=-1)]")
        lines.append("}")
        other = [rng.randint(1, 4) for _ in range(rng.randint(1, 3))]
        if REPEAT:
            lines += repeat_sf_calls(n, shape)
        else:
            lines.append("sres_%d = [sf_%d(randn(%s), 2), sf_%d(randn(%s), %d), sf_%d(randn(%s), 2)]"
                         % (n, n, shape_str(shape), n, shape_str(other), rng.randint(0, 3), n, shape_str(shape)))
        if DUMP:
            lines.append('dump(sres_%d, "s%d")' % (n, n))
    return "\n".join(lines)

SAME_FN = """fn same(x, y) {
  if type(x) != type(y) { return false }
  if type(x) == "tensor" { return equal(x, y) }
  if type(x) == "list" {
    if len(x) != len(y) { return false }
    for i in range(len(x)) { if not same(x[i], y[i]) { return false } }
    return true
  }
  if type(x) == "dict" {
    for k in keys(x) { if not same(x[k], y[k]) { return false } }
    return len(keys(x)) == len(keys(y))
  }
  return x == y
}"""

def repeat_calls(n, shape, bshape, s0):
    """--repeat K: prog_n's static block runs K times, call i taking (i % 4) new tensors of the
    same shape (their addresses move), the first call's tensor objects again with fresh model
    dicts (addresses stay put: the result must equal the first call's bit for bit), another
    number s with a model dict carried across calls, or new tensors holding the first call's
    values (equal to the first call's again). The first call's result, kept throughout, must
    still print as it did: no later call may write into what an earlier one returned."""
    sh, bsh = shape_str(shape), shape_str(bshape)
    out = ["seed(%d)" % n, "a0 = randn(%s)" % sh, "b0 = randn(%s)" % bsh,
           "seed(%d)" % (n + 100000), "r0 = prog_%d(a0, b0, %r, model_%d())" % (n, s0, n),
           "seen0 = str(r0)", "carried = model_%d()" % n, "kept = [r0]"]
    for i in range(1, REPEAT):
        k = i % 4
        if k == 1:
            out.append("kept = kept + [prog_%d(randn(%s), randn(%s), %r, model_%d())]" % (n, sh, bsh, s0, n))
        elif k == 2:
            out.append("seed(%d)" % (n + 100000))
            out.append("ri = prog_%d(a0, b0, %r, model_%d())" % (n, s0, n))
            out.append('assert(same(ri, r0), "prog_%d call %d: the same inputs again give other bits")' % (n, i + 1))
            out.append("kept = kept + [ri]")
        elif k == 3:
            out.append("kept = kept + [prog_%d(a0, b0, %r, carried)]" % (n, round(s0 + 0.25 * i, 3)))
        else:
            out.append("seed(%d)" % (n + 100000))
            out.append("ri = prog_%d(a0 * 1, b0 * 1, %r, model_%d())" % (n, s0, n))
            out.append('assert(same(ri, r0), "prog_%d call %d: new tensors with the first call\'s values give other bits")' % (n, i + 1))
            out.append("kept = kept + [ri]")
    out.append('assert(str(r0) == seen0, "prog_%d: the first call\'s result changed under later calls")' % n)
    out.append("results = kept")
    return out

def repeat_sf_calls(n, shape):
    """--repeat K: the static fn K times: new tensors, the same one again (equal results), other k."""
    sh = shape_str(shape)
    out = ["x0 = randn(%s)" % sh, "sr0 = sf_%d(x0, 2)" % n, "seen0 = str(sr0)", "sres_%d = [sr0]" % n]
    for i in range(1, REPEAT):
        k = i % 3
        if k == 1:
            out.append("sres_%d = sres_%d + [sf_%d(randn(%s), 2)]" % (n, n, n, sh))
        elif k == 2:
            out.append("si = sf_%d(x0, 2)" % n)
            out.append('assert(same(si, sr0), "sf_%d call %d: the same input again gives other bits")' % (n, i + 1))
            out.append("sres_%d = sres_%d + [si]" % (n, n))
        else:
            out.append("sres_%d = sres_%d + [sf_%d(x0, %d)]" % (n, n, n, 1 + i % 2))
    out.append('assert(str(sr0) == seen0, "sf_%d: the first call\'s result changed under later calls")' % n)
    return out

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--count", type=int, default=100)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--scale", type=int, default=1)
    ap.add_argument("--dump", action="store_true")
    ap.add_argument("--repeat", type=int, default=0)
    args = ap.parse_args()
    global SCALE, DUMP, REPEAT
    SCALE, DUMP, REPEAT = args.scale, args.dump, args.repeat
    if REPEAT and REPEAT < 4:
        ap.error("--repeat K needs K >= 4 (the third run captures; later ones replay)")
    rng = random.Random(args.seed)
    if SCALE == 1 and not DUMP and not REPEAT:
        print("# generated by tests/difftest.py --count %d --seed %d" % (args.count, args.seed))
    else:
        print("# generated by tests/difftest.py --count %d --seed %d --scale %d%s%s"
              % (args.count, args.seed, SCALE, " --dump" if DUMP else "",
                 " --repeat %d" % REPEAT if REPEAT else ""))
    if DUMP:
        print(DUMP_FN)
    if REPEAT:
        print(SAME_FN)
    for n in range(args.count):
        print(program(rng, n))
    print('print("%d programs")' % args.count)

main()
