#!/usr/bin/env python3
"""progress() on a terminal (issue 29): a loop of ~1.2 s over progress(range(12)) under a
pseudo-terminal redraws its bar in place (several carriage returns, each drawing followed by
an erase-to-end-of-line), counts up to 12/12 with the description, and ends with a newline;
a line the program prints inside the loop erases the bar first, which is drawn again below it. Usage: progress_pty.py bin/tsl"""
import os, pty, re, sys, tempfile

tsl = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "bin/tsl")
d = tempfile.mkdtemp()
src = os.path.join(d, "bar.tsl")
with open(src, "w") as f:
    f.write('s = 0\nfor i in progress(range(12), desc="work") {\n'
            '  t = clock()\n  while clock() - t < 0.1 { }\n  s = s + i\n  if i == 5 { print("half") }\n}\n'
            'print("sum", s)\n')
pid, fd = pty.fork()
if pid == 0:
    os.execv(tsl, [tsl, src])
out = b""
while True:
    try:
        data = os.read(fd, 4096)
    except OSError:
        break
    if not data:
        break
    out += data
_, status = os.waitpid(pid, 0)
text = out.decode(errors="replace")
assert os.WEXITSTATUS(status) == 0, "exit %d: %r" % (os.WEXITSTATUS(status), text)
draws = [s for s in text.split("\r") if s.startswith("work: ")]
assert len(draws) >= 4, "expected the bar redrawn several times in place, got %d: %r" % (len(draws), text)
assert all("\x1b[K" in s for s in draws), "each drawing erases the rest of the line: %r" % text
counts = [int(m.group(1)) for s in draws for m in [re.search(r"\| *(\d+)/12 \[", s)] if m]
assert counts == sorted(counts) and counts[0] < 12 and counts[-1] == 12, "counts %r in %r" % (counts, text)
assert re.search(r"work: 100%\|#{24}\| 12/12 \[00:0\d<00:00, [0-9.]+it/s\]\x1b\[K\r?\n", text), text
assert "sum 66" in text, text
# the program's own line first erases the bar (as tqdm.write), and the bar is drawn again below it
assert "\r\x1b[Khalf\r\n" in text, "print inside the loop does not clear the bar: %r" % text
assert re.search(r"half\r\n\rwork:  50%\|", text), "the bar is not redrawn after the program's line: %r" % text
print("progress pty: %d drawings, counts %s" % (len(draws), counts))
