#!/usr/bin/env python3
"""Drives the TSL REPL through a pseudo-terminal, as a person would: expression echo,
multi-line input, an error followed by a working prompt, Tab completion, Ctrl-C
interrupting `while true {}` (prompt back within 200 ms), cyclic and shared values, and
history in ~/.tsl_history."""
import os, pty, select, sys, tempfile, time

tsl = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "bin/tsl")
home = tempfile.mkdtemp()
env = dict(os.environ, HOME=home, TERM="dumb")
pid, fd = pty.fork()
if pid == 0:
    os.execve(tsl, [tsl], env)

buf = b""

def read_until(pattern, timeout=5.0):
    """Reads output until `pattern` appears; returns the text read since the last call."""
    global buf
    end = time.time() + timeout
    while pattern.encode() not in buf:
        left = end - time.time()
        if left <= 0:
            raise AssertionError("timed out waiting for %r; got %r" % (pattern, buf[-400:]))
        r, _, _ = select.select([fd], [], [], left)
        if r:
            try:
                data = os.read(fd, 4096)
            except OSError:
                break
            if not data:
                break
            buf += data
    i = buf.index(pattern.encode()) + len(pattern)
    out, buf = buf[:i].decode(errors="replace"), buf[i:]
    return out

def send(s):
    os.write(fd, s.encode())

def check(cond, what):
    if not cond:
        raise AssertionError(what)
    print("ok -", what)

read_until(">>> ")
send("1 + 2\r")
check("3" in read_until(">>> "), "expression value is echoed")

send("fn twice(x) {\r")
check("..." in read_until("... "), "an open block asks for more input")
send("  return x * 2\r")
read_until("... ")
send("}\r")
read_until(">>> ")
send("twice(21)\r")
check("42" in read_until(">>> "), "multi-line function works")

send("undefined_name + 1\r")
out = read_until(">>> ")
check("<stdin>:1:1: error: undefined variable 'undefined_name'" in out, "errors show <stdin>:LINE:COL")
send("\"still alive\"\r")
check("still alive" in read_until(">>> "), "the session goes on after an error")

send("twi\t")
time.sleep(0.3)
send("(1)\r")
check("2" in read_until(">>> "), "Tab completes a global name")

send("while true { }\r")
time.sleep(0.5)
t0 = time.time()
send("\x03")
out = read_until(">>> ")
elapsed = time.time() - t0
check("interrupted" in out, "Ctrl-C interrupts a running loop")
check(elapsed < 0.2, "prompt is back within 200 ms (%.0f ms)" % (elapsed * 1000))
send("1 + 1\r")
check("2" in read_until(">>> "), "the REPL works after an interrupt")

# issue 10 (files): :load of a device is refused at once, not read without end
send(":load /dev/zero\r")
out = read_until(">>> ", timeout=5.0)
check("'/dev/zero' is not a regular file" in out, ":load of /dev/zero is refused")
send("3 + 4\r")
check("7" in read_until(">>> "), "the REPL works after a refused :load")
# cyclic and shared values (issue 10): a list inside itself echoes as Python prints it, ==
# on it terminates, and a list shared 40 times (2^40 elements) neither hangs nor crashes:
# its echo stops at the text limit, and Ctrl-C interrupts str() of it
send("a = [1]\r")
read_until(">>> ")
send("push(a, a)\r")
read_until(">>> ")
send("a\r")
check("[1, [...]]" in read_until(">>> "), "a list that contains itself echoes as [1, [...]]")
send("a == a\r")
check("true" in read_until(">>> "), "== on a list that contains itself terminates")
send("x = [1]\r")
read_until(">>> ")
send("for i in range(40) { x = [x, x] }\r")
read_until(">>> ")
send("x\r")
check("error: text too large" in read_until(">>> ", timeout=30), "echoing 2^40 elements stops at the text limit")
send("s = str(x)\r")
time.sleep(0.1)
send("\x03")
check("interrupted" in read_until(">>> ", timeout=30), "Ctrl-C interrupts printing a huge value")
send("len(a)\r")
check("2" in read_until(">>> "), "the REPL works after that")

send(":quit\r")
os.waitpid(pid, 0)
with open(os.path.join(home, ".tsl_history")) as f:
    hist = f.read()
check("1 + 2" in hist and "twice(21)" in hist, "history is saved to ~/.tsl_history")

# exit(code) (issue 11, files and process): ends the REPL with that status, stdout flushed
pid, fd = pty.fork()
if pid == 0:
    os.execve(tsl, [tsl], env)
buf = b""
read_until(">>> ")
send('print("bye" * 2)\r')
check("byebye" in read_until(">>> "), "s * n in the REPL")
send("exit(5)\r")
_, status = os.waitpid(pid, 0)
check(os.WIFEXITED(status) and os.WEXITSTATUS(status) == 5, "exit(5) ends the REPL with status 5 (got %r)" % status)
