#!/bin/sh
# bench/run.sh - `make bench` (QUICK=1 for `make bench-quick`): every workload in TSL, NumPy,
# PyTorch, jax.jit, torch.compile, CPython, Lua 5.4 and plain C, one thread each and every process
# pinned to core 0 (`taskset -c 0`), in one run, plus a 2-thread table (TSL --threads 2, torch on 2
# threads, XLA on cores 0 and 1); then the table (bench/results.md), the data (bench/results.json)
# and a chart (bench/results.png). The peers' outputs are checked against TSL's (saved in
# bench/out/check): a mismatch beyond float tolerance makes the run fail, after the report.
# BENCH_ONLY=TEXT runs only the workloads whose name contains TEXT (e.g. BENCH_ONLY=CNN) in TSL and
# the Python peers, leaves out the 2-thread table, Lua, start-up and the C floor, and writes the
# report to bench/out instead of bench (the committed results stay those of a whole run).
set -e
cd "$(dirname "$0")/.."
export OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 MKL_NUM_THREADS=1
Q=""
[ -n "$QUICK" ] && Q=quick
ONLY=""
[ -n "$BENCH_ONLY" ] && ONLY="only=$BENCH_ONLY"
report_dir=bench
[ -n "$BENCH_ONLY" ] && report_dir=bench/out
out=bench/out
mkdir -p $out

# the peers, installed when missing (root) or skipped with a note
missing=""
for p in python3-numpy python3-torch lua5.4 gnuplot-nox; do dpkg -s $p >/dev/null 2>&1 || missing="$missing $p"; done
if [ -n "$missing" ] && [ "$(id -u)" = 0 ]; then
    echo "installing benchmark peers:$missing"
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $missing >/dev/null || true
fi
PY=/usr/bin/python3
PIN=""
command -v taskset >/dev/null && PIN="taskset -c 0"
PIN2=""
command -v taskset >/dev/null && PIN2="taskset -c 0,1"
VPY=$(sh bench/venv.sh | tail -n 1)      # jax and torch.compile's venv (build/bench-venv), or nothing
# torch.compile's cache beside the venv (git-ignored), not in /tmp: one made before a fix of the
# environment (see compiled.py's TORCH_USE_RTLD_GLOBAL) would keep serving scalar kernels
export TORCHINDUCTOR_CACHE_DIR="$PWD/build/torchinductor-cache"
check=$out/check
rm -rf $check && mkdir -p $check
failed=""

cc -O2 -ffp-contract=off -I/usr/include/x86_64-linux-gnu/openblas-pthread bench/floor.c -o $out/floor \
   -L/usr/lib/x86_64-linux-gnu/openblas-pthread -Wl,-rpath,/usr/lib/x86_64-linux-gnu/openblas-pthread -lopenblas -lsleef -lm

{
    echo "machine: $(uname -m), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(getconf _NPROCESSORS_ONLN) cores"
    echo "tsl: $(bin/tsl --version), OpenBLAS $(dpkg-query -W -f '${Version}' libopenblas0-pthread 2>/dev/null) (pthread build, one thread), SLEEF $(dpkg-query -W -f '${Version}' libsleef3 2>/dev/null)"
    echo "python: $($PY --version 2>&1), numpy $($PY -c 'import numpy; print(numpy.__version__)' 2>/dev/null || echo missing), torch $($PY -c 'import torch; print(torch.__version__)' 2>/dev/null || echo missing), $(lua5.4 -v 2>/dev/null | cut -d' ' -f1-2 || echo 'lua missing')"
    [ -n "$VPY" ] && echo "venv: $($VPY -c 'import jax, torch, numpy; print("jax", jax.__version__, "torch", torch.__version__, "numpy", numpy.__version__)' 2>/dev/null)"
    echo "date: $(date -u '+%Y-%m-%d %H:%M UTC')"
} > $out/machine.txt
cat $out/machine.txt

: > $out/raw.jsonl
rm -f $out/failed.*
echo "running TSL workloads..."
TSL_EXPLAIN=1 $PIN bin/tsl --threads 1 bench/workloads.tsl $Q ${ONLY:+"$ONLY"} $check 2>$out/explain.txt | tee -a $out/raw.jsonl
[ -f $check/gelu_y.npy ] || { echo "bench/workloads.tsl failed (see $out/explain.txt)"; exit 1; }
echo "running Python peers..."
{ $PIN $PY bench/peers.py $check $Q ${ONLY:+"$ONLY"} || echo x >$out/failed.peers; } | tee -a $out/raw.jsonl
[ -f $out/failed.peers ] && failed="$failed peers.py"
if [ -n "$VPY" ]; then
    echo "running jax.jit and torch.compile (the first torch.compile run takes minutes; later ones use its cache)..."
    { $PIN $VPY bench/compiled.py $check $Q ${ONLY:+"$ONLY"} || echo x >$out/failed.compiled; } | tee -a $out/raw.jsonl
    [ -f $out/failed.compiled ] && failed="$failed compiled.py"
fi
if [ -z "$BENCH_ONLY" ]; then
    echo "running the 2-thread table..."
    $PIN2 bin/tsl --threads 2 bench/threads.tsl $Q | tee -a $out/raw.jsonl
    if [ -n "$VPY" ]; then
        { OPENBLAS_NUM_THREADS=2 OMP_NUM_THREADS=2 $PIN2 $VPY bench/compiled.py $check $Q threads2 ||
          echo x >$out/failed.compiled2; } | tee -a $out/raw.jsonl
        [ -f $out/failed.compiled2 ] && failed="$failed compiled.py-threads2"
    fi
    if command -v lua5.4 >/dev/null; then $PIN lua5.4 bench/scalar.lua $Q | tee -a $out/raw.jsonl; fi
    $PIN $PY bench/startup.py $Q | tee -a $out/raw.jsonl
    $PIN $out/floor $Q | tee -a $out/raw.jsonl
fi
$PY bench/report.py $out/raw.jsonl $out/machine.txt $report_dir $out/explain.txt
if [ -n "$failed" ]; then
    echo "BENCH FAILED: outputs differ from TSL's (or a peer crashed) in:$failed; see OUTPUT MISMATCH above" >&2
    exit 1
fi
