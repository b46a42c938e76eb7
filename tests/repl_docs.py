#!/usr/bin/env python3
"""tests/repl_docs.py TSL - every REPL transcript in README.md and docs/*.md is true.

A transcript is a fenced block whose first prompt line starts with `>>> `. Its input lines
(`>>> ` and `... `) are typed into a fresh REPL through a pseudo-terminal, waiting for the
next prompt after each, and the session's text must be the block's text from that first
prompt on, line for line (trailing spaces aside). Error locations count lines over the
session, so a line added to a tour moves the ones after it (the README's tour once said
<stdin>:11:5 where the REPL says 13). Prints one line per transcript that differs, with a
diff, and exits 1 if there was any."""
import difflib, fcntl, os, pty, re, select, struct, sys, tempfile, termios, time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TSL = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "bin", "tsl"))
ANSI = re.compile(r"\x1b\[[0-9;?]*[a-zA-Z]")


def session(inputs):
    """The text a REPL shows for these input lines, prompts and echoes included."""
    env = dict(os.environ, HOME=tempfile.mkdtemp(), TERM="dumb")
    pid, fd = pty.fork()
    if pid == 0:
        os.execve(TSL, [TSL], env)
    # a wide terminal: readline scrolls a line longer than the width sideways ('<' marks)
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 50, 300, 0, 0))
    buf = b""

    def until_prompt(timeout=10.0):
        nonlocal buf
        end = time.time() + timeout
        while not re.search(rb"(>>>|\.\.\.) $", buf):
            r, _, _ = select.select([fd], [], [], max(0.0, end - time.time()))
            if not r:
                raise AssertionError("no prompt; got %r" % buf[-300:])
            buf += os.read(fd, 65536)

    until_prompt()
    for line in inputs:
        os.write(fd, (line + "\r").encode())
        time.sleep(0.05)
        until_prompt()
    os.write(fd, b":quit\r")
    try:
        while select.select([fd], [], [], 2.0)[0]:
            data = os.read(fd, 65536)
            if not data:
                break
            buf += data
    except OSError:
        pass
    os.waitpid(pid, 0)
    text = ANSI.sub("", buf.decode("utf-8", "replace")).replace("\r", "")
    lines = [l for l in text.split("\n") if l.strip() not in (">>>", ">>> :quit")]
    while lines and not lines[-1].strip():
        lines.pop()
    return lines


def transcripts(path):
    text = open(path, encoding="utf-8").read()
    for m in re.finditer(r"```[a-z]*\n(.*?)```", text, re.S):
        lines = m.group(1).rstrip("\n").split("\n")
        first = next((i for i, l in enumerate(lines) if l.startswith(">>> ")), None)
        if first is not None:
            yield text[:m.start()].count("\n") + 1, lines[first:]


bad = 0
for name in ["README.md"] + sorted("docs/" + f for f in os.listdir(os.path.join(ROOT, "docs")) if f.endswith(".md")):
    for line, want in transcripts(os.path.join(ROOT, name)):
        inputs = [l[4:] for l in want if l.startswith((">>> ", "... ")) and l[4:].strip() not in (":quit", ":q")]
        want = [l.rstrip() for l in want if l.strip() not in (">>> :quit", ">>> :q")]
        got = [l.rstrip() for l in session(inputs)]
        if got != want:
            bad += 1
            print("%s:%d: the REPL shows something else:" % (name, line))
            for d in difflib.unified_diff(want, got, "documented", "bin/tsl", lineterm="", n=1):
                print("  " + d)
sys.exit(1 if bad else 0)
