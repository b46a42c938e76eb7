#!/usr/bin/env python3
"""make_npy.py - writes the .npy files that tests/scripts/npy_dtypes.tsl and tests/errors/npy_*.tsl
read (spec section 5, v2: load_npy of int8/16/32, uint8/16/32 into i64, float16 into f32, bool;
any other dtype, Fortran order or big-endian data is an error naming it).
Made with /usr/bin/python3 and NumPy 1.24: `/usr/bin/python3 tests/npy/make_npy.py`. The files are
committed; the expected values in the scripts are the ones below."""
import os
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))

def save(name, a):
    np.save(os.path.join(HERE, name + ".npy"), a)

ints = [-128, -1, 0, 1, 127]
save("i1", np.array(ints, dtype=np.int8))
save("i2", np.array([[-32768, 32767], [-2, 3]], dtype=np.int16))
save("i4", np.array([-2**31, 2**31 - 1, 7], dtype=np.int32))
save("u1", np.array([0, 1, 200, 255], dtype=np.uint8))
save("u2", np.array([0, 65535, 1234], dtype=np.uint16))
save("u4", np.array([0, 2**32 - 1, 5], dtype=np.uint32))
# float16: normal, subnormal (2**-24, the smallest), the largest, infinities, a NaN, -0
save("f2", np.array([1.5, -2.0, 2.0**-24, 65504.0, np.inf, -np.inf, np.nan, -0.0, 0.1], dtype=np.float16))
save("b1", np.array([[True, False], [False, True]]))
save("i1_empty", np.zeros((0, 3), dtype=np.int8))
# errors
save("u8", np.array([1, 2], dtype=np.uint64))
save("c8", np.array([1 + 2j], dtype=np.complex64))
save("i4_big_endian", np.array([1, 2], dtype=">i4"))
save("f4_fortran", np.asfortranarray(np.arange(6, dtype=np.float32).reshape(2, 3)))
# a valid f4 file with two bytes after the data (spec section 5: an error)
with open(os.path.join(HERE, "f4_trailing.npy"), "wb") as f:
    np.save(f, np.arange(3, dtype=np.float32))
    f.write(b"xx")
