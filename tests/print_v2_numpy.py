#!/usr/bin/python3
"""print_v2_numpy.py - writes tests/scripts/print_v2.tsl and its expected output
tests/scripts/print_v2.out, the latter from NumPy 1.24 (never from tsl):
"tensor(" + np.array2string(a, separator=', ', prefix='tensor(', <printoptions>) + the
dtype suffix, with float32 arrays for f32 and True/False written as TSL's true/false.

Usage: /usr/bin/python3 tests/print_v2_numpy.py   (rerun after changing CASES)"""
import os
import numpy as np

F32, F64, I64, BOOL = np.float32, np.float64, np.int64, np.bool_
NAMES = {F32: 'f32', F64: 'f64', I64: 'i64', BOOL: 'bool'}
DEFAULT = dict(precision=8, threshold=1000, edgeitems=3, linewidth=75)

# (TSL expression, NumPy array of the same values); an "options" entry changes printoptions
CASES = [
    # NumPy's float rule for f64 and f32 alike: shortest digits, at most 8, one width
    ('tensor([0.1 + 0.2], "f64")', np.array([0.1 + 0.2])),
    ('tensor([0.1 + 0.2, 1 / 3], "f64")', np.array([0.1 + 0.2, 1 / 3])),
    ('tensor([0.1 + 0.2, 1 / 3])', np.array([0.1 + 0.2, 1 / 3], F32)),
    ('tensor([1, 2.5, -30.125])', np.array([1, 2.5, -30.125], F32)),
    ('tensor([123456.7, 0.5], "f64")', np.array([123456.7, 0.5])),
    ('tensor([71727512.0])', np.array([71727512.0], F32)),
    # rows on lines, columns aligned, blank lines between blocks
    ('tensor([[1, 2], [10, 20]])', np.array([[1, 2], [10, 20]], F32)),
    ('reshape(arange(24, dtype="f32"), [2, 3, 4]) / 7', np.arange(24, dtype=F32).reshape(2, 3, 4) / F32(7)),
    ('reshape(arange(16), [2, 2, 2, 2])', np.arange(16, dtype=I64).reshape(2, 2, 2, 2)),
    ('tensor([[-5, 100], [7, -1000]], "i64")', np.array([[-5, 100], [7, -1000]], I64)),
    ('tensor([[true, false], [false, true]])', np.array([[True, False], [False, True]])),
    ('tensor([true, true])', np.array([True, True])),
    # 0-d and empty
    ('tensor(2.5)', np.array(2.5, F32)),
    ('tensor(1 / 3, "f64")', np.array(1 / 3)),
    ('tensor(-7, "i64")', np.array(-7, I64)),
    ('tensor(false)', np.array(False)),
    ('tensor([])', np.array([], F32)),
    # nan, inf, -0.
    ('tensor([0 / 0, 1 / 0, -1 / 0, 1.5])', np.array([np.nan, np.inf, -np.inf, 1.5], F32)),
    ('tensor([0 / 0, 0 / 0], "f64")', np.array([np.nan, np.nan])),
    ('tensor([-0.0, 0.0, 2.25])', np.array([-0.0, 0.0, 2.25], F32)),
    # scientific notation: max >= 1e8, min < 1e-4, max/min > 1e3, 3-digit exponents
    ('tensor([1e8, 1])', np.array([1e8, 1], F32)),
    ('tensor([1e20, -3.5e-7], "f64")', np.array([1e20, -3.5e-7])),
    ('tensor([1e-5, 1])', np.array([1e-5, 1], F32)),
    ('tensor([1, 1001])', np.array([1, 1001], F32)),
    # the f32 ratio 6369.98 / 6.36998 rounds to exactly 1000 in f32, so positional
    ('tensor([6.3699798583984375, 6369.97998046875])', np.array([6.3699798583984375, 6369.97998046875], F32)),
    ('tensor([1e100, 1e-100, 0 / 0], "f64")', np.array([1e100, 1e-100, np.nan])),
    ('tensor([0.005524179432541132, 0.06431002914905548, -38.875423431396484])',
     np.array([0.005524179432541132, 0.06431002914905548, -38.875423431396484], F32)),
    # summarised past 1000 elements, first and last 3 of each axis
    ('arange(2000, dtype="f32") / 4', np.arange(2000, dtype=F32) / F32(4)),
    ('reshape(arange(3000), [30, 100])', np.arange(3000, dtype=I64).reshape(30, 100)),
    ('reshape(arange(2400, dtype="f64") / 3, [4, 20, 30])', (np.arange(2400, dtype=F64) / 3).reshape(4, 20, 30)),
    # long rows wrap at linewidth
    ('arange(40, dtype="f32") / 3', np.arange(40, dtype=F32) / F32(3)),
    ('reshape(arange(60, dtype="f32") / 7, [2, 30])', (np.arange(60, dtype=F32) / F32(7)).reshape(2, 30)),
    # printoptions
    ('options', dict(precision=3)),
    ('tensor([3.14159, 2, 1e-5])', np.array([3.14159, 2, 1e-5], F32)),
    ('tensor([[3.14159, 2], [1 / 3, 100]], "f64")', np.array([[3.14159, 2], [1 / 3, 100]])),
    ('options', dict(precision=8, threshold=5, edgeitems=1)),
    ('arange(10)', np.arange(10, dtype=I64)),
    ('reshape(arange(12, dtype="f32"), [3, 4])', np.arange(12, dtype=F32).reshape(3, 4)),
    ('options', dict(threshold=5, edgeitems=0)),
    ('arange(10)', np.arange(10, dtype=I64)),
    ('options', dict(threshold=1000, edgeitems=3, linewidth=30)),
    ('reshape(arange(20, dtype="f32") * 1.5, [2, 10])', (np.arange(20, dtype=F32) * F32(1.5)).reshape(2, 10)),
    ('options', dict(linewidth=0)),
    ('tensor([1, 2, 3], "i64")', np.array([1, 2, 3], I64)),
    ('options', DEFAULT),
]


def expected(a, opts):
    s = np.array2string(a, separator=', ', prefix='tensor(', precision=opts['precision'],
                        threshold=opts['threshold'], edgeitems=opts['edgeitems'],
                        max_line_width=opts['linewidth'])
    if a.dtype == np.bool_:
        s = s.replace('True', 'true').replace('False', 'false')
    dt = NAMES[a.dtype.type]
    return 'tensor(' + s + ('' if dt == 'f32' else ', dtype=' + dt) + ')'


def main():
    here = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'scripts')
    src = ['# Spec section 3, printing (v2): PyTorch layout, NumPy float rule, summarisation,',
           '# printoptions. GENERATED by tests/print_v2_numpy.py, and print_v2.out is NumPy 1.24\'s',
           '# text for the same values (np.array2string), never tsl\'s own output.',
           'old = printoptions()',
           'assert(old == {precision: 8, threshold: 1000, edgeitems: 3, linewidth: 75})']
    out = []
    opts = dict(DEFAULT)
    for expr, val in CASES:
        if expr == 'options':
            args = ', '.join('%s=%d' % kv for kv in val.items())
            prev = dict(opts)
            opts.update(val)
            src.append('was = printoptions(%s)' % args)
            src.append('assert(was == {precision: %(precision)d, threshold: %(threshold)d, '
                       'edgeitems: %(edgeitems)d, linewidth: %(linewidth)d})' % prev)
            continue
        src.append('print(%s)' % expr)
        out.append(expected(val, opts))
    # printing in static code: the same formatter and the current settings
    src += ['printoptions(precision=2)',
            'm = reshape(arange(6, dtype="f32"), [2, 3])',
            'static {',
            '  print(m / 3)',
            '  print(m * 100)',
            '}',
            'printoptions(precision=8)']
    m = np.arange(6, dtype=F32).reshape(2, 3)
    o2 = dict(DEFAULT, precision=2)
    out += [expected(m / F32(3), o2), expected(m * F32(100), o2)]
    with open(os.path.join(here, 'print_v2.tsl'), 'w') as f:
        f.write('\n'.join(src) + '\n')
    with open(os.path.join(here, 'print_v2.out'), 'w') as f:
        f.write('\n'.join(out) + '\n')


main()
