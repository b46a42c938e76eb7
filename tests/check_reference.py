#!/usr/bin/env python3
"""tests/check_reference.py TSL [REFERENCE] - keeps docs/reference.md in step with the code.

1. Every built-in the interpreter registers must appear in the reference as a call written in
   backticks (`name(`), and every predefined constant as `name`. The interpreter has no way to
   list its globals, so the names come from the tables that register them - the OP rows of
   ops/ops.def (all but F_SYNTAX ones, reached only through operators) and the BuiltinDef rows
   of lang/*.c, the same tables lang/builtins.c installs - and each name is then checked
   against the binary itself (type(name) must be "function"), so a parse that drifts from the
   sources fails here instead of silently checking fewer names.
2. Every ```tsl block (of the reference, and of README.md) must run with TSL (in a scratch folder that sees examples/) and exit 0. Where a block has
   `# => TEXT` comments, its stdout must be exactly those lines, in order.
3. Every relative link in README.md, docs/*.md and examples/**/*.md names a file that exists
   inside the repository (the docs stand alone).
Prints one line per problem and exits 1 if there was any.
"""
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def op_names():
    names = []
    with open(os.path.join(ROOT, "ops", "ops.def"), encoding="utf-8") as f:
        for line in f:
            m = re.match(r'OP\(\s*\w+\s*,\s*"(\w+)"\s*,\s*"[^"]*"\s*,\s*\d+\s*,\s*\w+\s*,\s*([^,]+),', line)
            if m and "F_SYNTAX" not in m.group(2):
                names.append(m.group(1))
    return names


def builtindef_names():
    """Names in every `const BuiltinDef NAME[] = { ... };` table of lang/*.c."""
    names = []
    lang = os.path.join(ROOT, "lang")
    for fname in sorted(os.listdir(lang)):
        if not fname.endswith(".c"):
            continue
        with open(os.path.join(lang, fname), encoding="utf-8") as f:
            src = f.read()
        for table in re.finditer(r"const BuiltinDef \w+\[\]\s*=\s*\{(.*?)\n\};", src, re.S):
            names += re.findall(r'\{\s*"(\w+)"\s*,\s*\w+\s*,', table.group(1))
    return names


def constant_names():
    with open(os.path.join(ROOT, "lang", "builtins.c"), encoding="utf-8") as f:
        src = f.read()
    m = re.search(r"\} constants\[\] = \{(.*?)\};", src, re.S)
    return re.findall(r'\{\s*"(\w+)"\s*,', m.group(1)) if m else []


def run(tsl, code, timeout=20):
    """Runs code as block.tsl in a fresh folder that sees the repository's examples/ (so a block
    reads examples/data/... as from the repository root, and files it writes go nowhere else)."""
    with tempfile.TemporaryDirectory() as d:
        os.symlink(os.path.join(ROOT, "examples"), os.path.join(d, "examples"))
        with open(os.path.join(d, "block.tsl"), "w", encoding="utf-8") as f:
            f.write(code)
        try:
            p = subprocess.run([tsl, "block.tsl"], cwd=d, capture_output=True, text=True, timeout=timeout)
            return p.returncode, p.stdout, p.stderr
        except subprocess.TimeoutExpired:
            return -1, "", "timed out after %d s" % timeout


def check_names(tsl, doc, problems):
    funcs = op_names() + builtindef_names()
    consts = constant_names()
    if len(funcs) < 100 or len(consts) < 4:
        problems.append("found only %d built-ins and %d constants in the sources: the parser here is out of date"
                        % (len(funcs), len(consts)))
    # The binary must agree that each parsed name is a predefined function or number.
    probe = "".join('print(type(%s))\n' % n for n in funcs + consts)
    rc, out, err = run(tsl, probe)
    kinds = out.split("\n")
    for i, n in enumerate(funcs + consts):
        want = "function" if i < len(funcs) else "number"
        got = kinds[i] if rc == 0 and i < len(kinds) else None
        if got != want:
            problems.append("'%s' parsed from the sources is not a registered %s in %s (%s)"
                            % (n, want, tsl, got or err.strip().split("\n")[0]))
    for n in sorted(set(funcs)):
        if not re.search(r"`%s\(" % re.escape(n), doc):
            problems.append("built-in %s() is missing from docs/reference.md (write it as `%s(...)`)" % (n, n))
    for n in consts:
        if not re.search(r"`%s`" % re.escape(n), doc):
            problems.append("constant %s is missing from docs/reference.md (write it as `%s`)" % (n, n))


def tsl_blocks(doc):
    """(line number, code) of each ```tsl block."""
    blocks = []
    lines = doc.split("\n")
    i = 0
    while i < len(lines):
        if lines[i].strip() == "```tsl":
            start = i + 1
            j = start
            while j < len(lines) and lines[j].strip() != "```":
                j += 1
            blocks.append((start + 1, "\n".join(lines[start:j]) + "\n"))
            i = j
        i += 1
    return blocks


def check_links(problems):
    files = [os.path.join(ROOT, "README.md")]
    for top in ("docs", "examples"):
        for d, _, names in os.walk(os.path.join(ROOT, top)):
            files += [os.path.join(d, n) for n in names if n.endswith(".md")]
    for path in files:
        with open(path, encoding="utf-8") as f:
            text = f.read()
        for m in re.finditer(r"\]\(([^)\s]+)\)", text):
            target = m.group(1).split("#")[0]
            if not target or re.match(r"[a-z]+:", target):
                continue
            full = os.path.normpath(os.path.join(os.path.dirname(path), target))
            line = text.count("\n", 0, m.start()) + 1
            where = "%s:%d" % (os.path.relpath(path, ROOT), line)
            if not (full + os.sep).startswith(ROOT + os.sep) or os.path.isabs(target):
                problems.append("%s: link %s points outside the repository" % (where, m.group(1)))
            elif not os.path.exists(full):
                problems.append("%s: link %s names no file" % (where, m.group(1)))


def check_blocks(tsl, doc, problems, name):
    blocks = tsl_blocks(doc)
    if not blocks:
        problems.append("%s has no ```tsl blocks" % name)
    for line, code in blocks:
        expected = [m.group(1) for m in re.finditer(r"# => ?(.*)$", code, re.M)]
        rc, out, err = run(tsl, code)
        if rc != 0:
            problems.append("%s:%d: the tsl block exits %d: %s" % (name, line, rc, err.strip().split("\n")[0]))
            continue
        got = out.split("\n")
        if got and got[-1] == "":
            got.pop()
        if expected and [g.rstrip() for g in got] != [e.rstrip() for e in expected]:
            for k in range(max(len(got), len(expected))):
                g = got[k] if k < len(got) else "(nothing)"
                e = expected[k] if k < len(expected) else "(nothing)"
                if g.rstrip() != e.rstrip():
                    problems.append("%s:%d: output line %d of the block is %r, the comment says %r"
                                    % (name, line, k + 1, g, e))
                    break


def main():
    tsl = os.path.abspath(sys.argv[1]) if len(sys.argv) > 1 else os.path.join(ROOT, "bin", "tsl")
    ref = sys.argv[2] if len(sys.argv) > 2 else os.path.join(ROOT, "docs", "reference.md")
    with open(ref, encoding="utf-8") as f:
        doc = f.read()
    problems = []
    check_names(tsl, doc, problems)
    check_blocks(tsl, doc, problems, os.path.relpath(ref, ROOT))
    if len(sys.argv) <= 2:  # the README's programs must run too
        with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as f:
            check_blocks(tsl, f.read(), problems, "README.md")
    check_links(problems)
    for p in problems:
        print(p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
