"""tests/jupyter/check.py - the TSL kernel under a real client (tests/jupyter/run.sh runs it
with the venv's python and JUPYTER_PATH on build/jupyter). nbclient executes
tests/jupyter/kernel.ipynb and examples/train_digits.ipynb, and every output is checked: text,
a value, an error with its caret line, a PNG, a progress display updated in place, a cell
interrupted (nbclient's interrupt on timeout sends the kernel SIGINT) and the next cell run in
the same state. Then jupyter_client asks for completions, help and is_complete."""
import base64
import os
import sys
import time

import nbformat
from nbclient import NotebookClient
from jupyter_client.manager import start_new_kernel

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "tests"))
import pngread  # noqa: E402
failures = []


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        failures.append(what)


def outputs(cell, kind):
    return [o for o in cell.outputs if o.output_type == kind]


def text_of(cell, name="stdout"):
    return "".join(o.text for o in outputs(cell, "stream") if o.name == name)


def check_png(b64, what):
    try:
        w, h, px = pngread.decode(base64.b64decode(b64))
    except Exception as e:
        return check(False, "%s: a valid PNG (%s)" % (what, e))
    check((w, h) == (640, 480), "%s: a valid PNG of 640x480 (got %dx%d)" % (what, w, h))
    # the plot area holds coloured pixels (the line, matplotlib's tab10 blue): not a blank image
    coloured = sum(1 for y in range(h) for x in range(w) if abs(px(x, y)[0] - px(x, y)[2]) > 60)
    check(coloured > 200, "%s: coloured pixels where the line is drawn (%d)" % (what, coloured))


def execute(path, cwd, timeout_of):
    nb = nbformat.read(path, as_version=4)
    t0 = time.time()
    NotebookClient(nb, kernel_name="tsl", timeout=60, timeout_func=timeout_of, interrupt_on_timeout=True,
                   resources={"metadata": {"path": cwd}}).execute()
    print("     (%s ran in %.1f s)" % (os.path.relpath(path, ROOT), time.time() - t0))
    return nb.cells


# ---- the kernel's notebook ----
cells = execute(os.path.join(ROOT, "tests/jupyter/kernel.ipynb"), ROOT,
                lambda cell: 3 if "interrupt" in cell.metadata.get("tags", []) else 60)
code = [c for c in cells if c.cell_type == "code"]
check(text_of(code[0]) == "answer 42\n", "print streams its line: %r" % text_of(code[0]))
res = outputs(code[1], "execute_result")
check(len(res) == 1 and res[0].data["text/plain"] == "43", "a last expression is the cell's value (43)")
err = outputs(code[2], "error")
tb = err[0].traceback if err else []
check(len(err) == 1 and tb[:1] == ["<cell 3>:1:5: error: shape mismatch for '+': [2] and [3]"],
      "an error names its cell, line and column: %r" % tb[:1])
check(tb[1:3] == ["    y = ones([2]) + ones([3])", "        ^"], "the error shows its source line and caret: %r" % tb[1:3])
img = [o for o in outputs(code[3], "display_data") if "image/png" in o.data]
check(len(img) == 1, "plot.show() displays one image/png")
if img:
    check_png(img[0].data["image/png"], "plot.show()'s figure")
bars = outputs(code[4], "display_data")
check(len(bars) == 1 and bars[0].data.get("text/plain", "").startswith("sum: 100%|") and "1000/1000" in bars[0].data["text/plain"],
      "a progress bar is one display, updated in place to 100%%: %r" % [b.data for b in bars])
check(outputs(code[4], "execute_result")[0].data["text/plain"] == "499500", "the loop under the bar ran (499500)")
err = outputs(code[5], "error")
check(len(err) == 1 and err[0].ename == "KeyboardInterrupt" and err[0].traceback[0].endswith("error: interrupted"),
      "an endless loop is interrupted: %r" % ([e.traceback for e in err]))
check(text_of(code[6]) == "alive true 42\n", "after the interrupt the kernel runs the next cell in the same state: %r"
      % text_of(code[6]))

# ---- the training notebook (the digits MLP, its loss plotted inline) ----
cells = execute(os.path.join(ROOT, "examples/train_digits.ipynb"), os.path.join(ROOT, "examples"), lambda cell: 120)
code = [c for c in cells if c.cell_type == "code"]
train = text_of(code[2])
check(train.count("epoch ") == 5 and "test accuracy 0.9" in train, "the MLP trains 5 epochs to >= 90%%: %r" % train)
bar = outputs(code[2], "display_data")
check(len(bar) == 1 and "5/5" in bar[0].data.get("text/plain", ""), "the epochs' progress bar ends at 5/5")
img = [o for o in outputs(code[3], "display_data") if "image/png" in o.data]
check(len(img) == 1, "the loss curve is displayed inline")
if img:
    check_png(img[0].data["image/png"], "the loss curve")

# ---- introspection through jupyter_client ----
km, kc = start_new_kernel(kernel_name="tsl")
try:
    def reply(msg_id):
        while True:
            r = kc.get_shell_msg(timeout=30)
            if r["parent_header"].get("msg_id") == msg_id:
                return r["content"]
    kc.execute_interactive("cfg = {alpha: 1, beta: 2}", timeout=30)
    c = reply(kc.complete("print(cfg.al", 12))
    check(c["matches"] == ["cfg.alpha"] and c["cursor_start"] == 6, "Tab completes a dict's field: %r" % c)
    c = reply(kc.complete("whi", 3))
    check("while" in c["matches"], "Tab completes keywords: %r" % c["matches"])
    c = reply(kc.complete(":he", 3))
    check(c["matches"] == [":help"], "Tab completes the : commands: %r" % c["matches"])
    c = reply(kc.inspect("softmax(x)", 3))
    check(c["found"] and c["data"]["text/plain"].startswith("softmax(t, axis=-1)"), "help(softmax) on Shift-Tab: %r" % c)
    states = [reply(kc.is_complete(s))["status"] for s in ("fn f() {", "x = 1", "x = )")]
    check(states == ["incomplete", "complete", "invalid"], "is_complete from the parser: %r" % states)
finally:
    kc.stop_channels()
    km.shutdown_kernel(now=True)

if failures:
    print("%d jupyter check(s) failed" % len(failures))
    sys.exit(1)
print("jupyter: all checks passed")
