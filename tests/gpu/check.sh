#!/bin/sh
# check.sh BIN CUDA_HOME - `make gpu-check`: everything a lent GPU is for, in one run of at
# most 6 minutes, logged to build/gpu-check.log (GPU time is scarce: everything that can be
# checked without one is in `make test`). Steps, in order of what a short run must not miss:
#   1. the device (nvidia-smi) and the build (make already built bin/tsl, the plugin and
#      ptx_check before this script runs);
#   2. the structural checks of tests/gpu/nogpu.sh (no CUDA in bin/tsl, NVRTC), and the
#      caching allocator (tests/gpu/alloc_check.c: no cudaMalloc in steady state);
#   3. the CPU/GPU parity suite, one process per case (tests/gpu/parity.sh);
#   4. static graphs on the GPU against eager GPU code (tests/gpu/static.sh gpu);
#   5. the GPU benchmarks (bench/gpu/gpu.tsl) and their baselines (bench/gpu/direct.c), with
#      the ratios the issue asks for;
#   6. compute-sanitizer --tool memcheck over the first parity case of each op in one
#      process, if installed;
#   7. collectives on GPU tensors over NCCL (tests/gpu/nccl.sh): with one GPU the ordered
#      combine, NCCL through a 1-rank communicator and the errors; the 2-rank test (one
#      process per GPU) only where there are two GPUs, else it says it is skipped.
# Each step has its own time limit, cut to what is left of the whole run's budget
# (TSL_GPU_CHECK_BUDGET seconds, default 360, not counting make's build): a step that runs
# out fails, and so does the run.
# Exit status: 0 when every step passed. The figures go in bench/gpu/results.md by hand.
BIN=${1:-bin}
CUDA_HOME=${2:-/usr/local/cuda}
cd "$(dirname "$0")/../.." || exit 1
mkdir -p build
LOG=build/gpu-check.log
OUT=build/gpu-check
rm -rf "$OUT" && mkdir -p "$OUT"
status=0
start=$(date +%s)
budget=${TSL_GPU_CHECK_BUDGET:-360}
# within N: a step's limit, N seconds or what is left of the budget (at least 1)
within() {
    left=$((budget - ($(date +%s) - start)))
    [ "$left" -lt 1 ] && left=1
    [ "$1" -lt "$left" ] && echo "$1" || echo "$left"
}
log() { echo "$*" | tee -a "$LOG"; }
step() { log ""; log "== $* ($(($(date +%s) - start)) s)"; }
: >"$LOG"

step "device"
log "date: $(date -u '+%Y-%m-%d %H:%M UTC'), $(uname -m), $(nproc) cores"
(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1 || echo "nvidia-smi failed") | tee -a "$LOG"
printf 'x = to(ones(3), "gpu")\nprint(x.device, item(sum(x)))\n' >"$OUT/probe.tsl"
if ! timeout $(within 60) "$BIN/tsl" "$OUT/probe.tsl" >>"$LOG" 2>&1; then
    log "gpu-check: the GPU does not start (above); nothing more to check here"
    exit 1
fi

step "structural checks (tests/gpu/nogpu.sh)"
timeout $(within 120) sh tests/gpu/nogpu.sh "$BIN" "$CUDA_HOME" >>"$LOG" 2>&1 || { status=1; log "FAILED"; }
tail -1 "$LOG"

step "the caching allocator (tests/gpu/alloc_check.c)"
if cc -std=c11 -D_GNU_SOURCE -O2 -Iops -Iops/gpu -o "$OUT/alloc_check" tests/gpu/alloc_check.c -ldl >>"$LOG" 2>&1; then
    timeout $(within 60) "$OUT/alloc_check" "$BIN/libtsl_cuda.so" >>"$LOG" 2>&1 || { status=1; log "FAILED"; }
    tail -1 "$LOG"
else
    status=1; log "alloc_check did not build"
fi

step "CPU/GPU parity (tests/gpu/parity.sh)"
timeout $(within 200) sh tests/gpu/parity.sh "$BIN/tsl" "$OUT/parity" >>"$LOG" 2>&1 || { status=1; log "FAILED (or timed out)"; }
tail -1 "$LOG"
[ -s "$OUT/parity/not_covered.txt" ] && { log "not covered on the GPU:"; sed 's/^/  /' "$OUT/parity/not_covered.txt" >>"$LOG"; }

step "static graphs on the GPU: GPU static == GPU eager (tests/gpu/static.sh)"
timeout $(within 150) sh tests/gpu/static.sh "$BIN/tsl" gpu "$OUT/static" >>"$LOG" 2>&1 || { status=1; log "FAILED (or timed out)"; }
tail -1 "$LOG"
[ -s "$OUT/static/skipped.txt" ] && { log "scripts that fail eagerly on the GPU (not counted):"; sed 's/^/  /' "$OUT/static/skipped.txt" >>"$LOG"; }

step "benchmarks (bench/gpu)"
cc -std=c11 -O2 -I"$CUDA_HOME/include" -o "$OUT/direct" bench/gpu/direct.c -L"$CUDA_HOME/lib64" \
    -Wl,-rpath,"$CUDA_HOME/lib64" -lcublas -lcudart >>"$LOG" 2>&1 || status=1
timeout $(within 60) "$OUT/direct" >"$OUT/bench.jsonl" 2>>"$LOG" || status=1
TSL_WARN=0 timeout $(within 150) "$BIN/tsl" bench/gpu/gpu.tsl >>"$OUT/bench.jsonl" 2>>"$LOG" || { status=1; log "bench/gpu/gpu.tsl FAILED"; }
cat "$OUT/bench.jsonl" >>"$LOG"
python3 - "$OUT/bench.jsonl" <<'PY' | tee -a "$LOG" || true
import json, sys
rows = {}
for line in open(sys.argv[1]):
    try:
        r = json.loads(line)
    except ValueError:
        continue
    rows[(r["workload"].split(" (")[0], r["impl"])] = r["ms"]
def ratio(what, a, b, goal):
    if a in rows and b in rows:
        print("%-58s %8.4f ms / %8.4f ms = %.2fx (goal %s)" % (what, rows[a], rows[b], rows[a] / rows[b], goal))
mlp = "MLP 45 layers, batch 1"
ratio("MLP batch 1: GPU eager / GPU static", (mlp, "tsl-gpu-eager"), (mlp, "tsl-gpu-static"), ">= 3x, static < 0.1 ms")
gelu = [k for k in rows if k[0].startswith("tanh-GELU")]
for k in gelu:
    ratio("tanh-GELU 64M: TSL / one read + write", k, ("read + write 64M f32 once", "cudaMemcpy-d2d"), "<= 1.3x")
ratio("matmul 4096^2: TSL / cuBLAS direct", ("matmul 4096^2 f32", "tsl-gpu"), ("matmul 4096^2 f32", "cublas-direct"), "<= 1.1x")
PY

step "compute-sanitizer memcheck over the first parity case of each op"
SAN=$(command -v compute-sanitizer || echo "$CUDA_HOME/bin/compute-sanitizer")
if [ -x "$SAN" ] && [ -f "$OUT/parity/all.tsl" ]; then
    timeout $(within 150) "$SAN" --tool memcheck --leak-check full --error-exitcode 99 "$BIN/tsl" "$OUT/parity/all.tsl" \
        >"$OUT/memcheck.txt" 2>&1
    rc=$?
    tail -5 "$OUT/memcheck.txt" >>"$LOG"
    if [ $rc -eq 0 ]; then log "memcheck: clean"; else status=1; log "memcheck: FAILED (exit $rc; $OUT/memcheck.txt)"; fi
else
    log "SKIP: compute-sanitizer is not installed"
fi

step "collectives over NCCL (tests/gpu/nccl.sh)"
timeout $(within 150) sh tests/gpu/nccl.sh "$BIN" "$OUT/nccl" >>"$LOG" 2>&1 || { status=1; log "FAILED (or timed out)"; }
tail -1 "$LOG"

step "done"
log "gpu-check: $([ $status -eq 0 ] && echo passed || echo FAILED) in $(($(date +%s) - start)) s; log in $LOG"
exit $status
