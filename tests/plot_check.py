#!/usr/bin/env python3
"""plot (issue 29): renders figures with bin/tsl and checks the files themselves, with the
standard library only (a PNG is read back with zlib, tests/pngread.py): the PNG's size, the line's colour
where y = x must cross the axes' middle, white away from it, an image's corner colours,
a histogram's bar heights, and the title and labels in the SVG. Usage: plot_check.py bin/tsl"""
import os, subprocess, sys, tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pngread

tsl = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "bin/tsl")
d = tempfile.mkdtemp()

def run(code):
    src = os.path.join(d, "p.tsl")
    with open(src, "w") as f:
        f.write("import plot\n" + code)
    r = subprocess.run([tsl, src], capture_output=True, text=True, cwd=d)
    assert r.returncode == 0, r.stderr

def read_png(path):
    with open(path, "rb") as f:
        return pngread.decode(f.read())

def near(px, want, tol=40):
    return all(abs(p - q) <= tol for p, q in zip(px, want))

# axes: 72 px left, 24 right, 44 top, 56 bottom; the data range padded by 5% each side
def to_px(x, lo, hi, w=640): return round(72 + (x - (lo - (hi - lo) * .05)) / ((hi - lo) * 1.1) * (w - 96))
def to_py(y, lo, hi, h=480): return round(h - 56 - (y - (lo - (hi - lo) * .05)) / ((hi - lo) * 1.1) * (h - 100))

blue, orange = (31, 119, 180), (255, 127, 14)
run('plot.line(arange(11), title="y = x", xlabel="x", ylabel="y", label="identity")\n'
    'plot.line([10, 10], xs=[0, 10], label="ten")\nplot.save("line.png")\n')
w, h, px = read_png(os.path.join(d, "line.png"))
assert (w, h) == (640, 480), (w, h)
for t in (2.5, 5, 7.5):   # where the line y = x must pass
    x, y = to_px(t, 0, 10), to_py(t, 0, 10)
    assert any(near(px(x + i, y + j), blue) for i in (-1, 0, 1) for j in (-1, 0, 1)), (t, px(x, y))
x, y = to_px(5, 0, 10), to_py(10, 0, 10)
assert near(px(x, y), orange), px(x, y)
assert px(to_px(2, 0, 10), to_py(7, 0, 10)) == (255, 255, 255), "blank away from the lines"
assert px(to_px(9, 0, 10), to_py(1, 0, 10)) == (255, 255, 255), "blank away from the lines"

run('plot.imshow(tensor([[0, 1], [2, 3]]), title="img")\nplot.save("img.png")\n')
w, h, px = read_png(os.path.join(d, "img.png"))
assert near(px(80, 52), (69, 0, 84), 3), px(80, 52)          # the minimum, top left
assert near(px(600, 410), (252, 229, 33), 3), px(600, 410)   # the maximum, bottom right

# bars of 3, 3 and 1 over [1, 4.5] (np.histogram of the same values); y from 0 to 3
run('plot.figure(width=400, height=300)\nplot.hist([1, 2, 2, 3, 3, 3, 4.5], bins=3)\nplot.save("h.png")\n')
w, h, px = read_png(os.path.join(d, "h.png"))
assert (w, h) == (400, 300), (w, h)
mid = lambda k: to_px(1 + 3.5 / 3 * (k + 0.5), 1, 4.5, 400)
assert near(px(mid(0), to_py(2.5, 0, 3, 300)), blue), "bar 1 reaches 3"
assert near(px(mid(2), to_py(0.5, 0, 3, 300)), blue), "bar 3 reaches 1"
assert px(mid(2), to_py(2, 0, 3, 300)) == (255, 255, 255), "bar 3 stops at 1"

run('plot.scatter([1, 2, 3], [3, 1, 2], label="points <a&b>", title="Scatter title", xlabel="the x")\n'
    'plot.save("s.svg")\n')
svg = open(os.path.join(d, "s.svg")).read()
assert svg.lstrip().startswith("<?xml") and "<svg" in svg, svg[:100]
assert "<title>Scatter title</title>" in svg and "points &lt;a&amp;b&gt;" in svg and "the x" in svg, svg[-300:]
assert svg.rstrip().endswith("</svg>")

r = subprocess.run([tsl, "-e", 'import plot\nplot.line([1])\nplot.save("x.jpg")'], capture_output=True, text=True, cwd=d)
assert r.returncode != 0 and "must end in .png or .svg" in r.stderr, r.stderr
print("plot: PNG pixels, image, histogram bars and SVG text as expected")
