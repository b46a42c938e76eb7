#!/usr/bin/python3
"""format_doc.py - docs/format.md against the bytes export() writes and the code that reads them.

Usage: python3 tests/format_doc.py [TSL]   (TSL: bin/tsl)

Reads the layout table of docs/format.md (offset, size, field; the magic's hex bytes) and checks
it against a file that TSL exports: the rows follow each other without gaps or overlaps, the
magic has the number of bytes its row says and is the file's first bytes, and each header field
holds what the page says (byte-order mark, versions, number of sections, file size, flags, the
section table's entries). Also the page's list of instruction codes against vm/opcodes.def and
its dtype codes against ops/tensor.h. Prints each mismatch; exits 1 when there is one."""
import os, re, struct, subprocess, sys, tempfile

TSL = sys.argv[1] if len(sys.argv) > 1 else "bin/tsl"
doc = open("docs/format.md", encoding="utf-8").read()
problems = []


def check(cond, what):
    if not cond:
        problems.append(what)


# the layout table: "offset  size  field" rows inside the first ``` block after "## Layout"
layout = doc.split("## Layout", 1)[1].split("```", 2)[1]
rows = []
for line in layout.splitlines():
    m = re.match(r"^(\d+)\s+(\d+)(×n)?\s+(.*)$", line)
    if m:
        rows.append((int(m.group(1)), int(m.group(2)), m.group(3) is not None, m.group(4)))
check(len(rows) >= 9, "format.md: found %d layout rows, expected the header's 9" % len(rows))
for (off, size, per_n, field), nxt in zip(rows, rows[1:]):
    check(not per_n and off + size == nxt[0],
          "format.md: '%s' at %d, %d bytes, ends at %d but the next field starts at %d" % (field, off, size, off + size, nxt[0]))
field = {f.split(":")[0].split(" (")[0]: (off, size) for off, size, _, f in rows}

# the magic: its hex bytes on its row
magic_row = next(f for _, _, _, f in rows if f.startswith("magic:"))
magic = bytes(int(h, 16) for h in re.match(r"magic:((?:\s+[0-9A-F]{2})+)", magic_row).group(1).split())
check(len(magic) == field["magic"][1],
      "format.md: the magic is %d bytes (%s) but its row says %d" % (len(magic), magic.hex(" "), field["magic"][1]))
quoted = re.search(r'\("([^"]*)"', magic_row).group(1)
check(quoted.encode().decode("unicode_escape").encode("latin-1") == magic,
      "format.md: the magic's string %r is not its bytes %s" % (quoted, magic.hex(" ")))

# a file: with an epilogue (format version 2) and without one (version 1)
with tempfile.TemporaryDirectory() as d:
    script = """d = args()[0]
w = randn([4, 3])
static fn f(x) { return relu(x @ w + 1) }
static fn g(x) { return x * 2 }
export(f, [randn([2, 4])], d + "/f.tslg")
export(g, [randn([3])], d + "/g.tslg")
"""
    subprocess.run([TSL, "-e", script, d], check=True)
    files = {name: open(os.path.join(d, name + ".tslg"), "rb").read() for name in ("f", "g")}

n_sections = int(re.search(r"number of sections \((\d+) in versions", layout).group(1))
header = field["section table"][0]
for name, data in files.items():
    off, size = field["magic"]
    check(data[off:off + size] == magic, "%s.tslg starts with %s, not the magic %s" % (name, data[:size].hex(" "), magic.hex(" ")))
    u32 = lambda f: struct.unpack_from("<I", data, field[f][0])[0]
    u64 = lambda f: struct.unpack_from("<Q", data, field[f][0])[0]
    check(field["byte-order mark"][1] == 4 and data[field["byte-order mark"][0]:][:4] == bytes([0x0D, 0x0C, 0x0B, 0x0A]),
          "%s.tslg: the byte-order mark is not 0D 0C 0B 0A at offset %d" % (name, field["byte-order mark"][0]))
    check(u32("format version") == (2 if name == "f" else 1),
          "%s.tslg: format version %d at offset %d" % (name, u32("format version"), field["format version"][0]))
    check(u32("op-set version") == 1, "%s.tslg: op-set version %d" % (name, u32("op-set version")))
    check(u32("number of sections") == n_sections, "%s.tslg: %d sections, format.md says %d" % (name, u32("number of sections"), n_sections))
    check(u64("file size in bytes") == len(data), "%s.tslg: size field %d, file %d bytes" % (name, u64("file size in bytes"), len(data)))
    check(u64("flags") == 0, "%s.tslg: flags %d" % (name, u64("flags")))
    for k in range(n_sections):
        sid, zero, soff, slen = struct.unpack_from("<IIQQ", data, header + 24 * k)
        check(sid == k + 1 and zero == 0 and soff % (64 if sid == 11 else 8) == 0 and soff + slen <= len(data),
              "%s.tslg: section table entry %d is id %d at %d (+%d)" % (name, k, sid, soff, slen))

# instruction codes: "0 nconst, 1 nmove, ..." in the page, OPC lines in vm/opcodes.def
listed = re.findall(r"(\d+) (\w+)[,.]", doc.split("The instruction codes", 1)[1].split("A file never", 1)[0])
opcodes = re.findall(r'^OPC\(\w+,\s*"(\w+)"', open("vm/opcodes.def").read(), re.M)
check([(int(i), n) for i, n in listed] == list(enumerate(opcodes)),
      "format.md's instruction codes %s differ from vm/opcodes.def %s" % (listed, opcodes))
# dtype codes: "`dtype` is a `u8`: 0 `bool`, 1 `i64`, ..." against the DType enum
dtypes = re.findall(r"(\d) `(\w+)`", re.search(r"`dtype` is a `u8`:([^\n]*)", doc).group(1))
enum = re.search(r"typedef enum \{([^}]*)\} DType;", open("ops/tensor.h").read()).group(1)
check([n for _, n in dtypes] == [e.strip()[3:].lower() for e in enum.split(",")] and
      [int(i) for i, _ in dtypes] == list(range(len(dtypes))),
      "format.md's dtype codes %s differ from ops/tensor.h's DType {%s}" % (dtypes, enum))

for p in problems:
    print("FAIL:", p)
print("format.md: %d checks failed" % len(problems) if problems else "format.md agrees with the files and the code")
sys.exit(1 if problems else 0)
