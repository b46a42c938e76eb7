#!/usr/bin/env python3
"""difftest.py - writes random, well-typed TSL programs, each in a static block inside a
function, for `tsl --verify-static` to run eagerly and statically and compare bit for bit.

Usage: difftest.py [--count N] [--seed S] > programs.tsl
Programs mix elementwise chains with broadcasting and scalars, unary math, reductions over
random axes, matmul, slicing and small loops with loop-carried tensors; then one of: integer
tensors and where(), run-time branches and while loops, closures and dict/list updates in
loops, a training-like loop updating the program's own dict, stores at run-time indices with
`while ... and ...`, or break/continue in nested loops. Some add a static fn called with
other shapes and loop counts (guards, recompiles).

--scale K multiplies each program's last dimension by K (tensors of 10^5 elements and more,
which the thread pool splits); --dump writes every result with save_npy into the folder given
as the script's first argument (numbers are printed), so two runs compare file by file:
tests/threads/run.sh runs them with --threads 1 and --threads 2."""
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

SCALE, DUMP = 1, False
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
    lines = ["fn prog_%d() {" % n, "  seed(%d)" % n,
             "  a = randn(%s)" % shape_str(shape), "  b = randn(%s)" % shape_str(bshape),
             "  s = %r" % round(rng.uniform(-2, 2), 3),
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
    lines.append("  }")
    lines.append("  return [%s]" % ", ".join(outs))
    lines.append("}")
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
        lines.append("sres_%d = [sf_%d(randn(%s), 2), sf_%d(randn(%s), %d), sf_%d(randn(%s), 2)]"
                     % (n, n, shape_str(shape), n, shape_str(other), rng.randint(0, 3), n, shape_str(shape)))
        if DUMP:
            lines.append('dump(sres_%d, "s%d")' % (n, n))
    return "\n".join(lines)

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--count", type=int, default=100)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--scale", type=int, default=1)
    ap.add_argument("--dump", action="store_true")
    args = ap.parse_args()
    global SCALE, DUMP
    SCALE, DUMP = args.scale, args.dump
    rng = random.Random(args.seed)
    if SCALE == 1 and not DUMP:
        print("# generated by tests/difftest.py --count %d --seed %d" % (args.count, args.seed))
    else:
        print("# generated by tests/difftest.py --count %d --seed %d --scale %d%s"
              % (args.count, args.seed, SCALE, " --dump" if DUMP else ""))
    if DUMP:
        print(DUMP_FN)
    for n in range(args.count):
        print(program(rng, n))
    print('print("%d programs")' % args.count)

main()
