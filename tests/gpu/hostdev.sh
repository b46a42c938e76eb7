#!/bin/sh
# hostdev.sh TSL PARITY_DIR [static|static-only] - the GPU's host side without a GPU: builds
# tests/gpu/hostdev_plugin.cpp (the plugin table on host memory, running every kernel the
# plugin launches, generated or hand-written, as host C++: tests/gpu/hostdev_shim.h; LAPACK
# for cuSOLVER) and runs every parity case (PARITY_DIR as tests/gpu/parity.sh left it) with
# TSL_CUDA_PLUGIN pointing at it: each must print ok, or be refused by the CPU and by the
# stand-in device alike. With "static", then also tests/gpu/static.sh gpu on it (with
# "static-only", that alone, PARITY_DIR unused: `make gpu-standin`, which CI runs after `make test`): static graphs on the stand-in device, their fused chains compiled per graph as
# host C++ and their capture segments recorded and replayed by the stand-in's emulation of
# CUDA Graph capture (hostdev_plugin.cpp). Needs a C++20 compiler ($CXX, default
# c++) and LAPACK's headers; says SKIP otherwise.
TSL=$1
P=$2
CXX=${CXX:-c++}
cd "$(dirname "$0")/../.." || exit 1
if ! command -v "$CXX" >/dev/null 2>&1 || [ ! -f /usr/include/lapack.h ]; then echo "hostdev: SKIP (no C++ compiler or lapack.h)"; exit 0; fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cc -std=c11 -Iops -Iops/gpu -I"${BUILD:-build}" -o "$tmp/emit" tests/gpu/emit_kernels.c ops/gpu/cuda/gen.c ops/gpu/cuda/gen_sort.c ops/gpu/cuda/gen_linalg.c ops/gpu/cuda/gen_conv.c ops/gpu/cuda/gen_nn.c || exit 1
{ cat tests/gpu/hostdev_shim.h; "$tmp/emit" all; cat tests/gpu/hostdev_plugin.cpp; } >"$tmp/hostdev.cpp" || exit 1
cc -std=c11 -O1 -fPIC -Iops -Iops/gpu -I"${BUILD:-build}" -c -o "$tmp/gen.o" ops/gpu/cuda/gen.c || exit 1
"$CXX" -std=c++20 -O1 -w -fPIC -shared -pthread -Iops -Iops/gpu -o "$tmp/libhostdev.so" "$tmp/hostdev.cpp" "$tmp/gen.o" -ldl \
    $(pkg-config --libs openblas 2>/dev/null || echo -lopenblas) \
    || { echo "hostdev: the host-memory stand-in plugin does not build"; exit 1; }
# fused chains are generated per graph: the stand-in compiles each with these
mkdir -p "$tmp/fused"
export TSL_HOSTDEV_CXX="$CXX" TSL_HOSTDEV_SHIM="$PWD/tests/gpu/hostdev_shim.h" TSL_HOSTDEV_DIR="$tmp/fused"
pass=0 fail=0 skip=0
[ "$3" = static-only ] || for f in "$P"/cases/*; do
    sed '/^device("gpu")/,$d' "$f" >"$tmp/cpu.tsl"
    if ! "$TSL" "$tmp/cpu.tsl" >/dev/null 2>&1; then   # the CPU refuses it: so must the host-memory stand-in device
        sed 's/^c = .*/c = 0/' "$f" >"$tmp/gpu.tsl"
        if TSL_CUDA_PLUGIN="$tmp/libhostdev.so" "$TSL" "$tmp/gpu.tsl" >/dev/null 2>&1; then
            fail=$((fail + 1)); echo "FAIL $(basename "$f"): the CPU refuses it, the host-memory stand-in device does not"
        else skip=$((skip + 1)); fi
        continue
    fi
    if TSL_CUDA_PLUGIN="$tmp/libhostdev.so" "$TSL" "$f" >"$tmp/out" 2>"$tmp/err" && grep -q '^ok$' "$tmp/out"; then
        pass=$((pass + 1))
    else
        fail=$((fail + 1)); echo "FAIL $(basename "$f"):"; head -4 "$tmp/err" | sed 's/^/    /'
    fi
done
[ "$3" = static-only ] || echo "hostdev: the GPU's host side and kernels on a host-memory plugin: $pass parity cases agree, $skip refused on both, $fail differ or fail"
if [ "$3" = static ] || [ "$3" = static-only ]; then
    TSL_CUDA_PLUGIN="$tmp/libhostdev.so" STATIC_BUDGET=${STATIC_BUDGET:-600} STATIC_TIMEOUT=${STATIC_TIMEOUT:-240} sh tests/gpu/static.sh "$TSL" gpu "$tmp/static" || fail=$((fail + 1))
    # every capture invalidated at its end: each segment goes back to op by op, still equal
    # to eager code, and nothing is said to be captured
    if TSL_CUDA_PLUGIN="$tmp/libhostdev.so" TSL_HOSTDEV_INVALIDATE=1 TSL_EXPLAIN=1 "$TSL" --verify-static tests/gpu/static_gpu.tsl \
           >"$tmp/out" 2>"$tmp/err" && grep -q '^ok$' "$tmp/out" && ! grep -q 'captured as a CUDA Graph' "$tmp/err" &&
       grep -q 'not captured: CUDA error in cudaStreamEndCapture' "$tmp/err"; then
        echo "hostdev: static_gpu.tsl with every capture invalidated: ok (each segment runs op by op)"
    else
        fail=$((fail + 1)); echo "FAIL static_gpu.tsl with every capture invalidated:"; grep -v '^explain' "$tmp/err" | head -4 | sed 's/^/    /'
    fi
fi
[ $fail -eq 0 ]
