#!/usr/bin/python3
"""print_diff.py - differential test of tensor printing against NumPy 1.24.

Usage: /usr/bin/python3 tests/print_diff.py [--tsl bin/tsl] [--count N] [--seed S]

Random tensors (f32, f64, i64, bool; rank 0 to 4, now and then a long axis; values small,
whole, tiny, huge, mixed magnitudes, powers of two and their neighbours, subnormals, nan,
+-inf, -0.) under random printoptions (precision, threshold, edgeitems, linewidth) are
printed by ONE TSL program, a third of them from inside `static { }`; each text must equal
"tensor(" + np.array2string(a, separator=', ', prefix='tensor(', ...) + the dtype suffix.
Prints the first differences and exits 1 when any case differs."""
import argparse, math, random, subprocess, sys, tempfile, os
import numpy as np

DTYPES = {'f32': np.float32, 'f64': np.float64, 'i64': np.int64, 'bool': np.bool_}


def literal(x, dt):
    if dt == 'bool':
        return 'true' if x else 'false'
    if dt == 'i64':
        return str(int(x))
    x = float(x)
    if math.isnan(x):
        return '(0/0)'
    if math.isinf(x):
        return '(1/0)' if x > 0 else '(-1/0)'
    return repr(x)


def nested(a, dt):
    if a.ndim == 0:
        return literal(a[()], dt)
    return '[' + ', '.join(nested(s, dt) for s in a) + ']'


def expected(a, dt, opts):
    s = np.array2string(a, separator=', ', prefix='tensor(', precision=opts[0], threshold=opts[1],
                        edgeitems=opts[2], max_line_width=opts[3])
    if dt == 'bool':
        s = s.replace('True', 'true').replace('False', 'false')
    return 'tensor(' + s + ('' if dt == 'f32' else ', dtype=' + dt) + ')'


def values(n, dt, r):
    if dt == 'bool':
        return [r.random() < .5 for _ in range(n)]
    if dt == 'i64':
        k = r.choice([1, 10, 1000, 10**6, 10**15])
        return [r.randint(-k, k) for _ in range(n)]
    kind = r.choice(['small', 'whole', 'mixed', 'tiny', 'huge', 'special', 'ratio', 'wide', 'pow2',
                     'near1e8', 'edges', 'subnormal'])
    out = []
    for _ in range(n):
        if kind == 'small': v = round(r.uniform(-10, 10), r.randint(0, 9))
        elif kind == 'whole': v = float(r.randint(-100, 100))
        elif kind == 'mixed': v = r.uniform(-1, 1) * 10 ** r.randint(-3, 3)
        elif kind == 'tiny': v = r.uniform(-1, 1) * 10 ** r.randint(-12, -4)
        elif kind == 'huge': v = r.uniform(-1, 1) * 10 ** r.randint(6, 30)
        elif kind == 'ratio': v = r.randint(1, 9) / r.randint(1, 13)
        elif kind == 'wide': v = r.uniform(-1, 1) * 10 ** r.randint(-300, 300)
        elif kind == 'pow2':
            v = r.choice([1, -1]) * 2.0 ** r.randint(-40, 40) * r.choice(
                [1, 1 + 2**-52, 1 - 2**-53, 1 + 2**-23, 1 - 2**-24, 1.5])
        elif kind == 'near1e8': v = float(r.randint(10**7, 10**8)) + r.random()
        elif kind == 'edges':
            v = r.choice([0.1, 0.2, 0.3, 1 / 3, 2 / 3, 0.7, 1e-4, 9.9999e-5, 1e8, 99999999.0, 999.5, 1000.0,
                          0.001]) * r.choice([1, 1 + 1e-9, 1 - 1e-9, 1 + 1e-16])
        elif kind == 'subnormal': v = r.uniform(-1, 1) * 1e-310
        else: v = r.choice([math.nan, math.inf, -math.inf, 0.0, -0.0, 1.5, 1e-5, 123.25])
        out.append(v)
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--tsl', default='bin/tsl')
    ap.add_argument('--count', type=int, default=300)
    ap.add_argument('--seed', type=int, default=1)
    args = ap.parse_args()
    r = random.Random(args.seed)
    src, cases = [], []
    for k in range(args.count):
        dt = r.choice(list(DTYPES))
        nd = r.choice([0, 1, 1, 2, 2, 3, 4])
        shape = [r.randint(1, 5) for _ in range(nd)]
        if r.random() < 0.15 and nd:
            shape[r.randrange(nd)] = r.randint(6, 40)
        opts = (8, 1000, 3, 75)
        if r.random() < 0.4:
            opts = (r.randint(0, 30), r.choice([0, 5, 20, 1000, 10**9]), r.randint(0, 6),
                    r.choice([0, 1, 10, 20, 40, 75, 120, 1000]))
        with np.errstate(all='ignore'):
            a = np.array(values(int(np.prod(shape)), dt, r), dtype=DTYPES[dt]).reshape(shape)
        src.append('printoptions(precision=%d, threshold=%d, edgeitems=%d, linewidth=%d)' % opts)
        src.append('t = tensor(%s, "%s")' % (nested(a, dt), dt))
        src.append('static { print(t) }' if k % 3 == 0 else 'print(t)')
        src.append('print("@@")')
        cases.append((a, dt, opts))
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, 'print_diff.tsl')
        with open(path, 'w') as f:
            f.write('\n'.join(src) + '\n')
        run = subprocess.run([args.tsl, path], capture_output=True, text=True)
    if run.returncode:
        print('FAIL: tsl exited %d: %s' % (run.returncode, run.stderr[:500]))
        return 1
    got = run.stdout.split('@@\n')
    bad = 0
    for (a, dt, opts), g in zip(cases, got):
        want = expected(a, dt, opts)
        if g[:-1] != want:
            bad += 1
            if bad <= 3:
                print('FAIL: %s %s printoptions%s\nwant:\n%s\ngot:\n%s' % (dt, list(a.shape), opts, want, g[:-1]))
    if len(got) != len(cases) + 1:
        print('FAIL: %d outputs for %d cases' % (len(got) - 1, len(cases)))
        bad += 1
    print('%d of %d cases differ from NumPy' % (bad, len(cases)))
    return 1 if bad else 0


sys.exit(main())
