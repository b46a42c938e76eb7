#!/bin/sh
# nogpu.sh BIN CUDA_HOME - what a machine without a GPU can check of the GPU backend (part of
# `make test`; docs/gpu.md):
#   - bin/tsl and libtsl.so never link a CUDA library; the plugin links them (not NCCL, which
#     it dlopens) and exports only its entry point;
#   - every kernel the generator can produce compiles with NVRTC to PTX (ptx_check);
#   - the sort/pad and integer-matmul / cuSOLVER-aid kernels, compiled as host C++, agree with
#     references on the CPU (emul.sh);
#   - bin/tsl runs CPU work with the plugin absent, and every way of asking for the GPU
#     (to(), device(), --device gpu, a static to(); :device gpu and tsl_set_device are in
#     the REPL and API tests) gives the one clear error, exit status 1, at the user's line;
#   - with the plugin present, the error is the honest one for this machine, and the plugin's
#     own start-up is exercised against the toolkit's stub driver;
#   - the parity suite's scripts (tests/gpu/parity.sh) run, with the CPU for the GPU, and
#     again through the GPU's host code on a host-memory stand-in plugin that runs the
#     plugin's kernels as host C++ (hostdev.sh). Static graphs on that stand-in device against
#     eager code (static.sh gpu: its emulated CUDA Graph capture included) take minutes: they
#     are `make gpu-standin`, which .ci/run runs after `make test`.
# On a machine with a GPU the error tests are skipped (make gpu-check tests the GPU itself).
BIN=${1:-bin}
CUDA_HOME=${2:-/usr/local/cuda}
TSL=$BIN/tsl
pass=0
fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# ---- no CUDA in bin/tsl or libtsl.so
for f in "$TSL" "$BIN/libtsl.so"; do
    linked=$(readelf -d "$f" | grep NEEDED | grep -Ei 'libcud|libnvrtc|libcublas|libnccl')
    if [ -z "$linked" ]; then ok; else bad "$f links CUDA: $linked"; fi
    linked=$(ldd "$f" 2>/dev/null | grep -Ei 'libcud|libnvrtc|libcublas|libnccl')
    if [ -z "$linked" ]; then ok; else bad "$f loads CUDA: $linked"; fi
done

plugin=$BIN/libtsl_cuda.so
if [ -f "$plugin" ]; then
    needed=$(readelf -d "$plugin" | grep NEEDED)
    for lib in libcudart libcublas libcusolver libnvrtc libcuda.so; do
        if echo "$needed" | grep -q "$lib"; then ok; else bad "the plugin does not link $lib"; fi
    done
    # NCCL is dlopen'ed on the first GPU collective (ops/gpu/cuda/nccl.c), never linked
    if echo "$needed" | grep -q libnccl; then bad "the plugin links NCCL: it must load where NCCL is missing"; else ok; fi
    exports=$(nm -D --defined-only "$plugin" | awk '{print $3}' | grep -v '^_' | tr '\n' ' ')
    if [ "$exports" = "tsl_cuda_plugin " ]; then ok; else bad "the plugin exports: $exports"; fi
    if [ -x "$BIN/ptx_check" ]; then
        if "$BIN/ptx_check" >"$tmp/ptx" 2>&1; then ok; tail -1 "$tmp/ptx"; else bad "ptx_check: $(tail -20 "$tmp/ptx")"; fi
    else
        bad "the plugin was built but $BIN/ptx_check was not"
    fi
else
    echo "SKIP: no CUDA toolkit ($CUDA_HOME/bin/nvcc): the plugin and the NVRTC check were not built"
fi

# the sort/pad and integer-matmul / cuSOLVER-aid kernels run on the host against references
if sh tests/gpu/emul.sh >"$tmp/emul" 2>&1; then ok; tail -1 "$tmp/emul"; else bad "tests/gpu/emul.sh: $(tail -12 "$tmp/emul")"; fi

# Does this machine have a GPU the plugin can start? Then the error tests do not apply.
# static graphs on the GPU: the VM's device executor (vm/run/exec_dev.c) on the CPU, against eager code
if sh tests/gpu/static.sh "$TSL" cpu "$tmp/static" >"$tmp/static.out" 2>&1; then ok; tail -1 "$tmp/static.out"
else bad "tests/gpu/static.sh cpu: $(tail -8 "$tmp/static.out")"; fi

printf 'x = to(zeros(2), "gpu")\nprint(x.device)\n' >"$tmp/probe.tsl"
if [ -f "$plugin" ] && "$TSL" "$tmp/probe.tsl" >"$tmp/out" 2>/dev/null && grep -q gpu "$tmp/out"; then
    echo "gpu-test: this machine has a GPU; the no-GPU error tests are skipped (run make gpu-check)"
    echo "gpu-test: $pass passed, $fail failed"
    [ $fail -eq 0 ]
    exit
fi

# the parity suite's generated scripts, with the CPU standing in for the GPU
if sh tests/gpu/parity.sh "$TSL" "$tmp/parity" >"$tmp/parity.out" 2>&1; then ok; tail -1 "$tmp/parity.out"
else bad "tests/gpu/parity.sh: $(tail -8 "$tmp/parity.out")"; fi
# the same cases through the GPU's host code, on a plugin whose device is host memory and
# whose kernels are the plugin's own compiled as host C++ (hostdev.sh)
if sh tests/gpu/hostdev.sh "$TSL" "$tmp/parity" >"$tmp/hostdev.out" 2>&1; then ok; tail -4 "$tmp/hostdev.out"
else bad "tests/gpu/hostdev.sh: $(tail -12 "$tmp/hostdev.out")"; fi

# expect_error NAME WANT CMD...: exit status 1 and the first line of stderr is WANT
expect_error() {
    name=$1 want=$2
    shift 2
    "$@" >"$tmp/out" 2>"$tmp/err"
    rc=$?
    got=$(head -1 "$tmp/err")
    if [ $rc -eq 1 ] && [ "$got" = "$want" ]; then ok; else bad "$name: exit $rc, '$got' (wanted '$want')"; fi
}

# ---- the plugin absent: CPU work runs, asking for the GPU is the error
out=$(TSL_CUDA_PLUGIN=/nonexistent "$TSL" -e 'print(item(sum(ones(3))))' 2>&1)
if [ "$out" = "3" ]; then ok; else bad "CPU work without the plugin: '$out'"; fi
absent="CUDA runtime not available: /nonexistent: cannot open shared object file: No such file or directory"
printf 'x = ones(2)\ny = to(x, "gpu")\n' >"$tmp/to.tsl"
expect_error "to() without the plugin" "$tmp/to.tsl:2:5: error: $absent" env TSL_CUDA_PLUGIN=/nonexistent "$TSL" "$tmp/to.tsl"
printf '\n  device("gpu")\n' >"$tmp/device.tsl"
expect_error "device() without the plugin" "$tmp/device.tsl:2:3: error: $absent" env TSL_CUDA_PLUGIN=/nonexistent "$TSL" "$tmp/device.tsl"
expect_error "--device gpu without the plugin" "tsl: error: $absent" env TSL_CUDA_PLUGIN=/nonexistent "$TSL" --device gpu -e 'print(1)'
printf 'x = ones(2)\nstatic {\n    y = to(x, "gpu")\n}\n' >"$tmp/static.tsl"
expect_error "a static to() without the plugin" "$tmp/static.tsl:3:9: error: $absent" env TSL_CUDA_PLUGIN=/nonexistent "$TSL" "$tmp/static.tsl"
# a library that is not this build's CUDA plugin
if [ -f "$BIN/libtsl_mpi.so" ]; then
    expect_error "another library as the plugin" \
        "$tmp/to.tsl:2:5: error: CUDA runtime not available: $BIN/libtsl_mpi.so has no tsl_cuda_plugin" \
        env TSL_CUDA_PLUGIN="$BIN/libtsl_mpi.so" "$TSL" "$tmp/to.tsl"
fi

# ---- the plugin present: the honest message for this machine
if [ -f "$plugin" ]; then
    "$TSL" "$tmp/to.tsl" >"$tmp/out" 2>"$tmp/err"
    rc=$?
    got=$(head -1 "$tmp/err")
    if ldconfig -p 2>/dev/null | grep -q 'libcuda\.so\.1 ' || [ -n "$LD_LIBRARY_PATH" ]; then
        case "$got" in   # a driver: no device, or a runtime that cannot start
        "$tmp/to.tsl:2:5: error: no CUDA device found"|"$tmp/to.tsl:2:5: error: CUDA runtime not available: "*) ok ;;
        *) bad "the plugin on a machine with a driver: exit $rc, '$got'" ;;
        esac
    else
        want="$tmp/to.tsl:2:5: error: CUDA runtime not available: libcuda.so.1: cannot open shared object file: No such file or directory"
        if [ $rc -eq 1 ] && [ "$got" = "$want" ]; then ok; else bad "the plugin without a driver: exit $rc, '$got'"; fi
    fi
    # the toolkit's stub driver: the plugin loads, passes the ABI check and its start-up says why
    mkdir "$tmp/stub" && ln -s "$CUDA_HOME/lib64/stubs/libcuda.so" "$tmp/stub/libcuda.so.1"
    expect_error "the plugin on the stub driver" \
        "$tmp/to.tsl:2:5: error: CUDA runtime not available: the CUDA driver library is the toolkit's stub (no NVIDIA driver is installed)" \
        env LD_LIBRARY_PATH="$tmp/stub" "$TSL" "$tmp/to.tsl"
    expect_error "--device gpu on the stub driver" \
        "tsl: error: CUDA runtime not available: the CUDA driver library is the toolkit's stub (no NVIDIA driver is installed)" \
        env LD_LIBRARY_PATH="$tmp/stub" "$TSL" --device gpu -e 'print(1)'
fi

echo "gpu-test: $pass passed, $fail failed"
[ $fail -eq 0 ]
