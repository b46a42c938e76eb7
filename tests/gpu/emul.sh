#!/bin/sh
# emul.sh [CXX] - the plugin's sort/pad and integer-matmul / cuSOLVER-aid kernels
# (ops/gpu/cuda/gen_sort.c, gen_linalg.c) compiled as host C++ (tests/gpu/emul_shim.h: one thread,
# one block) and run on the CPU against references (tests/gpu/emul_main.cpp). Needs a C++
# compiler, no CUDA; part of tests/gpu/nogpu.sh. Exit 0 when they agree (or, with no C++
# compiler, after saying it is skipped).
CXX=${1:-c++}
cd "$(dirname "$0")/../.." || exit 1
if ! command -v "$CXX" >/dev/null 2>&1; then echo "emul: SKIP (no C++ compiler $CXX)"; exit 0; fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cc -std=c11 -Iops -Iops/gpu -I"${BUILD:-build}" -o "$tmp/emit" tests/gpu/emit_kernels.c ops/gpu/cuda/gen.c ops/gpu/cuda/gen_sort.c ops/gpu/cuda/gen_linalg.c ops/gpu/cuda/gen_conv.c ops/gpu/cuda/gen_nn.c || exit 1
{ cat tests/gpu/emul_shim.h; "$tmp/emit"; cat tests/gpu/emul_main.cpp; } >"$tmp/emul.cpp" || exit 1
"$CXX" -std=c++17 -O1 -w -o "$tmp/emul" "$tmp/emul.cpp" || { echo "emul: the kernels do not compile as host C++"; exit 1; }
"$tmp/emul"
