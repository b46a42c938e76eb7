"""kernel.py - the TSL kernel: a wrapper kernel on ipykernel (the protocol: sockets, signing,
heartbeat, history, shutdown) over one libtsl state (libtsl.py). It calls the entry points the
REPL calls (tsl_run_input, tsl_result_text, tsl_error_report, tsl_complete, tsl_help_text,
...), so a cell runs as the same text typed at `tsl`'s prompt would.

Output. The state's hooks queue what the program writes (print: stdout; warnings, print(...,
file="stderr"): stderr) and what it displays (plot.show(): image/png; a progress bar:
text/plain under an id, redrawn in place) while the cell runs on the owner thread; the main
thread sends the queue every 50 ms, in order, so output streams as it is printed.

Interrupt. The kernel spec asks for interrupt_mode "signal": SIGINT reaches the main thread
(ipykernel makes it a KeyboardInterrupt while a request is handled), which waits for the cell
and calls tsl_interrupt; the cell stops at its next poll with "interrupted"."""
import base64
import codecs
import re
import threading

from ipykernel.kernelbase import Kernel

from . import libtsl

FLUSH_S = 0.05
COMMANDS = {
    ":help": "[NAME]   this list, or what help(NAME) prints",
    ":vars": "          the variables you defined",
    ":dis": "           the bytecode of the last static block",
    ":static": "on|off  run static blocks compiled (on) or eagerly (off)",
    ":device": "cpu|gpu default device for new tensors",
    ":reload": "MODULE  import MODULE afresh from its file",
    ":load": "FILE      run a script in this session",
}
NAME_AT_END = re.compile(r"[A-Za-z_][A-Za-z0-9_.]*$|(?<![A-Za-z0-9_.])$")


class TslKernel(Kernel):
    implementation = "tsl"
    implementation_version = "0.1"
    language = "tsl"
    language_info = {
        "name": "tsl",
        "mimetype": "text/x-tsl",
        "file_extension": ".tsl",
        # no TSL mode exists in CodeMirror or Pygments: Python's colours its comments, strings,
        # numbers and most keywords (fn and nil stay plain)
        "codemirror_mode": "python",
        "pygments_lexer": "python",
    }

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self._lock = threading.Lock()
        self._queue = []             # ("stream", name, text) or ("display", mime, data, id)
        self._shown = set()          # display ids already sent: the next is an update
        self._silent = False         # the request asked for no output (execute's silent)
        self._decoders = {n: codecs.getincrementaldecoder("utf-8")("replace") for n in ("stdout", "stderr")}
        self.owner = libtsl.Owner()
        self.tsl = self.owner.call(libtsl.Tsl, libtsl.default_library(), lambda b: self._stream("stdout", b),
                                   lambda b: self._stream("stderr", b), self._display)
        self.language_info = dict(self.language_info, version=self.tsl.version().split()[0])
        self.banner = "TSL %s: a tensor scripting language. :help lists the commands." % self.tsl.version()

    # ---- the hooks (owner thread) and the queue they fill ----

    def _stream(self, name, data):
        text = self._decoders[name].decode(data)
        if text:
            with self._lock:
                self._queue.append(("stream", name, text))

    def _display(self, mime, data, ident):
        with self._lock:
            self._queue.append(("display", mime, data, ident))

    def _flush(self):
        """Sends what the hooks queued: consecutive text of a stream as one message, and of
        the redraws of one display only the last (at the place of the first)."""
        with self._lock:
            items, self._queue = self._queue, []
        if self._silent:
            return
        merged = []
        for it in items:
            if it[0] == "stream" and merged and merged[-1][0] == "stream" and merged[-1][1] == it[1]:
                merged[-1] = ("stream", it[1], merged[-1][2] + it[2])
                continue
            if it[0] == "display" and it[3] is not None:
                at = next((i for i, m in enumerate(merged) if m[0] == "display" and m[3] == it[3]), None)
                if at is not None:
                    merged[at] = it
                    continue
            merged.append(it)
        for it in merged:
            if it[0] == "stream":
                self.send_response(self.iopub_socket, "stream", {"name": it[1], "text": it[2]})
            else:
                self._send_display(*it[1:])

    def _send_display(self, mime, data, ident):
        value = base64.b64encode(data).decode("ascii") if mime.startswith("image/") else data.decode("utf-8", "replace")
        content = {"data": {mime: value}, "metadata": {}, "transient": {}}
        kind = "display_data"
        if ident is not None:
            content["transient"]["display_id"] = ident
            if ident in self._shown:
                kind = "update_display_data"
            self._shown.add(ident)
        self.send_response(self.iopub_socket, kind, content)

    def _wait(self, fn, *args):
        """Runs fn on the owner thread, sending its output as it comes; Ctrl-C interrupts it."""
        done, box = self.owner.submit(fn, *args)
        while True:
            try:
                if done.wait(FLUSH_S):
                    break
                self._flush()
            except KeyboardInterrupt:
                self.tsl.interrupt()
        try:
            self._flush()
        except KeyboardInterrupt:   # one that came as the cell ended: nothing left to stop
            pass
        return libtsl.Owner.result(box)

    # ---- execute ----

    def _error(self, status, silent):
        """The error reply, its report (the message, the source line, the caret, the
        traceback, as `tsl` prints them) as the traceback."""
        report = self.tsl.error_report().rstrip("\n")
        content = {
            "ename": "KeyboardInterrupt" if status == libtsl.INTERRUPTED else "TSLError",
            "evalue": self.tsl.error_message(),
            "traceback": report.split("\n"),
        }
        if not silent:
            self.send_response(self.iopub_socket, "error", content)
        return dict(content, status="error", execution_count=self.execution_count)

    def _ok(self):
        return {"status": "ok", "execution_count": self.execution_count, "payload": [], "user_expressions": {}}

    def _print(self, text, name="stdout"):
        if text:
            self.send_response(self.iopub_socket, "stream", {"name": name, "text": text})

    async def do_execute(self, code, silent, store_history=True, user_expressions=None, allow_stdin=False,
                         **kwargs):
        if code.strip().startswith(":"):
            return self._command(code.strip(), silent)
        if not code.strip():
            return self._ok()
        self._silent = silent
        try:
            return self._execute(code, silent)
        finally:
            self._silent = False

    def _execute(self, code, silent):
        status = self._wait(self.tsl.run_input, "<cell %d>" % self.execution_count, code)
        if status == libtsl.INCOMPLETE:   # the parser's error at the end, as a script would get it
            status = self.owner.call(self.tsl.run_string, "<cell %d>" % self.execution_count, code)
        if status == libtsl.EXIT:
            self._print("exit(%d): the kernel goes on; restart it for a fresh state\n" % self.tsl.exit_code(), "stderr")
            return self._ok()
        if status != libtsl.OK:
            return self._error(status, silent)
        st, shown = self.owner.call(self.tsl.result_text)
        if st != libtsl.OK:
            return self._error(st, silent)
        if shown is not None and not silent:
            self.send_response(self.iopub_socket, "execute_result",
                               {"execution_count": self.execution_count, "data": {"text/plain": shown}, "metadata": {}})
        return self._ok()

    def _command(self, line, silent):
        """The REPL's `:` commands, on the same API functions repl/repl.c calls."""
        word, _, arg = line.partition(" ")
        arg = arg.strip()
        out = ""
        if word == ":help" and not arg:
            out = "TSL kernel commands (a cell that starts with ':'):\n" + \
                  "".join("  %s %s\n" % kv for kv in COMMANDS.items()) + \
                  "Tab completes names and fields after a '.'; Shift-Tab shows help; Interrupt stops a cell;\n" + \
                  "plot.show() draws the current figure inline.\n"
        elif word == ":help":
            st, out = self.owner.call(self.tsl.help_text, arg)
        elif word == ":vars":
            st, out = self.owner.call(self.tsl.vars_text)
        elif word == ":dis":
            st, out = self.owner.call(self.tsl.dis_text)
            if st != libtsl.OK:
                return self._error(st, silent)
        elif word == ":static" and arg in ("on", "off"):
            self.owner.call(self.tsl.set_static, arg == "on")
            out = "static: %s\n" % arg
        elif word == ":device" and arg in ("cpu", "gpu"):
            if self.owner.call(self.tsl.set_device, arg) != libtsl.OK:
                return self._error(libtsl.ERROR, silent)
            out = "device: %s\n" % arg
        elif word == ":reload" and arg:
            if self.owner.call(self.tsl.reload, arg) != libtsl.OK:
                return self._error(libtsl.ERROR, silent)
            out = "reloaded %s\n" % arg
        elif word == ":load" and arg:
            st = self._wait(self.tsl.run_file, arg)
            if st not in (libtsl.OK, libtsl.EXIT):
                return self._error(st, silent)
        else:
            out = "unknown command or argument: %s (try :help)\n" % line
        if not silent:
            self._print(out)
        return self._ok()

    # ---- introspection ----

    async def do_complete(self, code, cursor_pos):
        before = code[:cursor_pos]
        line = before[before.rfind("\n") + 1:]
        if line.lstrip().startswith(":") and " " not in line.strip():
            word = line.strip()
            matches = [c for c in COMMANDS if c.startswith(word)]
        else:
            word = NAME_AT_END.search(line).group(0)
            matches = self.owner.call(self.tsl.complete, word)
        return {"status": "ok", "matches": matches, "cursor_start": cursor_pos - len(word), "cursor_end": cursor_pos,
                "metadata": {}}

    async def do_inspect(self, code, cursor_pos, detail_level=0, omit_sections=()):
        left = re.search(r"[A-Za-z0-9_.]*$", code[:cursor_pos]).group(0)
        right = re.match(r"[A-Za-z0-9_]*", code[cursor_pos:]).group(0)
        name = (left + right).strip(".")
        text = ""
        if name:
            st, text = self.owner.call(self.tsl.help_text, name)
            if st != libtsl.OK:
                text = ""
        return {"status": "ok", "found": bool(text), "data": {"text/plain": text} if text else {}, "metadata": {}}

    async def do_is_complete(self, code):
        if code.strip().startswith(":"):
            return {"status": "complete"}
        st = self.owner.call(self.tsl.check_input, code)
        if st == libtsl.INCOMPLETE:
            return {"status": "incomplete", "indent": "  "}
        return {"status": "complete" if st == libtsl.OK else "invalid"}
