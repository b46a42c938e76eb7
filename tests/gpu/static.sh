#!/bin/sh
# static.sh TSL MODE [OUTDIR] - static graphs on the GPU (the VM's device executor, vm/run/exec_dev.c) against eager code.
#   MODE gpu (make gpu-check, on a lent GPU): tests/gpu/static_gpu.tsl, tests/gpu/export_gpu.tsl
#     (a loaded graph called with GPU tensors), then every script of
#     tests/scripts under --device gpu: one that runs eagerly there (--no-static) must give
#     the same bits compiled (--verify-static: GPU static == GPU eager, every variable and
#     result; STATIC_SCRIPTS, if set, names the scripts instead). A script that fails eagerly
#     on the GPU (an op the GPU lacks, an expectation within the CPU's rounding) is listed,
#     not failed: it says nothing about the VM. Each run may take STATIC_TIMEOUT seconds
#     (default 60; the host-memory stand-in, whose fused chains compile as C++, gives 240).
#     Each script runs in its own process (a sticky CUDA error cannot cascade); those not
#     started within STATIC_BUDGET seconds (default 90) are listed as not run.
#     Capture: static_gpu.tsl's `affine` is captured as a CUDA Graph exactly once (TSL_EXPLAIN);
#     difftest.py --repeat 5 programs (REPEAT_COUNT, default 8) agree with eager GPU code
#     every call, with captures and replays counted (at least one of each) and none invalidated;
#     and compute-sanitizer memcheck (if installed) runs static_gpu.tsl: arena, staging,
#     captured graphs and replays.
#   MODE cpu (make test, no GPU needed): the same VM code on the CPU (TSL_VM_DEVICE=1 sends
#     every graph to the device executor): static_gpu.tsl with "gpu" read as "cpu" (its `affine`
#     captured exactly once by the CPU's stand-in), export_gpu.tsl the same way, every script
#     of tests/scripts three ways, and random programs of tests/difftest.py, --verify-static
#     (also with --repeat 6: each block run six times, captured and replayed by the stand-in).
TSL=${1:-bin/tsl}
MODE=${2:-cpu}
OUT=${3:-$(mktemp -d)}
cd "$(dirname "$0")/../.." || exit 1
mkdir -p "$OUT"
pass=0 fail=0 skipped=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }
# scratch: a new, empty folder for one script's files, its args()[0] (as in tests/run.sh)
scratch() { rm -rf "$OUT/scratch" && mkdir "$OUT/scratch" && echo "$OUT/scratch"; }

if [ "$MODE" = gpu ]; then
    # graphs load() made, called with GPU tensors: on the GPU, the eager GPU bits
    if timeout 120 "$TSL" tests/gpu/export_gpu.tsl "$(scratch)" >"$OUT/out" 2>"$OUT/err" && grep -q '^ok$' "$OUT/out"; then ok
    else bad "tests/gpu/export_gpu.tsl: $(head -3 "$OUT/err")"; fi
    # GPU time is scarce: scripts not started within the budget (from here) are listed, not run
    end=$(($(date +%s) + ${STATIC_BUDGET:-90}))
    TSL_EXPLAIN=1 timeout 60 "$TSL" tests/gpu/static_gpu.tsl 2>"$OUT/explain.txt" >/dev/null
    if timeout 120 "$TSL" --verify-static tests/gpu/static_gpu.tsl >"$OUT/out" 2>"$OUT/err" && grep -q '^ok$' "$OUT/out" &&
       ! grep -q 'runs eagerly' "$OUT/explain.txt"; then ok
    else bad "tests/gpu/static_gpu.tsl: $(head -3 "$OUT/err")"; fi
    # captured once on the GPU: the line of affine's body, in TSL_EXPLAIN's output
    line=$(grep -n '^static fn affine' tests/gpu/static_gpu.tsl | cut -d: -f1)
    n=$(grep -c "static_gpu.tsl:$line:.*captured as a CUDA Graph" "$OUT/explain.txt")
    if [ "$n" = 1 ]; then ok; else bad "static_gpu.tsl: affine captured as a CUDA Graph $n times, not once"; fi
    SAN=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
    if [ -x "$SAN" ]; then
        if timeout 60 "$SAN" --tool memcheck --error-exitcode 99 "$TSL" tests/gpu/static_gpu.tsl >"$OUT/memcheck.txt" 2>&1; then ok
        else bad "compute-sanitizer memcheck of static_gpu.tsl: $(tail -3 "$OUT/memcheck.txt")"; fi
    fi
    # random programs whose static code runs again and again (difftest.py --repeat: new input
    # tensors, the same ones, other numbers, results kept and compared): GPU static == GPU
    # eager bit for bit every call; captures and replays must happen, and no capture may be
    # invalidated by a host copy (an op missing from vm/run/vm_seg.c's rules)
    if command -v python3 >/dev/null 2>&1; then
        python3 tests/difftest.py --count "${REPEAT_COUNT:-8}" --seed "${REPEAT_SEED:-3}" --repeat 5 >"$OUT/repeat.tsl"
        if TSL_EXPLAIN=1 timeout 300 "$TSL" --device gpu --verify-static "$OUT/repeat.tsl" >"$OUT/out" 2>"$OUT/err"; then
            caps=$(grep -c 'captured as a CUDA Graph' "$OUT/err")
            reps=$(grep -c 'replayed in run' "$OUT/err")
            if [ "$caps" -gt 0 ] && [ "$reps" -gt 0 ] && ! grep -q 'when stream is capturing' "$OUT/err"; then ok
                echo "static.sh gpu: difftest.py --repeat 5: $(tail -1 "$OUT/out") agree, $caps segments captured, $reps replayed"
            else
                bad "difftest.py --repeat 5 --device gpu: $caps captured, $reps replayed; $(grep 'when stream is capturing' "$OUT/err" | head -2)"
            fi
        else bad "difftest.py --repeat 5 --device gpu --verify-static: $(grep -v '^explain' "$OUT/err" | head -3)"; fi
    fi
    : >"$OUT/skipped.txt"
    limit=${STATIC_TIMEOUT:-60}   # seconds a script may take each way
    for f in ${STATIC_SCRIPTS:-tests/scripts/*.tsl}; do
        if [ "$(date +%s)" -ge "$end" ]; then
            skipped=$((skipped + 1))
            echo "$f: not run (the ${STATIC_BUDGET:-90} s budget was spent)" >>"$OUT/skipped.txt"
            continue
        fi
        if ! timeout "$limit" "$TSL" --device gpu --no-static "$f" "$(scratch)" >/dev/null 2>"$OUT/err"; then
            skipped=$((skipped + 1))
            echo "$f: $(head -1 "$OUT/err")" >>"$OUT/skipped.txt"
            continue
        fi
        timeout "$limit" "$TSL" --device gpu --verify-static "$f" "$(scratch)" >/dev/null 2>"$OUT/err"
        rc=$?
        if [ $rc -eq 0 ]; then ok
        elif [ $rc -eq 124 ]; then bad "$f --device gpu --verify-static: timed out after $limit s (STATIC_TIMEOUT)"
        else bad "$f --device gpu --verify-static: $(head -3 "$OUT/err")"; fi
    done
    echo "static.sh gpu: $pass passed, $fail failed, $skipped scripts skipped: failing eagerly on the GPU, or past the budget ($OUT/skipped.txt)"
    [ $fail -eq 0 ]
    exit
fi

export TSL_VM_DEVICE=1
sed 's/"gpu"/"cpu"/g' tests/gpu/static_gpu.tsl >"$OUT/static_cpu.tsl"
if "$TSL" --verify-static "$OUT/static_cpu.tsl" >"$OUT/out" 2>"$OUT/err" && grep -q '^ok$' "$OUT/out"; then ok
else bad "static_gpu.tsl on the CPU: $(head -3 "$OUT/err")"; fi
line=$(grep -n '^static fn affine' tests/gpu/static_gpu.tsl | cut -d: -f1)
n=$(TSL_EXPLAIN=1 "$TSL" "$OUT/static_cpu.tsl" 2>&1 >/dev/null | grep -c "static_cpu.tsl:$line:.*captured (the CPU's stand-in)")
if [ "$n" = 1 ]; then ok; else bad "static_gpu.tsl on the CPU: affine captured $n times, not once"; fi
sed 's/"gpu"/"cpu"/g' tests/gpu/export_gpu.tsl >"$OUT/export_cpu.tsl"
if "$TSL" "$OUT/export_cpu.tsl" "$(scratch)" >"$OUT/out" 2>"$OUT/err" && grep -q '^ok$' "$OUT/out"; then ok
else bad "export_gpu.tsl on the CPU: $(head -3 "$OUT/err")"; fi
for f in tests/scripts/*.tsl; do
    for mode in "" --verify-static; do
        if "$TSL" $mode "$f" "$(scratch)" >"$OUT/out" 2>"$OUT/err"; then
            if [ -f "${f%.tsl}.out" ] && ! cmp -s "$OUT/out" "${f%.tsl}.out"; then bad "$f $mode: output differs from ${f%.tsl}.out"
            else ok; fi
        else
            bad "$f $mode: exit $?: $(head -3 "$OUT/err")"
        fi
    done
done
if command -v python3 >/dev/null 2>&1; then
    python3 tests/difftest.py --count 1000 --seed 5 >"$OUT/diff.tsl"
    if "$TSL" --verify-static "$OUT/diff.tsl" >/dev/null 2>"$OUT/err"; then ok
    else bad "differential test under TSL_VM_DEVICE=1: $(head -3 "$OUT/err")"; fi
    # the same, each program's static code run 6 times (difftest.py --repeat): captures by the
    # CPU's stand-in and their replays must happen, with eager's bits every call
    python3 tests/difftest.py --count 300 --seed 5 --repeat 6 >"$OUT/repeat.tsl"
    if TSL_EXPLAIN=1 "$TSL" --verify-static "$OUT/repeat.tsl" >/dev/null 2>"$OUT/err"; then
        caps=$(grep -c "captured (the CPU's stand-in)" "$OUT/err")
        reps=$(grep -c 'replayed in run' "$OUT/err")
        if [ "$caps" -gt 0 ] && [ "$reps" -gt 0 ]; then ok; echo "static.sh cpu: difftest.py --repeat 6: $caps segments captured, $reps replayed"
        else bad "difftest.py --repeat 6 under TSL_VM_DEVICE=1: $caps captured, $reps replayed"; fi
    else bad "difftest.py --repeat 6 under TSL_VM_DEVICE=1: $(grep -v '^explain' "$OUT/err" | head -3)"; fi
fi
echo "static.sh cpu (the device executor on the CPU): $pass passed, $fail failed"
[ $fail -eq 0 ]
