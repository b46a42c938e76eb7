"""libtsl.py - the part of include/tsl.h the kernel uses, through ctypes, and the thread that
owns the state.

One state per kernel, used by one thread only (tsl.h: "a state is used by one thread at a
time"; the evaluator also measures the C stack of the thread that made it): the `tsl`
command runs its interpreter on a thread with a 1 GiB stack, and so does the kernel. That
thread blocks SIGINT; the kernel's main thread hears it and calls tsl_interrupt, which is
safe from another thread while the state runs."""
import ctypes
import os
import queue
import signal
import threading

OK, ERROR, INCOMPLETE, EXIT, INTERRUPTED, IO = 0, 1, 2, 3, 4, 5
OPT_NO_STATIC = 5

WriteFn = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t)
DisplayFn = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p, ctypes.c_size_t,
                             ctypes.c_char_p)

_SIGNATURES = {
    # name: (result, argument types)
    "tsl_version": (ctypes.c_char_p, []),
    "tsl_backend": (ctypes.c_char_p, []),
    "tsl_new": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_void_p, ctypes.POINTER(ctypes.c_void_p)]),
    "tsl_free": (None, [ctypes.c_void_p]),
    "tsl_set_output": (ctypes.c_int, [ctypes.c_void_p, WriteFn, ctypes.c_void_p]),
    "tsl_set_diagnostics": (ctypes.c_int, [ctypes.c_void_p, WriteFn, ctypes.c_void_p]),
    "tsl_set_display": (ctypes.c_int, [ctypes.c_void_p, DisplayFn, ctypes.c_void_p]),
    "tsl_set_stdlib_path": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_char_p]),
    "tsl_set_option": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_int, ctypes.c_int64]),
    "tsl_set_device": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_char_p]),
    "tsl_run_input": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_size_t, ctypes.c_int]),
    "tsl_run_string": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_ssize_t]),
    "tsl_run_file": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_char_p]),
    "tsl_check_input": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_size_t]),
    "tsl_result_text": (ctypes.c_int, [ctypes.c_void_p, ctypes.POINTER(ctypes.c_char_p)]),
    "tsl_exit_code": (ctypes.c_int, [ctypes.c_void_p]),
    "tsl_interrupt": (None, [ctypes.c_void_p]),
    "tsl_interrupt_clear": (None, [ctypes.c_void_p]),
    "tsl_error_message": (ctypes.c_char_p, [ctypes.c_void_p]),
    "tsl_error_report": (ctypes.c_char_p, [ctypes.c_void_p]),
    "tsl_reload": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_char_p]),
    "tsl_help_text": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_char_p, ctypes.POINTER(ctypes.c_char_p)]),
    "tsl_dis_text": (ctypes.c_int, [ctypes.c_void_p, ctypes.POINTER(ctypes.c_char_p)]),
    "tsl_vars_text": (ctypes.c_int, [ctypes.c_void_p, ctypes.POINTER(ctypes.c_char_p)]),
    "tsl_complete": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int, ctypes.POINTER(ctypes.c_char_p)]),
}


def default_library():
    """TSL_LIB, else bin/libtsl.so of the checkout this file is in (repl/jupyter/tsl_kernel/)."""
    here = os.path.dirname(os.path.abspath(__file__))
    return os.environ.get("TSL_LIB") or os.path.join(here, "..", "..", "..", "bin", "libtsl.so")


def _text(b):
    return b.decode("utf-8", "replace") if b else ""


class Owner:
    """The thread that owns the state: every call on it runs there, one at a time."""

    def __init__(self):
        self._jobs = queue.SimpleQueue()
        for shift in (30, 28, 26):   # as repl/main.c: smaller where the address space is limited
            try:
                threading.stack_size(1 << shift)
                self._thread = threading.Thread(target=self._loop, name="tsl", daemon=True)
                self._thread.start()
                break
            except (ValueError, RuntimeError, MemoryError):
                continue
            finally:
                threading.stack_size(0)
        else:
            raise RuntimeError("cannot start the interpreter's thread")

    def _loop(self):
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
        while True:
            fn, args, box, done = self._jobs.get()
            try:
                box.append(("ok", fn(*args)))
            except BaseException as e:   # handed back to the waiting thread
                box.append(("raise", e))
            done.set()

    def submit(self, fn, *args):
        """Starts fn(*args) on the owner; returns (done event, result box)."""
        box, done = [], threading.Event()
        self._jobs.put((fn, args, box, done))
        return done, box

    def call(self, fn, *args):
        done, box = self.submit(fn, *args)
        done.wait()
        return Owner.result(box)

    @staticmethod
    def result(box):
        kind, value = box[0]
        if kind == "raise":
            raise value
        return value


class Tsl:
    """A state of libtsl with its output, diagnostics and display hooks set to Python callables:
    out(text), err(text), display(mime, data bytes, id or None). Methods run on the owner
    thread (call them through Owner.call), except interrupt, which any thread may call."""

    def __init__(self, path, out, err, display):
        self.lib = ctypes.CDLL(path)
        for name, (res, args) in _SIGNATURES.items():
            f = getattr(self.lib, name)
            f.restype, f.argtypes = res, args
        self.S = ctypes.c_void_p()
        if self.lib.tsl_new(None, None, ctypes.byref(self.S)) != OK:
            raise MemoryError("tsl_new: out of memory")
        self._hooks = (WriteFn(self._writer(out)), WriteFn(self._writer(err)), DisplayFn(self._displayer(display)))
        self.lib.tsl_set_output(self.S, self._hooks[0], None)
        self.lib.tsl_set_diagnostics(self.S, self._hooks[1], None)
        self.lib.tsl_set_display(self.S, self._hooks[2], None)
        stdlib = os.path.join(os.path.dirname(os.path.abspath(path)), "..", "stdlib")   # as tsl finds it
        self.lib.tsl_set_stdlib_path(self.S, os.path.normpath(stdlib).encode())

    @staticmethod
    def _writer(fn):
        def write(ud, s, n):
            try:
                fn(ctypes.string_at(s, n))
                return 0
            except Exception:
                return 5   # EIO: the program sees a failed write
        return write

    @staticmethod
    def _displayer(fn):
        def display(ud, mime, data, n, ident):
            try:
                fn(_text(mime), ctypes.string_at(data, n), _text(ident) or None)
                return 0
            except Exception:
                return 5
        return display

    def version(self):
        return "%s (%s)" % (_text(self.lib.tsl_version()), _text(self.lib.tsl_backend()))

    def run_input(self, name, code):
        self.lib.tsl_interrupt_clear(self.S)   # a Ctrl-C that came after the last run ended
        b = code.encode()
        return self.lib.tsl_run_input(self.S, name.encode(), b, len(b), 0)

    def run_string(self, name, code):
        b = code.encode()
        return self.lib.tsl_run_string(self.S, name.encode(), b, len(b))

    def run_file(self, path):
        return self.lib.tsl_run_file(self.S, path.encode())

    def check_input(self, code):
        b = code.encode()
        return self.lib.tsl_check_input(self.S, b, len(b))

    def result_text(self):
        t = ctypes.c_char_p()
        st = self.lib.tsl_result_text(self.S, ctypes.byref(t))
        return st, (None if t.value is None else _text(t.value))

    def interrupt(self):
        self.lib.tsl_interrupt(self.S)

    def exit_code(self):
        return self.lib.tsl_exit_code(self.S)

    def error_message(self):
        return _text(self.lib.tsl_error_message(self.S))

    def error_report(self):
        return _text(self.lib.tsl_error_report(self.S))

    def _tool(self, fn, *args):
        t = ctypes.c_char_p()
        st = fn(self.S, *args, ctypes.byref(t))
        return st, _text(t.value)

    def help_text(self, name):
        return self._tool(self.lib.tsl_help_text, name.encode())

    def dis_text(self):
        return self._tool(self.lib.tsl_dis_text)

    def vars_text(self):
        return self._tool(self.lib.tsl_vars_text)

    def reload(self, module):
        return self.lib.tsl_reload(self.S, module.encode())

    def set_static(self, on):
        return self.lib.tsl_set_option(self.S, OPT_NO_STATIC, 0 if on else 1)

    def set_device(self, name):
        return self.lib.tsl_set_device(self.S, name.encode())

    def complete(self, text, limit=1000):
        out, t = [], ctypes.c_char_p()
        while len(out) < limit and self.lib.tsl_complete(self.S, text.encode(), len(out), ctypes.byref(t)) == OK and t.value:
            out.append(_text(t.value))
        return out
