#!/bin/sh
# bench/run.sh - `make bench` (QUICK=1 for `make bench-quick`): every workload in TSL, NumPy,
# PyTorch, CPython, Lua 5.4 and plain C, one thread each (and TSL's static tanh-GELU again on
# two threads, bench/threads.tsl, impl tsl-static-2threads), in one run; then the table
# (bench/results.md), the data (bench/results.json) and a chart (bench/results.png).
set -e
cd "$(dirname "$0")/.."
export OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 MKL_NUM_THREADS=1
Q=""
[ -n "$QUICK" ] && Q=quick
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

cc -O2 -ffp-contract=off -I/usr/include/x86_64-linux-gnu/openblas-serial bench/floor.c -o $out/floor \
   -L/usr/lib/x86_64-linux-gnu/openblas-serial -Wl,-rpath,/usr/lib/x86_64-linux-gnu/openblas-serial -lopenblas -lsleef -lm

{
    echo "machine: $(uname -m), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(getconf _NPROCESSORS_ONLN) cores"
    echo "tsl: $(bin/tsl --version), OpenBLAS $(dpkg-query -W -f '${Version}' libopenblas0-serial 2>/dev/null) (serial), SLEEF $(dpkg-query -W -f '${Version}' libsleef3 2>/dev/null)"
    echo "python: $($PY --version 2>&1), numpy $($PY -c 'import numpy; print(numpy.__version__)' 2>/dev/null || echo missing), torch $($PY -c 'import torch; print(torch.__version__)' 2>/dev/null || echo missing), $(lua5.4 -v 2>/dev/null | cut -d' ' -f1-2 || echo 'lua missing')"
    echo "date: $(date -u '+%Y-%m-%d %H:%M UTC')"
} > $out/machine.txt
cat $out/machine.txt

: > $out/raw.jsonl
echo "running TSL workloads..."
TSL_EXPLAIN=1 bin/tsl --threads 1 bench/workloads.tsl $Q 2>$out/explain.txt | tee -a $out/raw.jsonl
bin/tsl --threads 2 bench/threads.tsl $Q | tee -a $out/raw.jsonl
echo "running Python peers..."
$PY bench/peers.py $Q | tee -a $out/raw.jsonl || echo "python peers failed"
if command -v lua5.4 >/dev/null; then lua5.4 bench/scalar.lua $Q | tee -a $out/raw.jsonl; fi
$PY bench/startup.py $Q | tee -a $out/raw.jsonl
$out/floor $Q | tee -a $out/raw.jsonl
$PY bench/report.py $out/raw.jsonl $out/machine.txt bench $out/explain.txt
