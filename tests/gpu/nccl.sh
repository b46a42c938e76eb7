#!/bin/sh
# nccl.sh BIN DIR - collectives on GPU tensors (ops/gpu/gpu_dist.c, ops/gpu/cuda/nccl.c), a step of
# `make gpu-check` (tests/gpu/check.sh), run where a GPU is; DIR holds what it builds.
#   1. allreduce's ordered combine kernel against the CPU's arithmetic, bit for bit, on 1 to 4
#      ranks' slices (tests/gpu/combine_check.c; one GPU is enough);
#   2. without mpirun (a world of one: copies) and under mpirun -np 1 (NCCL through a 1-rank
#      communicator): tests/gpu/nccl.tsl, GPU collectives equal to the CPU's;
#   3. errors: some ranks on the GPU and some on the CPU (named both), NCCL missing
#      (TSL_NCCL_LIB names no library: "NCCL not available" on every rank, the job ends);
#   4. with two or more GPUs, tests/gpu/nccl.tsl on 2 ranks, one process per GPU; with one
#      GPU it says it is skipped (NCCL wants one rank per device).
# Exit status 0 when every part that could run passed; each SKIP says why.
BIN=${1:-bin}
DIR=${2:-build/gpu-check/nccl}
cd "$(dirname "$0")/../.." || exit 1
mkdir -p "$DIR"
status=0
pass() { echo "ok: $*"; }
fail() { echo "FAIL: $*"; status=1; }

if cc -std=c11 -D_GNU_SOURCE -O2 -ffp-contract=off -Iops -Iops/gpu -o "$DIR/combine_check" tests/gpu/combine_check.c -ldl -lm; then
    timeout 60 "$DIR/combine_check" "$BIN/libtsl_cuda.so" || status=1
else
    fail "combine_check did not build"
fi

if timeout 60 "$BIN/tsl" tests/gpu/nccl.tsl >"$DIR/out" 2>"$DIR/err"; then pass "nccl.tsl, a world of one"
else fail "nccl.tsl, a world of one: $(head -3 "$DIR/err")"; fi

MPIRUN="mpirun --allow-run-as-root --oversubscribe"
if ! command -v mpirun >/dev/null 2>&1 || ! [ -f "$BIN/libtsl_mpi.so" ]; then
    echo "SKIP: the NCCL tests under mpirun: mpirun or $BIN/libtsl_mpi.so is missing (make installs Open MPI)"
    echo "nccl.sh: $([ $status -eq 0 ] && echo passed || echo FAILED), without the mpirun parts"
    exit $status
fi
if timeout 60 $MPIRUN -np 1 "$BIN/tsl" tests/gpu/nccl.tsl >"$DIR/out" 2>"$DIR/err"; then pass "nccl.tsl under mpirun -np 1 (NCCL)"
else fail "nccl.tsl under mpirun -np 1 (NCCL): $(head -3 "$DIR/err")"; fi

timeout 60 $MPIRUN -np 2 "$BIN/tsl" tests/gpu/nccl_mixed.tsl >"$DIR/out" 2>"$DIR/err"; rc=$?
if [ $rc -ne 0 ] && [ $rc -ne 124 ] && grep -qF 'allreduce(op="sum") of f32[2] on gpu' "$DIR/err" &&
   grep -qF 'allreduce(op="sum") of f32[2] on cpu' "$DIR/err" && grep -q 'the ranks disagree' "$DIR/err" &&
   ! grep -q 'not reached' "$DIR/out"; then pass "a GPU rank and a CPU rank: an error naming both"
else fail "a GPU rank and a CPU rank: exit $rc: $(head -3 "$DIR/err")"; fi

TSL_NCCL_LIB=/nonexistent/libnccl.so.2 timeout 60 $MPIRUN -np 2 "$BIN/tsl" tests/gpu/nccl.tsl >"$DIR/out" 2>"$DIR/err"; rc=$?
if [ $rc -ne 0 ] && [ $rc -ne 124 ] && grep -q '^\[rank [01] of 2\] .*error: NCCL not available: .*nonexistent' "$DIR/err"; then
    pass "NCCL missing: a clear error, the job ends"
else fail "NCCL missing: exit $rc: $(head -3 "$DIR/err")"; fi

gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
if [ "$gpus" -ge 2 ]; then
    if timeout 60 $MPIRUN -np 2 "$BIN/tsl" tests/gpu/nccl.tsl >"$DIR/out" 2>"$DIR/err"; then
        pass "nccl.tsl on 2 ranks, one GPU each: $(cat "$DIR/out")"
    else fail "nccl.tsl on 2 ranks: $(head -3 "$DIR/err")"; fi
else
    echo "SKIP: the 2-rank NCCL test needs 2 GPUs (one process per GPU; this machine has $gpus)"
fi
echo "nccl.sh: $([ $status -eq 0 ] && echo passed || echo FAILED)"
exit $status
