#!/usr/bin/env python3
"""make_formats.py - writes the files that tests/scripts/formats_*.tsl, tests/errors/formats_*.tsl
and tests/hostile/io_npz_* / io_st_* / io_csv_header_* read: .npz archives written by NumPy's
np.savez / np.savez_compressed, safetensors files written by the `safetensors` package (its
numpy and torch writers), CSV files written by Python's csv module, and hostile files built by
hand, byte by byte, following each format's specification.

Made once with NumPy 2.4, PyTorch 2.15 and safetensors 0.8.0 (installed with pip beside the
reference Python; make test does not need any of them):
    PYTHONPATH=<site-packages with safetensors> /work/pyref/bin/python tests/data/make_formats.py
The files are committed; the expected values in the tests are the arrays written here, as
NumPy and PyTorch hold them (printed by `make_formats.py --values`)."""
import csv
import io
import json
import os
import struct
import sys
import zipfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))


def path(*parts):
    p = os.path.join(HERE, *parts)
    os.makedirs(os.path.dirname(p), exist_ok=True)
    return p


# ---------- .npz ----------
W = np.array([[0.1, -2.5, 3e-8], [1e10, np.nan, -np.inf]], dtype=np.float32)
ARRAYS = {
    "w": W,
    "idx": np.array([-(2**62), 0, 7], dtype=np.int64),
    "mask": np.array([[True, False], [False, True]]),
    "half": np.array([1.5, -0.1, 65504.0], dtype=np.float16),
    "small": np.array([-128, 127], dtype=np.int8),
    "bytes": np.array([0, 255], dtype=np.uint8),
    "scalar": np.float64(np.pi),
    "empty": np.zeros((0, 3), dtype=np.float32),
}


def transposed_npz():
    """Fortran-ordered members (what np.savez of a transposed array writes; load_npz reads them,
    load_npy refuses them as the spec says) and uint64 ones, one of them out of i64's range."""
    w = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    u = np.array([[1, 2 ** 62], [3, 4]], dtype=np.uint64)
    assert w.T.flags.f_contiguous and not w.T.flags.c_contiguous
    np.savez(path("npz", "transposed.npz"), w=w.T, u=u.T, v=np.arange(3.0))
    np.savez(path("npz", "uint64_too_big.npz"), big=np.array([7, 2 ** 63], dtype=np.uint64))


def npz_files():
    np.savez(path("npz", "savez.npz"), **ARRAYS)
    np.savez_compressed(path("npz", "savez_compressed.npz"), **ARRAYS)
    np.savez(path("npz", "positional.npz"), np.arange(3, dtype=np.int32), np.eye(2))
    np.savez(path("npz", "empty.npz"))
    # errors
    with zipfile.ZipFile(path("npz", "not_npy_member.npz"), "w") as z:
        z.writestr("notes.txt", "hello")
    np.savez(path("npz", "uint64_member.npz"), big=np.array([1], dtype=np.uint64))
    np.savez(path("npz", "fortran_member.npz"), f=np.asfortranarray(np.arange(6.0).reshape(2, 3)))
    transposed_npz()
    with open(path("npz", "not_zip.npz"), "wb") as f:
        f.write(b"this is not a zip archive\n")
    whole = open(path("npz", "savez.npz"), "rb").read()
    with open(path("npz", "truncated.npz"), "wb") as f:
        f.write(whole[: len(whole) // 2])
    # a stored member whose data no longer matches its CRC-32: one byte of w's data flipped
    bad = bytearray(whole)
    at = bad.index(b"w.npy") + len("w.npy") + 128 + 4   # past the local header and the .npy header
    bad[at] ^= 0xFF
    with open(path("npz", "bad_crc.npz"), "wb") as f:
        f.write(bytes(bad))
    # a member that promises more data than it holds (a valid zip around a short .npy)
    buf = io.BytesIO()
    np.save(buf, np.arange(4, dtype=np.float32))
    with zipfile.ZipFile(path("npz", "short_member.npz"), "w") as z:
        z.writestr("s.npy", buf.getvalue()[:-4])


# ---------- safetensors ----------
ST = {
    "f32": np.array([[1.0, -0.5], [3.25, 1e-3]], dtype=np.float32),
    "f64": np.array([np.e], dtype=np.float64),
    "i64": np.array([-(2**63), 2**63 - 1], dtype=np.int64),
    "flag": np.array([True, False, True]),
    "i32": np.array([-(2**31), 5], dtype=np.int32),
    "i16": np.array([-32768, 32767], dtype=np.int16),
    "i8": np.array([-1, 1], dtype=np.int8),
    "u8": np.array([200, 0], dtype=np.uint8),
    "u16": np.array([65535], dtype=np.uint16),
    "u32": np.array([4294967295], dtype=np.uint32),
    "u64": np.array([2**63 - 1, 3], dtype=np.uint64),
    "f16": np.array([0.1, -65504.0, 2.0**-24], dtype=np.float16),
    "empty": np.zeros((2, 0), dtype=np.float32),
}
BF16 = [1.0, 3.14159, -2.5, 1e-3, 3.0e38]


def st_header(entries):
    text = json.dumps(entries, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    return struct.pack("<Q", len(text)) + text


def st_raw(name, entries, data, header=None):
    with open(path("st", name), "wb") as f:
        f.write((header if header is not None else st_header(entries)) + data)


def safetensors_files():
    from safetensors.numpy import save_file
    import torch
    from safetensors.torch import save_file as torch_save_file
    save_file(ST, path("st", "numpy.safetensors"), metadata={"format": "np", "note": "made by make_formats.py"})
    torch_save_file({"bf16": torch.tensor(BF16, dtype=torch.bfloat16)}, path("st", "torch_bf16.safetensors"))
    # hostile, by hand (the format: u64 header size, JSON header, data)
    f4 = {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}
    d8 = struct.pack("<2f", 1.0, 2.0)
    st_raw("short.safetensors", None, b"", header=b"\x10\x00\x00")
    st_raw("header_too_big.safetensors", None, b"{}", header=struct.pack("<Q", 1 << 40))
    st_raw("header_past_end.safetensors", None, b"{}      ", header=struct.pack("<Q", 64))
    st_raw("not_json.safetensors", None, b"", header=struct.pack("<Q", 8) + b"{nope:1}")
    st_raw("not_object.safetensors", None, b"", header=struct.pack("<Q", 8) + b"[1, 2]  ")
    dup = (b'{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},'
           b'"a":{"dtype":"F32","shape":[2],"data_offsets":[8,16]}}').ljust(112)
    st_raw("dup_key.safetensors", None, d8 + d8, header=struct.pack("<Q", len(dup)) + dup)
    st_raw("f8.safetensors", {"x": {"dtype": "F8_E4M3", "shape": [2], "data_offsets": [0, 2]}}, b"\x00\x01")
    st_raw("shape_mismatch.safetensors", {"x": {"dtype": "F32", "shape": [3], "data_offsets": [0, 8]}}, d8)
    st_raw("overlap.safetensors", {"a": f4, "b": {"dtype": "F32", "shape": [2], "data_offsets": [4, 12]}}, d8 + d8)
    st_raw("gap.safetensors", {"a": f4, "b": {"dtype": "F32", "shape": [2], "data_offsets": [12, 20]}}, d8 + d8 + d8[:4])
    st_raw("extra_data.safetensors", {"a": f4}, d8 + b"\x00" * 8)
    st_raw("offsets_past_end.safetensors", {"a": {"dtype": "F32", "shape": [4], "data_offsets": [0, 16]}}, d8)
    st_raw("bad_offsets.safetensors", {"a": {"dtype": "F32", "shape": [2], "data_offsets": [8, 0]}}, d8)
    st_raw("huge_shape.safetensors", {"a": {"dtype": "F32", "shape": [2**40, 2**40], "data_offsets": [0, 8]}}, d8)
    st_raw("bad_metadata.safetensors", {"__metadata__": {"n": 1}, "a": f4}, d8)
    st_raw("u64_too_big.safetensors", {"a": {"dtype": "U64", "shape": [2], "data_offsets": [0, 16]}},
           struct.pack("<2Q", 5, 2**64 - 1))


# ---------- CSV ----------
def csv_files():
    rows = [["name", "age", "score", "city"],
            ["Smith, J", "31", "1.5", "Paris"],
            ["Lee", "", "0.1", "New\nYork"],
            ['Say "hi"', "40", "", "Rome"],
            ["Ng", "-7", "1e-3", ""]]
    with open(path("csv", "people.csv"), "w", newline="") as f:
        f.write("# exported by make_formats.py\n# two lines to skip\n")
        csv.writer(f).writerows(rows)
    with open(path("csv", "tabs.tsv"), "w", newline="") as f:
        csv.writer(f, delimiter="\t").writerows([["x", "y"], ["1", "2.5"], ["3", "-4"]])
    with open(path("csv", "numbers_semicolon.csv"), "w", newline="") as f:
        f.write("skip me\n")
        csv.writer(f, delimiter=";").writerows([["1", "2", "3"], ["4.5", "-5", "6e2"]])
    with open(path("csv", "header_only.csv"), "w", newline="") as f:
        f.write("a,b\n")
    with open(path("csv", "dup_names.csv"), "w", newline="") as f:
        f.write("a,b,a\n1,2,3\n")
    with open(path("csv", "open_quote.csv"), "w", newline="") as f:
        f.write('a,b\n1,"never closed\n2,3\n')
    with open(path("csv", "ragged_header.csv"), "w", newline="") as f:
        f.write("a,b\n1,2\n3,4,5\n")
    with open(path("csv", "latin1_text.csv"), "wb") as f:
        f.write(b"a,b\n1,caf\xe9\n")


def values():
    """The expected values, as the tests write them."""
    z = np.load(path("npz", "savez.npz"))
    for k in z.files:
        a = z[k]
        print(k, a.dtype, a.shape, [repr(float(x)) if a.dtype.kind == "f" else int(x) for x in a.ravel()])
    import torch
    print("bf16", [repr(float(x)) for x in torch.tensor(BF16, dtype=torch.bfloat16).float()])
    print("f16", [repr(float(x)) for x in ST["f16"].astype(np.float32)])
    print("f32", [repr(float(x)) for x in ST["f32"].ravel()])
    print("csv score", [repr(float(np.float32(x))) for x in ["1.5", "0.1", "nan", "1e-3"]])


if __name__ == "__main__":
    if sys.argv[1:] == ["--values"]:
        values()
    else:
        npz_files()
        safetensors_files()
        csv_files()
