#!/usr/bin/python3
"""strings_diff.py - differential test of the string and list built-ins against Python's str and
list methods: split (whitespace and a separator), join, replace (an empty `old` too), find,
strip, startswith, endswith, upper, lower, s * n, s[a:b] and sorted (with reverse).

Usage: /usr/bin/python3 tests/strings_diff.py [--tsl bin/tsl] [--count N] [--seed S]

Random strings over a small alphabet (ASCII, a two-byte and a four-byte character, space,
tab, form feed, commas) so separators and whitespace runs occur often; every result is
printed on one line (pieces joined by '|', with '<' and '>' around it) and compared with
Python's. Exits 1 on any difference."""
import argparse, json, random, subprocess, sys

ap = argparse.ArgumentParser()
ap.add_argument("--tsl", default="bin/tsl")
ap.add_argument("--count", type=int, default=400)
ap.add_argument("--seed", type=int, default=1)
args = ap.parse_args()
rnd = random.Random(args.seed)
ALPHA = ["a", "b", "A", "\u00e9", "\U0001F600", " ", " ", "\t", "\f", ",", ",", "x"]

def rstr(n=None):
    return "".join(rnd.choice(ALPHA) for _ in range(rnd.randint(0, 8) if n is None else n))

def q(s):
    return json.dumps(s, ensure_ascii=False).replace("\\f", "\\u{c}").replace("\\t", "\\t")

lines, want = [], []
def case(expr, value):
    lines.append("print(\"<\" + %s + \">\")" % expr)
    want.append("<%s>" % value)

for _ in range(args.count):
    s, t, u = rstr(), rstr(rnd.randint(1, 2)), rstr(rnd.randint(0, 2))
    k = rnd.choice(["split_ws", "split", "replace", "find", "strip", "affix", "case", "repeat", "slice", "sorted"])
    if k == "split_ws":
        case("join(split(%s), \"|\")" % q(s), "|".join(s.split()))
    elif k == "split":
        case("join(split(%s, %s), \"|\")" % (q(s), q(t)), "|".join(s.split(t)))
    elif k == "replace":
        old = rnd.choice([t, ""])
        case("replace(%s, %s, %s)" % (q(s), q(old), q(u)), s.replace(old, u))
    elif k == "find":
        sub = rnd.choice([t, "", s[1:3]])
        case("str(find(%s, %s))" % (q(s), q(sub)), str(s.find(sub)))
    elif k == "strip":
        case("strip(%s)" % q(s), s.strip())
    elif k == "affix":
        p = rnd.choice([t, s[:2], s[-2:], ""])
        case("str(startswith(%s, %s)) + str(endswith(%s, %s))" % (q(s), q(p), q(s), q(p)),
             str(s.startswith(p)).lower() + str(s.endswith(p)).lower())
    elif k == "case":
        case("upper(%s) + \"|\" + lower(%s)" % (q(s), q(s)), s.upper() + "|" + s.lower())
    elif k == "repeat":
        n = rnd.randint(-2, 4)
        case("%s * %d + \"|\" + %d * %s" % (q(t), n, n, q(s)), t * n + "|" + n * s)
    elif k == "slice":
        a, b = rnd.randint(-10, 10), rnd.randint(-10, 10)
        case("%s[%d:%d]" % (q(s), a, b), s[a:b])
    else:
        items = [rstr(rnd.randint(0, 3)) for _ in range(rnd.randint(0, 6))]
        rev = rnd.random() < 0.5
        case("join(sorted([%s], reverse=%s), \"|\")" % (", ".join(q(i) for i in items), "true" if rev else "false"),
             "|".join(sorted(items, reverse=rev)))

r = subprocess.run([args.tsl, "-e", "\n".join(lines) + "\n"], capture_output=True, text=True)
got = r.stdout.split("\n")
bad = [(l, w, g) for l, w, g in zip(lines, want, got) if w != g]
if r.returncode != 0:
    print("tsl failed: %s" % r.stderr.splitlines()[:1])
for l, w, g in bad[:10]:
    print("%s: python %r, tsl %r" % (l, w, g))
print("%d cases, %d differ" % (len(lines), len(bad)))
sys.exit(1 if bad or r.returncode else 0)
