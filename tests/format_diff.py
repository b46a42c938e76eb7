#!/usr/bin/python3
"""format_diff.py - differential test of format(value, spec) against Python's format().

Usage: /usr/bin/python3 tests/format_diff.py [--tsl bin/tsl] [--count N] [--seed S]

Builds --count random (value, spec) pairs over the whole mini-language ([[fill]align][sign]
[z][#][0][width][,|_][.precision][type], types d f F e E g G % s and none) for numbers and
strings, keeps those Python accepts, runs them all in one TSL script and compares each line
with Python's format(). Left out on purpose (docs/language.md): an integral number with no
type and no precision, which TSL writes as print does and Python writes by its int/float
type (3 / 3.0, -0, 1e+20). Prints the first differences and exits 1 when there are any."""
import argparse, json, math, random, subprocess, sys

ap = argparse.ArgumentParser()
ap.add_argument("--tsl", default="bin/tsl")
ap.add_argument("--count", type=int, default=3000)
ap.add_argument("--seed", type=int, default=1)
args = ap.parse_args()
rnd = random.Random(args.seed)

def spec(kind):
    s = ""
    if rnd.random() < 0.3:
        s += rnd.choice(["", "*", "0", "\u00e9", "x", " "]) + rnd.choice("<>^=" if kind == "n" else "<>^")
    if kind == "n" and rnd.random() < 0.4: s += rnd.choice("+- ")
    if kind == "n" and rnd.random() < 0.1: s += "z"
    if kind == "n" and rnd.random() < 0.15: s += "#"
    if rnd.random() < 0.2: s += "0"
    if rnd.random() < 0.5: s += str(rnd.randint(1, 25))
    if kind == "n" and rnd.random() < 0.3: s += rnd.choice(",_")
    t = rnd.choice(["", "f", "e", "g", "%", "E", "F", "G", "d"]) if kind == "n" else rnd.choice(["", "s"])
    if t != "d" and rnd.random() < 0.6: s += "." + str(rnd.randint(0, 12))
    return s + t

def tsl_number(v):
    if math.isnan(v): return "nan"
    if math.isinf(v): return "inf" if v > 0 else "-inf"
    if v == 0 and math.copysign(1, v) < 0: return "-0.0"
    return repr(v)

cases = []
while len(cases) < args.count:
    if rnd.random() < 0.2:
        v, s = rnd.choice(["", "a", "h\u00e9llo", "xyz123", "\U0001F600ab"]), spec("s")
        arg = json.dumps(v, ensure_ascii=False)
    else:
        s = spec("n")
        if s.endswith("d"):
            v = rnd.choice([0, 1, -1, 7, 42, -1234567, 10**15, 123456789])
        else:
            v = rnd.choice([rnd.uniform(-1e6, 1e6), rnd.uniform(-1, 1), 10 ** rnd.uniform(-12, 25) * rnd.choice([1, -1]),
                            0.5, 2.5, -0.0, math.inf, -math.inf, math.nan, 1e-5, 99.995, 0.125, 9.9995])
            if math.isfinite(v) and v == int(v) and not any(c in s for c in ".eEfFgG%"):
                continue
        arg = str(v) if isinstance(v, int) else tsl_number(v)
    try:
        want = format(v, s)
    except (ValueError, TypeError):
        continue
    cases.append((arg, s, want))

prog = "".join("print(format(%s, %s))\n" % (a, json.dumps(s, ensure_ascii=False)) for a, s, _ in cases)
r = subprocess.run([args.tsl, "-e", prog], capture_output=True, text=True)
got = r.stdout.split("\n")
bad = [(a, s, w, g) for (a, s, w), g in zip(cases, got) if w != g]
if r.returncode != 0:
    print("tsl failed: %s" % r.stderr.splitlines()[:1])
for a, s, w, g in bad[:10]:
    print("format(%s, %r): python %r, tsl %r" % (a, s, w, g))
print("%d cases, %d differ" % (len(cases), len(bad)))
sys.exit(1 if bad or r.returncode else 0)
