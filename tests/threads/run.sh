#!/bin/sh
# tests/threads/run.sh TSL - results have the same bits for every thread count (ops/pool.h):
#   the differential test's programs (tests/difftest.py), scaled so that the thread pool
#   splits their tensors (elementwise ops, fused groups, reductions over many outputs), each
#   result written with save_npy; ops.tsl, every kind of split work in every dtype; and the
#   script tests' output. Each run once with --threads 1 and once with --threads 2, compared
#   byte for byte.
# Prints one line per failure and ends with "N passed, N failed".
TSL=${1:-bin/tsl}
pass=0
fail=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }

# 40000 x a last dimension of 1..5: tensors of 40k to 2.4M elements, over the pool's
# threshold (POOL_MIN_WORK) in most programs
python3 tests/difftest.py --count "${THREADS_DIFF_COUNT:-24}" --seed "${THREADS_DIFF_SEED:-5}" --scale 40000 --dump \
    >"$tmp/big.tsl"
for n in 1 2; do
    mkdir "$tmp/t$n"
    if ! $TSL --threads $n "$tmp/big.tsl" "$tmp/t$n" >"$tmp/t$n.out" 2>"$tmp/t$n.err"; then
        bad "scaled differential programs, --threads $n: $(head -3 "$tmp/t$n.err")"
    fi
done
files=$(ls "$tmp/t1" | wc -l)
if [ "$files" -gt 100 ] && diff -r "$tmp/t1" "$tmp/t2" >"$tmp/diff" && cmp -s "$tmp/t1.out" "$tmp/t2.out"; then ok
else bad "scaled differential programs differ between --threads 1 and 2 ($files results): $(head -3 "$tmp/diff")"; fi

for n in 1 2; do
    mkdir "$tmp/o$n"
    if ! $TSL --threads $n tests/threads/ops.tsl "$tmp/o$n" >"$tmp/o$n.out" 2>&1; then
        bad "tests/threads/ops.tsl --threads $n: $(head -3 "$tmp/o$n.out")"
    fi
done
files=$(ls "$tmp/o1" | wc -l)
if [ "$files" -ge 90 ] && diff -r "$tmp/o1" "$tmp/o2" >"$tmp/diff" && cmp -s "$tmp/o1.out" "$tmp/o2.out"; then ok
else bad "tests/threads/ops.tsl differs between --threads 1 and 2 ($files results): $(head -3 "$tmp/diff")"; fi

# each script's args()[0] is an empty scratch folder for the files it writes (as in tests/run.sh)
for f in tests/scripts/*.tsl; do
    rm -rf "$tmp/s1" "$tmp/s2" && mkdir "$tmp/s1" "$tmp/s2"
    # (a progress bar's summary line ends with its rate, which no two runs share: cut off)
    { $TSL --threads 1 "$f" "$tmp/s1" 2>&1; echo "exit $?"; } | sed 's/, [0-9.]*it\/s\]$/]/' >"$tmp/a"
    { $TSL --threads 2 "$f" "$tmp/s2" 2>&1; echo "exit $?"; } | sed 's/, [0-9.]*it\/s\]$/]/' >"$tmp/b"
    a=$(tail -n 1 "$tmp/a"); b=$(tail -n 1 "$tmp/b")
    if cmp -s "$tmp/a" "$tmp/b"; then ok; else bad "$f: --threads 1 and 2 differ ($a, $b)"; fi
done

# the option is checked
if $TSL --threads 0 -e 'print(1)' >/dev/null 2>"$tmp/err"; then bad "--threads 0 accepted"
elif grep -q -- "--threads takes a count of at least 1" "$tmp/err"; then ok; else bad "--threads 0: $(cat "$tmp/err")"; fi

echo "threads: $pass passed, $fail failed"
[ $fail -eq 0 ]
