#!/bin/sh
# tests/run.sh TSL - the script-level test suite:
#   tests/scripts/*.tsl  self-asserting scripts, run three ways: eagerly (--no-static), with
#                        static code compiled (the default) and with --verify-static
#                        (a NAME.out beside one, written by hand, must match its stdout);
#                        their static code must compile (no eager fallback) unless a line
#                        starts with `# allows-eager`
#   tests/errors/*.tsl   each must fail with exit 1 and print the `# error: L:C: MSG` it names
#                        (one with a `# both-modes` line: also with --no-static and --verify-static)
#   command-line behaviour, the examples, and the REPL through a pty (tests/repl_pty.py, and the
#   docs' REPL transcripts typed in as written: tests/repl_docs.py)
# Every script gets one argument, args()[0]: an empty scratch folder of its own under this
# run's private mktemp -d folder, for the files it writes (never a fixed /tmp path: two runs at
# once would share it, and a file left by an earlier run could make a test pass).
# Prints one line per failure and ends with "N passed, N failed".
TSL=${1:-bin/tsl}
pass=0
fail=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

ok() { pass=$((pass + 1)); }
# a sanitizer report anywhere in a run's stderr is a failure, whatever the exit status
sanitized() { ! grep -q 'Sanitizer' "$tmp/err"; }
# scratch: prints the path of a new, empty scratch folder for one script run
scratch() { rm -rf "$tmp/scratch" && mkdir "$tmp/scratch" && echo "$tmp/scratch"; }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }

for f in tests/scripts/*.tsl; do
    for mode in --no-static "" --verify-static; do
        # the default run explains: all the static code compiles, unless the script says it
        # tests the eager fallback (one run serves both checks)
        explain=
        [ -z "$mode" ] && explain=1
        if TSL_EXPLAIN=$explain $TSL $mode "$f" "$(scratch)" >"$tmp/out" 2>"$tmp/err"; then
            if [ -n "$explain" ] && ! grep -q '^# allows-eager' "$f"; then
                if grep -q 'runs eagerly' "$tmp/err"; then bad "$f: $(grep -m1 'runs eagerly' "$tmp/err")"; else ok; fi
            fi
            if ! sanitized; then
                bad "$f $mode: sanitizer report: $(grep -m1 Sanitizer "$tmp/err")"
            elif [ -f "${f%.tsl}.out" ] && ! cmp -s "$tmp/out" "${f%.tsl}.out"; then
                bad "$f $mode: output differs from ${f%.tsl}.out"
            else ok; fi
        else
            bad "$f $mode: exit $?: $(head -3 "$tmp/err")"
        fi
    done
done

# a file with a `# both-modes` line must give the same error eagerly and compiled (static code
# that runs eagerly may warn first)
for f in tests/errors/*.tsl; do
    want="$f:$(sed -n 's/^# error: \([0-9]*:[0-9]*\): /\1: error: /p' "$f")"
    modes=default
    grep -q '^# both-modes' "$f" && modes='default --no-static --verify-static'
    for mode in $modes; do
        [ "$mode" = default ] && mode=
        $TSL $mode "$f" "$(scratch)" >/dev/null 2>"$tmp/err"
        rc=$?
        got=$(grep -v -m1 '^[^ ]*:[0-9]*:[0-9]*: warning: ' "$tmp/err")
        if [ $rc -eq 1 ] && [ "$got" = "$want" ] && sanitized; then ok; else bad "$f $mode: exit $rc, got '$got', want '$want'"; fi
    done
done

# hostile inputs: each must fail cleanly with the error its '# expect:' line names,
# within 5 s (and 256 MiB where no sanitizer needs its shadow memory)
case "$TSL" in *asan*|*fuzz*) memcap="" ;; *) memcap="ulimit -v 262144;" ;; esac
for f in tests/hostile/*.tsl; do
    want=$(sed -n '1s/^# expect: //p' "$f")
    flags=$(sed -n '2s/^# flags: //p' "$f")
    (eval "$memcap" TSL_PATH=tests/hostile/mods timeout 5 $TSL $flags "$f" "$(scratch)" >/dev/null 2>"$tmp/err")
    rc=$?
    first=$(grep -v -m1 '^[^ ]*:[0-9]*:[0-9]*: warning: ' "$tmp/err")   # an eager-fallback warning may come first
    case "$first" in
        *.tsl:[0-9]*:[0-9]*": error: "*) located=1 ;;   # this file, or a module it imports
        *) located=0 ;;
    esac
    if [ $rc -eq 1 ] && [ $located -eq 1 ] && printf '%s' "$first" | grep -qF -- "$want" && sanitized; then ok
    else bad "$f: exit $rc, got '$(printf '%s' "$first" | cut -c1-200)', want '$want'"; fi
done

# out-of-memory injection: fail the Nth allocation, for N = 1..60 and then every 23rd up to
# past the workload's last allocation
n=1
while [ $n -le 3100 ]; do
    TSL_FAIL_ALLOC=$n timeout 10 $TSL tests/oom/workload.tsl >/dev/null 2>"$tmp/err"
    rc=$?
    if { [ $rc -eq 0 ] || { [ $rc -eq 1 ] && grep -q 'out of memory' "$tmp/err"; }; } && sanitized; then ok
    else bad "TSL_FAIL_ALLOC=$n: exit $rc: $(head -2 "$tmp/err")"; fi
    if [ $n -lt 60 ]; then n=$((n + 1)); else n=$((n + 23)); fi
done

# an allocation the system refuses (ulimit -v, where no sanitizer needs its shadow memory)
# jumps past every location; the error still names the user's statement (tests/oom/located_*)
for f in tests/oom/located_*.tsl; do
    [ -n "$memcap" ] || break
    want="$f:$(sed -n 's/^# error: \([0-9]*:[0-9]*\): /\1: error: /p' "$f")"
    (eval "$memcap" timeout 10 $TSL "$f" >/dev/null 2>"$tmp/err")
    rc=$?
    got=$(head -1 "$tmp/err")
    if [ $rc -eq 1 ] && [ "$got" = "$want" ] && sanitized; then ok; else bad "$f: exit $rc, got '$got', want '$want'"; fi
done

# inputs the fuzzers once broke: each must now end cleanly (exit 0 or 1, no sanitizer report)
for f in tests/fuzz-regress/*; do
    [ -f "$f" ] || continue
    timeout 10 $TSL --max-ops 100000 --max-depth 200 --max-tensor-bytes 1048576 "$f" >/dev/null 2>"$tmp/err"
    rc=$?
    if { [ $rc -eq 0 ] || [ $rc -eq 1 ]; } && sanitized; then ok; else bad "$f (fuzz regression): exit $rc: $(head -2 "$tmp/err")"; fi
done

# command line (spec section 1)
check() {  # check NAME EXPECTED_RC EXPECTED_STDOUT -- command...
    name=$1 want_rc=$2 want_out=$3
    shift 4
    out=$("$@" 2>"$tmp/err")
    rc=$?
    if [ $rc -eq "$want_rc" ] && [ "$out" = "$want_out" ] && sanitized; then ok; else bad "$name: exit $rc (want $want_rc), stdout '$out' (want '$want_out')"; fi
}
check "print 0.1+0.2" 0 "0.30000000000000004" -- $TSL -e 'print(0.1 + 0.2)'
check "args()" 0 '["a", "b c"]' -- $TSL -e 'print(args())' a "b c"
check "expression statements print nothing" 0 "" -- $TSL -e '1 + 2'
check "bad option" 2 "" -- $TSL --no-such-option
# issue 30 (spec section 12): `tsl -` runs standard input, its errors named <stdin>
out=$(printf 'x = 2\nprint(x * 3, args())\n' | $TSL - a b 2>"$tmp/err"); rc=$?
if [ $rc -eq 0 ] && [ "$out" = '6 ["a", "b"]' ] && sanitized; then ok; else bad "tsl -: exit $rc, stdout '$out'"; fi
printf 'x = 1\ny = [1][5]\n' | $TSL - >/dev/null 2>"$tmp/err"; rc=$?
if [ $rc -eq 1 ] && [ "$(head -1 "$tmp/err")" = "<stdin>:2:5: error: list index out of range" ]; then ok
else bad "tsl - error location: exit $rc, '$(head -1 "$tmp/err")'"; fi
# print(file="stderr"), and stdout flushed before stderr is written, so 2>&1 keeps the order
out=$($TSL -e 'print("o"); print("e", 1, sep="", file="stderr")' 2>"$tmp/err"); rc=$?
if [ $rc -eq 0 ] && [ "$out" = o ] && [ "$(cat "$tmp/err")" = e1 ]; then ok; else bad "print(file=\"stderr\"): exit $rc, '$out', '$(cat "$tmp/err")'"; fi
$TSL -e 'print("a"); print("b", file="stderr"); static { print("c"); print("d", file="stderr") }
print("e")' >"$tmp/both" 2>&1
if [ "$(tr '\n' ' ' <"$tmp/both")" = "a b c d e " ]; then ok; else bad "stdout and stderr under 2>&1: '$(cat "$tmp/both")'"; fi
# block-buffered stdout to a file shows print's text only at exit; -u and flush() write it at once
for how in -u flush none; do
    rm -f "$tmp/early$how"
    code='print("early"); t = clock(); while clock() - t < 6 { }'
    [ $how = flush ] && code='print("early"); flush(); t = clock(); while clock() - t < 6 { }'
    opt=; [ $how = -u ] && opt=-u
    $TSL $opt -e "$code" >"$tmp/early$how" 2>/dev/null &
    pid=$!
    i=0; while [ $i -lt 30 ] && [ ! -s "$tmp/early$how" ]; do sleep 0.1; i=$((i + 1)); done
    got=$(cat "$tmp/early$how")
    kill $pid 2>/dev/null; wait $pid 2>/dev/null
    want=early; [ $how = none ] && want=
    if [ "$got" = "$want" ]; then ok; else bad "stdout while running ($how): '$got', want '$want'"; fi
done
$TSL --help >"$tmp/help"
if grep -q '^  -u ' "$tmp/help" && grep -q '^  -  ' "$tmp/help" && grep -q 'tsl \[options\] - ' "$tmp/help"; then ok; else bad "tsl --help lacks -u or -"; fi
# standard input that is not a terminal is a script, bounded like one (64 MiB)
timeout 10 $TSL </dev/zero >/dev/null 2>"$tmp/err"; rc=$?
if [ $rc -eq 2 ] && grep -q "standard input is larger than the limit" "$tmp/err"; then ok; else bad "tsl < /dev/zero: exit $rc: $(head -1 "$tmp/err")"; fi
# a bad option or script name is quoted escaped, never echoed raw to the terminal
$TSL "$(printf -- '--x\033[2J')" 2>"$tmp/err"; rc=$?
if [ $rc -eq 2 ] && grep -qF "unknown option '--x\x1b[2J'" "$tmp/err"; then ok; else bad "escaped option: exit $rc: $(cat -v "$tmp/err")"; fi
$TSL "$(printf '/nonexistent/\033[31m.tsl')" 2>"$tmp/err"; rc=$?
if [ $rc -eq 2 ] && grep -qF "'/nonexistent/\x1b[31m.tsl'" "$tmp/err"; then ok; else bad "escaped script name: exit $rc: $(cat -v "$tmp/err")"; fi
check "unreadable script" 2 "" -- $TSL /nonexistent/script.tsl
check "runtime error exit" 1 "" -- $TSL -e 'error("x")'
check "version" 0 "tsl 0.1.0 (OpenBLAS, Prescott kernels)" -- env OPENBLAS_CORETYPE=Prescott $TSL --version
check "static_mode()" 0 "static static" -- $TSL -e 'static { m = static_mode() }
print(static_mode(), m)'
check "static_mode() under --no-static" 0 "eager" -- $TSL --no-static -e 'print(static_mode())'
# a warm loaded graph allocates nothing per call on the CPU VM (its registers keep their buffers;
# not under TSL_VM_DEVICE=1, whose device executor makes every result a new tensor: so not in tests/scripts)
check "a warm loaded graph allocates nothing" 0 "true" -- $TSL -e 'import nn
model = nn.mlp([8, 16, 4])
static fn predict(x) { return model.forward(x) }
x = randn([5, 8])
export(predict, [x], args()[0] + "/mlp.tslg")
g = load(args()[0] + "/mlp.tslg")
for i in range(3) { y = g(x) }
y = nil
m0 = memstats()
for i in range(20) {
  y = g(x)
  y = nil
}
print(memstats().allocations == m0.allocations)' "$(scratch)"
# OpenBLAS's generic kernels are replaced where the CPU runs its AVX-512 or AVX2 ones
if grep -qw avx512bw /proc/cpuinfo && grep -qw avx512vl /proc/cpuinfo && grep -qw avx512dq /proc/cpuinfo; then
    if env -u OPENBLAS_CORETYPE $TSL --version | grep -q "Prescott kernels"; then bad "BLAS kernels: $($TSL --version)"; else ok; fi
fi
check "max-ops" 1 "" -- $TSL --max-ops 1000 -e 'while true { }'
check "timeout" 1 "" -- $TSL --timeout 0.2 -e 'while true { }'
check "max-tensor-bytes" 1 "" -- $TSL --max-tensor-bytes 1000 -e 'x = zeros([1000])'
check "max-nesting" 1 "" -- $TSL --max-nesting 10 -e 'x = ((((((((((((1))))))))))))'
check "string location" 1 "" -- $TSL -e 'x = nope'
if grep -q '^<string>:1:5: error: undefined variable' "$tmp/err"; then ok; else bad "-e errors name <string>: $(cat "$tmp/err")"; fi
if grep -q '^    x = nope$' "$tmp/err" && grep -q '^        \^$' "$tmp/err"; then ok; else bad "caret line: $(cat "$tmp/err")"; fi

# a script interrupted by Ctrl-C exits 130
$TSL -e 'while true { }' 2>/dev/null &
pid=$!
sleep 0.3
kill -INT $pid
wait $pid
rc=$?
if [ $rc -eq 130 ]; then ok; else bad "SIGINT exit status $rc, want 130"; fi

# the AVX2 kernels, as on a processor without AVX-512F (ops/cpu/chain512.c is not used): eager
# and static code still agree bit for bit
if TSL_NO_AVX512=1 $TSL --verify-static tests/scripts/fused_chains.tsl >/dev/null 2>"$tmp/err" && sanitized; then ok
else bad "TSL_NO_AVX512=1 --verify-static tests/scripts/fused_chains.tsl: $(head -3 "$tmp/err")"; fi

# the native tier (vm/run/jit.c): the chains of every fusable op, f32 and f64, at lengths around
# the vector, block and part boundaries, compiled to native code on their first run
# (TSL_JIT=force) give eager's bits, so the VM's (needs AVX-512F and a C compiler; own caches)
if grep -q avx512f /proc/cpuinfo 2>/dev/null && command -v cc >/dev/null 2>&1; then
    if XDG_CACHE_HOME="$tmp/jit" TSL_JIT=force TSL_EXPLAIN=1 $TSL --verify-static tests/scripts/fused_chains.tsl >/dev/null 2>"$tmp/err" &&
       sanitized && grep -q 'runs native code' "$tmp/err" && ! grep -q 'runs in the vm' "$tmp/err"; then ok
    else bad "TSL_JIT=force fused_chains.tsl: $(grep -v 'compiled static' "$tmp/err" | head -3)"; fi
    # a matmul's epilogue of one chunk (an RNN cell) as native code: the same bits
    if XDG_CACHE_HOME="$tmp/jit" TSL_JIT=force TSL_EXPLAIN=1 $TSL --verify-static tests/scripts/native_epilogue.tsl >/dev/null 2>"$tmp/err" &&
       sanitized && grep -q "the matmul's epilogue runs native code" "$tmp/err" && ! grep -q 'runs in the vm' "$tmp/err"; then ok
    else bad "TSL_JIT=force native_epilogue.tsl: $(grep -v 'compiled static' "$tmp/err" | head -3)"; fi
    # a row group's elementwise phases as native code, run row by row (a row vector as an
    # array, a value per row as a number) between the row kernel's reductions: eager's bits,
    # rows of every length mod 16, f32 and f64, parts over 2 threads
    if XDG_CACHE_HOME="$tmp/jit" TSL_JIT=force TSL_EXPLAIN=1 $TSL --threads 2 --verify-static tests/scripts/rowfuse.tsl >/dev/null 2>"$tmp/err" &&
       sanitized && grep -q 'row group 0 runs native code' "$tmp/err" && ! grep -q 'runs in the vm' "$tmp/err"; then ok
    else bad "TSL_JIT=force rowfuse.tsl: $(grep -v 'compiled static' "$tmp/err" | head -3)"; fi
    # a hot group switches to its native code, made in the background (here from the disk cache
    # the run above filled), with the same bits; dis names the tier
    cat >"$tmp/jit.tsl" <<'EOF'
fn gelu(x) { return 0.5 * x * (1 + tanh(0.7978845608 * (x + 0.044715 * x * x * x))) }
x = randn([4099])
e = gelu(x)
t0 = clock()
while clock() - t0 < 1.5 {
    static { y = gelu(x) }
    assert(equal(y, e))
}
dis()
EOF
    if XDG_CACHE_HOME="$tmp/jit" TSL_EXPLAIN=1 $TSL "$tmp/jit.tsl" >"$tmp/out" 2>"$tmp/err" && sanitized &&
       grep -q 'fused group 0 runs native code (from the disk cache)' "$tmp/err" && grep -q 'fused group 0 .*\[native\]' "$tmp/out"; then ok
    else bad "native tier in the background: $(grep -v 'compiled static' "$tmp/err" | head -3)"; fi
    # a script that ends while its group still compiles exits cleanly (a cache of its own)
    printf 'x = randn([999])\nfor i in range(4) { static { y = tanh(x * 2 + 1) } }\nprint("done")\n' >"$tmp/jit2.tsl"
    out=$(XDG_CACHE_HOME="$tmp/jit2" $TSL "$tmp/jit2.tsl" 2>"$tmp/err"); rc=$?
    if [ $rc -eq 0 ] && [ "$out" = done ] && [ ! -s "$tmp/err" ]; then ok; else bad "exit while compiling: rc $rc, $(head -3 "$tmp/err")"; fi
    # the disk cache stays bounded: past 1000 objects the least recently used go; a temporary
    # file older than an hour (a process that exited mid-compile) and another build's header go
    c="$tmp/jit3/tsl/jit"; mkdir -p "$c"
    i=0; while [ $i -lt 1010 ]; do printf '' >"$c/$(printf '%016x' $i).so"; i=$((i + 1)); done
    touch -d '2 days ago' "$c"/000000000000000?.so; touch -d '3 days ago' "$c/0000000000000001.so"; touch "$c/0000000000000000.so"
    printf 'x' >"$c/00000000000003f1.123.45.c"; touch -d '2 hours ago' "$c/00000000000003f1.123.45.c"
    printf 'x' >"$c/00000000000003f2.123.45.c"; printf 'x' >"$c/lanes512-0000000000000000.h"
    XDG_CACHE_HOME="$tmp/jit3" TSL_JIT=force $TSL "$tmp/jit.tsl" >/dev/null 2>&1
    n=$(ls "$c" | grep -c '^[0-9a-f]\{16\}\.so$')
    if [ "$n" -le 1001 ] && [ -f "$c/0000000000000000.so" ] && [ -f "$c/00000000000003f1.so" ] && [ ! -f "$c/0000000000000001.so" ] &&
       [ ! -f "$c/00000000000003f1.123.45.c" ] && [ -f "$c/00000000000003f2.123.45.c" ] && [ ! -f "$c/lanes512-0000000000000000.h" ]; then ok
    else bad "the native tier's disk cache is not bounded: $n objects; $(ls "$c" | head -5 | tr '\n' ' ')"; fi
    # without a compiler, or with TSL_JIT=0, the VM runs every group and TSL_EXPLAIN says why
    TSL_JIT_CC="$tmp/no-cc" TSL_JIT=force TSL_EXPLAIN=1 $TSL "$tmp/jit2.tsl" >/dev/null 2>"$tmp/err"; rc=$?
    if [ $rc -eq 0 ] && grep -q "runs in the vm: no native code, no C compiler" "$tmp/err"; then ok; else bad "no compiler: rc $rc, $(head -3 "$tmp/err")"; fi
    TSL_JIT=0 TSL_EXPLAIN=1 $TSL "$tmp/jit2.tsl" >/dev/null 2>"$tmp/err"; rc=$?
    if [ $rc -eq 0 ] && grep -q "runs in the vm: TSL_JIT=0" "$tmp/err"; then ok; else bad "TSL_JIT=0: rc $rc, $(head -3 "$tmp/err")"; fi
else
    echo "SKIP: the native tier needs AVX-512F and cc"
fi

# differential test: random programs, eager and static compared bit for bit
DIFF_COUNT=${DIFF_COUNT:-3000}
if command -v python3 >/dev/null 2>&1; then
    python3 tests/difftest.py --count "$DIFF_COUNT" --seed "${DIFF_SEED:-1}" >"$tmp/diff.tsl"
    if TSL_EXPLAIN=1 $TSL --verify-static "$tmp/diff.tsl" >/dev/null 2>"$tmp/err" && sanitized &&
       ! grep -q 'runs eagerly' "$tmp/err"; then ok; else bad "differential test ($DIFF_COUNT programs): $(grep -v 'compiled static' "$tmp/err" | head -3)"; fi
else
    echo "SKIP: differential test needs python3"
fi

# ... and with every optimizer pass off (the passes must not be what makes them agree)
if command -v python3 >/dev/null 2>&1; then
    python3 tests/difftest.py --count 300 --seed 7 >"$tmp/diff.tsl"
    if TSL_OPT=-fold,-cse,-dce,-fuse,-mem TSL_EXPLAIN=1 $TSL --verify-static "$tmp/diff.tsl" >/dev/null 2>"$tmp/err" &&
       sanitized && ! grep -q 'runs eagerly\|TSL_OPT' "$tmp/err"; then ok; else bad "differential test, passes off: $(grep -v 'compiled static' "$tmp/err" | head -3)"; fi
fi

# generated programs (tests/fuzz_static.py), each run --no-static, compiled and with
# --verify-static: the same output, exit status and first error line (FILE:LINE:COL: MESSAGE),
# no crash; 60 fixed seeds take about 10 s (FUZZ_STATIC_SEEDS=N for a longer run by hand)
if command -v python3 >/dev/null 2>&1; then
    if python3 tests/fuzz_static.py --tsl "$TSL" --seeds "${FUZZ_STATIC_SEEDS:-60}" -q >"$tmp/fuzzstatic" 2>&1; then ok
    else bad "static fuzzer: $(head -4 "$tmp/fuzzstatic")"; fi
fi

# differential test against NumPy: every op of ops/ops.def on random inputs (dtype pairs,
# weak scalars, NaN/inf/-0.0, size-0 axes), eagerly, in static blocks and with --verify-static
# (tests/numpy_diff.py; NUMPY_DIFF_COUNT=N NUMPY_DIFF_SEED=S for longer runs by hand)
if /usr/bin/python3 -c 'import numpy' 2>/dev/null; then
    if /usr/bin/python3 tests/numpy_diff.py --tsl "$TSL" --count "${NUMPY_DIFF_COUNT:-16}" --seed "${NUMPY_DIFF_SEED:-1}" \
        >"$tmp/npdiff" 2>&1; then ok
    else bad "numpy differential test: $(grep -m4 'FAIL\|Error' "$tmp/npdiff" || tail -3 "$tmp/npdiff")"; fi
else
    bad "numpy differential test: /usr/bin/python3 has no numpy (apt-get install python3-numpy; make installs it)"
fi

# the edge cases of spec 3 and 5 (empty tensors through every reduction and axis form, NaN/inf,
# i64 division, promotion with numbers, 0-d tensors, indexing, shapes, matmul) against NumPy
# (tests/edge_diff.py), eagerly, in static blocks and with --verify-static
if /usr/bin/python3 -c 'import numpy' 2>/dev/null; then
    if /usr/bin/python3 tests/edge_diff.py --tsl "$TSL" >"$tmp/edgediff" 2>&1; then ok
    else bad "edge-case differential test: $(grep -m4 'FAIL\|Error' "$tmp/edgediff" || tail -3 "$tmp/edgediff")"; fi
fi

# a TSL_OPT that names no pass is reported, not silently ignored
TSL_OPT=-fusion $TSL -e 'static { y = 1 }' 2>"$tmp/err" >/dev/null
if grep -q "TSL_OPT: ignoring '-fusion'" "$tmp/err"; then ok; else bad "TSL_OPT typo not reported: $(cat "$tmp/err")"; fi

# a range stop a slice's proof guards, changing at every run, recompiles twice, then the
# slice takes the run-time-shape path for every later run (vm/static.c, vm/compile/cslice.c)
TSL_EXPLAIN=1 $TSL tests/scripts/static_slices_thrash.tsl 2>"$tmp/err" >/dev/null
if [ "$(grep -c 'compiled static block' "$tmp/err")" = 3 ] &&
   grep -q "static_slices_thrash.tsl:11:5: run-time shapes: acc (line 13)" "$tmp/err"; then ok
else bad "thrashing range stop: $(cat "$tmp/err")"; fi
# while a script number it needs stays put, the minibatch slice keeps its size known when
# compiling (no run-time shape); a new n recompiles once, the old n finds its version again
TSL_EXPLAIN=1 $TSL tests/scripts/static_slices_guarded.tsl 2>"$tmp/err" >/dev/null
if ! grep -q 'run-time shapes' "$tmp/err" && [ "$(grep -c 'guarded.tsl:25:5: recompiled' "$tmp/err")" = 1 ] &&
   grep -q "guarded.tsl:25:5: recompiled static block in .* ms: 'n' must be 100 (the graph depends on its value), got 50" "$tmp/err"
then ok; else bad "guarded minibatch slices: $(cat "$tmp/err")"; fi

# TSL_EXPLAIN names what changed when a block recompiles
printf 'x = zeros([3])\nfor n in [3, 4] {\n  x = zeros([n])\n  static { y = x + 1 }\n}\n' >"$tmp/explain.tsl"
TSL_EXPLAIN=1 $TSL "$tmp/explain.tsl" 2>"$tmp/err" >/dev/null
if grep -q "explain: .*explain.tsl:4:3: recompiled static block in .* ms: 'x' must be f32 \[3\], got f32 \[4\]" "$tmp/err"; then ok
else bad "TSL_EXPLAIN recompile line: $(cat "$tmp/err")"; fi

# a block that pushes onto an outside list or adds run-time keys to an outside dict compiles
# once in a hot loop (its guards say "at least"), while one that reads the list's length
# recompiles for each new length
TSL_EXPLAIN=1 $TSL tests/scripts/static_host_lists.tsl >/dev/null 2>"$tmp/err"
if [ "$(grep -c 'static_host_lists.tsl:10:3: compiled static block' "$tmp/err")" = 1 ] &&
   [ "$(grep -c 'static_host_lists.tsl:62:3: compiled static block' "$tmp/err")" = 1 ] &&
   [ "$(grep -c 'recompiled' "$tmp/err")" = 2 ] && grep -q "73:3: recompiled .*'l' must be a list of 2, got a list of 4" "$tmp/err"
then ok; else bad "static host lists compile once: $(cat "$tmp/err")"; fi

# one guard rule (vm/guard.c): a static fn's recompile and a loaded graph's call give the same
# reason for the same guard; a function-valued constant fails by identity with that reason too,
# and export refuses one as an argument (a file cannot hold a function)
cat >"$tmp/guard.tsl" <<'EOF'
fn a(x) { return x + 1 }
fn b(x) { return x * 2 }
static fn f(x, g) { return g(x) }
f(1, a)
f(1, b)
static fn h(x, mode) { if mode == "sum" { return sum(x) } return x }
h(tensor([1, 2]), "sum")
h(tensor([1, 2]), "max")
export(h, [tensor([1, 2]), "sum"], args()[0] + "/h.tslg")
x = load(args()[0] + "/h.tslg")
print(x(tensor([1, 2]), "sum"))
x(tensor([1, 2]), "max")
EOF
printf 'fn a(x) { return x + 1 }\nstatic fn f(x, g) { return g(x) }\nexport(f, [1, a], args()[0] + "/f.tslg")\n' >"$tmp/guardx.tsl"
TSL_EXPLAIN=1 $TSL "$tmp/guard.tsl" "$tmp" >"$tmp/out" 2>"$tmp/err"
$TSL "$tmp/guardx.tsl" "$tmp" 2>"$tmp/errx" >/dev/null
if grep -q "recompiled static fn in .* ms: 'g' must be <fn a>, got <fn b>$" "$tmp/err" &&
   grep -q "recompiled static fn in .* ms: 'mode' must be \"sum\", got \"max\"$" "$tmp/err" &&
   grep -q "error: h(): 'mode' must be \"sum\", got \"max\"$" "$tmp/err" && grep -qx "tensor(3.)" "$tmp/out" &&
   grep -q "error: export(): 'g' is a function; an exported graph takes" "$tmp/errx"; then ok
else bad "one guard rule for static fns and loaded graphs: $(cat "$tmp/err" "$tmp/errx")"; fi

# numbers, files and strings (issue 10): a script or module must be a regular file under the
# source limit (a device, FIFO or directory is refused, never read without end or waited on);
# load_csv/load_npy refuse FIFOs; a UTF-8 BOM is skipped; building a string by appending in a
# loop is linear overall and in-order indexing of it O(1) a step (200k steps in well under 5 s)
timeout 5 $TSL /dev/zero >/dev/null 2>"$tmp/err"; rc=$?
if [ $rc -eq 2 ] && grep -q "not a regular file" "$tmp/err" && sanitized; then ok; else bad "tsl /dev/zero: exit $rc: $(head -1 "$tmp/err")"; fi
mkfifo "$tmp/fifo.tsl"
timeout 5 $TSL "$tmp/fifo.tsl" >/dev/null 2>"$tmp/err"; rc=$?
if [ $rc -eq 2 ] && grep -q "not a regular file" "$tmp/err" && sanitized; then ok; else bad "tsl FIFO: exit $rc: $(head -1 "$tmp/err")"; fi
timeout 5 $TSL -e "x = load_csv(\"$tmp/fifo.tsl\")" >/dev/null 2>"$tmp/err"; rc=$?
if [ $rc -eq 1 ] && grep -q "^<string>:1:5: error: load_csv: .* is not a regular file" "$tmp/err" && sanitized; then ok
else bad "load_csv of a FIFO: exit $rc: $(head -1 "$tmp/err")"; fi
timeout 5 $TSL -e "save_npy(\"$tmp/fifo.tsl\", zeros(2))" >/dev/null 2>"$tmp/err"; rc=$?
if [ $rc -eq 1 ] && grep -q "^<string>:1:1: error: save_npy: cannot write .*: not a regular file" "$tmp/err" && sanitized; then ok
else bad "save_npy to a FIFO nobody reads: exit $rc: $(head -1 "$tmp/err")"; fi
ln -s /dev/zero "$tmp/zero_mod.tsl"   # made here, not committed: the fuzzers read the test folders
TSL_PATH=$tmp timeout 5 $TSL -e "import zero_mod" >/dev/null 2>"$tmp/err"; rc=$?
if [ $rc -eq 1 ] && grep -q "^<string>:1:1: error: cannot read module 'zero_mod': .* is not a regular file" "$tmp/err" && sanitized; then ok
else bad "import of a link to /dev/zero: exit $rc: $(head -1 "$tmp/err")"; fi
truncate -s $((64 * 1024 * 1024 + 1)) "$tmp/big.tsl"
timeout 5 $TSL "$tmp/big.tsl" >/dev/null 2>"$tmp/err"; rc=$?
if [ $rc -eq 2 ] && grep -q "larger than the limit of 67108864 bytes" "$tmp/err" && sanitized; then ok; else bad "64 MiB + 1 script: exit $rc: $(head -1 "$tmp/err")"; fi
printf '\357\273\277x = 1\n' >"$tmp/bommod.tsl"
printf '\357\273\277import bommod\nc = load_csv("tests/hostile/data/bom.csv")\nassert(bommod.x == 1 and c.shape == [2, 2] and c[0, 0] == 1)\nprint("bom")\n' >"$tmp/bom.tsl"
if [ "$(timeout 5 $TSL "$tmp/bom.tsl" 2>"$tmp/err")" = "bom" ] && sanitized; then ok; else bad "UTF-8 BOM: $(head -1 "$tmp/err")"; fi
printf 's = ""\nt = ""\nfor i in range(200000) {\n  s = s + "x"\n  t += "\303\251"\n}\nn = 0\nfor c in t { n += 1 }\nfor i in range(200000) { if s[i] == "x" and t[-1 - i] == "\303\251" { n += 1 } }\nassert(n == 400000 and len(s) == 200000 and len(t) == 200000)\n' >"$tmp/append.tsl"
if timeout 5 $TSL "$tmp/append.tsl" >/dev/null 2>"$tmp/err" && sanitized; then ok; else bad "string append loop (200k) not linear or wrong: exit $?: $(head -1 "$tmp/err")"; fi
# zero-size tensors with huge other dimensions: no kernel walks the empty lines (a hang before)
for mode in --no-static --verify-static; do
    if [ "$(timeout 5 $TSL $mode tests/numbers/zero_size_huge.tsl 2>"$tmp/err")" = "ok" ] && sanitized; then ok
    else bad "tests/numbers/zero_size_huge.tsl $mode: $(head -1 "$tmp/err")"; fi
done
# cyclic and shared values (issue 10): the cycle collector keeps a loop that makes cycles
# flat (tests/soak/cycles.tsl asserts it; the 60 s soak is `tsl tests/soak/cycles.tsl 60`),
# and a static block that reads a list containing itself runs eagerly, saying why
if timeout 60 $TSL tests/soak/cycles.tsl 1 >"$tmp/out" 2>"$tmp/err" && sanitized; then ok
else bad "cycle soak: $(cat "$tmp/out" "$tmp/err" | head -3)"; fi
if timeout 60 $TSL --max-memory 50000000 tests/soak/recompile.tsl 1 >"$tmp/out" 2>"$tmp/err" && sanitized; then ok
else bad "static recompile soak: $(cat "$tmp/out" "$tmp/err" | head -3)"; fi
printf 'a = [1]\npush(a, a)\nstatic { n = len(a) }\nassert(n == 2)\n' >"$tmp/cyc.tsl"
TSL_EXPLAIN=1 timeout 10 $TSL "$tmp/cyc.tsl" 2>"$tmp/err" >/dev/null
if grep -q "cyc.tsl:3:1: static block runs eagerly: .*'a\[1\]' contains itself" "$tmp/err" && sanitized; then ok
else bad "static block reading a cyclic list: $(head -3 "$tmp/err")"; fi
# limits that always hold (issue 10): --timeout and Ctrl-C stop straight-line code, static
# loops with slow bodies and static compilation; numeric options are checked strictly
ms() { echo $(($(date +%s%N) / 1000000)); }
# 40 matmuls of 2000^2 (16 GFLOP each) take several seconds however fast the machine; the
# time limit must stop them within about one matmul of 0.3 s (3 s allows for a loaded machine)
mm40='a = randn([2000, 2000]) / 60'
for i in $(seq 40); do mm40="$mm40
b = $([ "$i" = 1 ] && echo a || echo b) @ a"; done
for code in "$mm40" "static {
$mm40
}"; do
    t0=$(ms)
    $TSL --timeout 0.3 -e "$code" >/dev/null 2>"$tmp/err"
    rc=$? t=$(($(ms) - t0))
    if [ $rc -eq 1 ] && [ $t -lt 3000 ] && grep -q '^<string>:[0-9]*:[0-9]*: error: time limit exceeded (--timeout)$' "$tmp/err"
    then ok; else bad "--timeout 0.3 on straight-line matmuls: exit $rc after $t ms: $(head -1 "$tmp/err")"; fi
done
# Ctrl-C in a static loop whose body is slow (it used to poll every 256 iterations)
$TSL -e 'a = randn([700, 700])
static {
  s = a
  for i in range(100000) { s = s @ a }
}' >/dev/null 2>"$tmp/err" &
pid=$!
sleep 0.5
t0=$(ms)
kill -INT $pid
wait $pid
rc=$? t=$(($(ms) - t0))
if [ $rc -eq 130 ] && [ $t -lt 1000 ] && grep -q 'error: interrupted' "$tmp/err"; then ok
else bad "SIGINT in a slow static loop: exit $rc after $t ms (want 130 within 1 s)"; fi
for opt in "--timeout nan" "--timeout inf" "--timeout 1e400" "--timeout -1" "--timeout 1e-400" \
           "--max-memory 1e23" "--max-memory 18446744073709551616" "--max-ops -5" "--max-depth +5" "--max-ops 10x"; do
    # shellcheck disable=SC2086
    check "usage error: $opt" 2 "" -- $TSL $opt -e 'print(1)'
    if grep -q '^tsl: error: --' "$tmp/err"; then ok; else bad "$opt: message '$(cat "$tmp/err")'"; fi
done
# static compile time grows linearly: 20,000 statements, 5,000 loops, a 8,000-long dead chain
# in a static fn (each took 9-14 s when compiling was quadratic), all compiled, not eager
awk 'BEGIN { print "static {"; print " x0 = ones([4])"
             for (i = 1; i < 20000; i++) printf " x%d = x%d * 0.5 + 1\n", i, i - 1
             print "}"; print "assert(x19999[0] == 2)" }' >"$tmp/c20k.tsl"
awk 'BEGIN { print "static {"; print " s = 0"
             for (i = 0; i < 5000; i++) printf " x%d = %d\n for j in range(3) { s = s + x%d }\n", i, i, i
             print "}"; print "assert(s == 3 * 4999 * 5000 / 2)" }' >"$tmp/l5k.tsl"
awk 'BEGIN { print "static fn f(a) {"; print " x0 = a"
             for (i = 1; i < 8000; i++) printf " x%d = x%d * 0.5 + 1\n", i, i - 1
             print " return a"; print "}"; print "assert(f(ones([4]))[0] == 1)" }' >"$tmp/d8k.tsl"
for f in c20k l5k d8k; do
    t0=$(ms)
    TSL_EXPLAIN=1 $TSL "$tmp/$f.tsl" >/dev/null 2>"$tmp/err"
    rc=$? t=$(($(ms) - t0))
    if [ $rc -eq 0 ] && [ $t -lt 4000 ] && grep -q 'compiled static' "$tmp/err" && ! grep -q 'runs eagerly' "$tmp/err"; then ok
    else bad "compiling $f.tsl: exit $rc after $t ms: $(grep -v '^explain: .*compiled' "$tmp/err" | head -2)"; fi
done
# --timeout while compiling a big static block: an error located in the block before it is
# compiled (the timeout grows until it lands after parsing, however loaded the machine is)
for t in 0.1 0.15 0.2 0.3 0.4 0.6; do
    TSL_EXPLAIN=1 timeout 5 $TSL --timeout $t "$tmp/c20k.tsl" >/dev/null 2>"$tmp/err"
    rc=$?
    if [ $rc -eq 1 ] && grep -q 'c20k.tsl:[0-9]*:[0-9]*: error: time limit exceeded (--timeout)$' "$tmp/err" &&
       ! grep -q 'compiled static' "$tmp/err" && ! grep -q 'c20k.tsl:1:1: error' "$tmp/err"; then break; fi
    rc=-1
done
if [ $rc -eq 1 ]; then ok; else bad "--timeout while compiling: never stopped inside the compiler: $(head -2 "$tmp/err")"; fi
# ... and Ctrl-C there (exit 130)
for d in 0.1 0.15 0.2 0.3 0.4 0.6; do
    TSL_EXPLAIN=1 timeout 10 $TSL "$tmp/c20k.tsl" >/dev/null 2>"$tmp/err" &
    pid=$!
    sleep $d
    kill -INT $pid
    wait $pid
    rc=$?
    if [ $rc -eq 130 ] && grep -q 'c20k.tsl:[0-9]*:[0-9]*: error: interrupted$' "$tmp/err" &&
       ! grep -q 'compiled static' "$tmp/err" && ! grep -q 'c20k.tsl:1:1: error' "$tmp/err"; then break; fi
    rc=-1
done
if [ $rc -eq 130 ]; then ok; else bad "SIGINT while compiling: never stopped inside the compiler: $(head -2 "$tmp/err")"; fi
# compiled code does not pin its intermediates: 30 static fns (about 2 MB of buffers each)
# under a --max-memory that fits one at a time, and one static fn recompiled for 8 shapes
awk 'BEGIN { print "x = ones([500, 500])"; print "total = 0"
  for (k = 0; k < 30; k++) printf "static fn f%d(a) {\n  b = a * %d + 1\n  c = b * b - a\n  return sum(c)\n}\n", k, k + 2
  for (k = 0; k < 30; k++) printf "total = total + item(f%d(x))\n", k
  print "print(total)" }' >"$tmp/fns30.tsl"
# sum over k of 250000 * ((k + 3)**2 - 1)
check "30 static fns under --max-memory 12 MB" 0 "2851250000" -- $TSL --max-memory 12000000 "$tmp/fns30.tsl"
check "a static fn recompiled for 8 shapes under --max-memory 8 MB" 0 "90630000" -- $TSL --max-memory 8000000 -e '
static fn g(a) {
  b = a * 3 + 1
  c = b * b - a
  return sum(c)
}
total = 0
for r in range(3) {
  for k in range(8) { total = total + item(g(ones([500, 500 + k]))) }
}
print(total)'
check "--timeout 0.5 on quick code" 0 "1" -- $TSL --timeout 0.5 -e 'print(1)'
check "--max-memory 2**63-1" 0 "1" -- $TSL --max-memory 9223372036854775807 -e 'print(1)'
# files are written whole or not at all (issue 24: ops/io_write.c): a write that fails past
# the file size limit (ulimit -f; SIGXFSZ ignored, so an error, not a signal death) is a located
# error, leaves the old file byte for byte and no temporary file; writers make missing folders
d=$(scratch)
cat >"$d/writers.tsl" <<'WRITERS_EOF'
d = args()[0]
n = int(args()[1])   # 2: small files that fit; 20000: past the limit
w = ones([n])
static fn f(x) { return x * w }
s = "x"
for i in range(int(log2(n))) { s = s + s }
which = args()[2]
if which == "save_npy" or which == "all" { save_npy(d + "/a.npy", zeros([n])) }
if which == "save_csv" or which == "all" { save_csv(d + "/a.csv", zeros([n])) }
if which == "write_text" or which == "all" { write_text(d + "/a.txt", s) }
if which == "export" or which == "all" { export(f, [1], d + "/a.tslg") }
WRITERS_EOF
$TSL "$d/writers.tsl" "$d/new/folder" 2 all 2>"$tmp/err"
for f in a.npy a.csv a.txt a.tslg; do
    if [ -s "$d/new/folder/$f" ] && sanitized; then ok; else bad "writers make missing folders: no $f: $(head -1 "$tmp/err")"; fi
done
mkdir "$d/old" && cp "$d"/new/folder/a.* "$d/old/"
for which in save_npy save_csv write_text export; do
    (ulimit -f 8; exec $TSL "$d/writers.tsl" "$d/new/folder" 20000 $which) >/dev/null 2>"$tmp/err"; rc=$?
    case $which in export) who="export()" ;; *) who=$which ;; esac
    if [ $rc -eq 1 ] && grep -q "^$d/writers.tsl:[0-9]*:[0-9]*: error: $who: cannot write '$d/new/folder/a\..*': File too large" "$tmp/err" &&
       cmp -s "$d/old/a.npy" "$d/new/folder/a.npy" && cmp -s "$d/old/a.csv" "$d/new/folder/a.csv" &&
       cmp -s "$d/old/a.txt" "$d/new/folder/a.txt" && cmp -s "$d/old/a.tslg" "$d/new/folder/a.tslg" &&
       [ "$(ls -A "$d/new/folder" | wc -l)" -eq 4 ] && sanitized; then ok
    else bad "$which past the file size limit: exit $rc, $(head -1 "$tmp/err"), folder: $(ls -A "$d/new/folder" | tr '\n' ' ')"; fi
done

# REPL, honest exits and clear messages (issue 10: repl/, lang/run.c, lang/resolve.c, vm/dis.c)
# standard input that is not a terminal runs as a script: no echo, the first error exits 1,
# and input that ends inside a statement is an error
printf 'print(1)\n1 + 1\nundefined_v\nprint(2)\n' | $TSL >"$tmp/out" 2>"$tmp/err"; rc=$?
if [ $rc -eq 1 ] && [ "$(cat "$tmp/out")" = 1 ] && [ "$(head -1 "$tmp/err")" = "<stdin>:3:1: error: undefined variable 'undefined_v'" ] &&
   sanitized; then ok; else bad "piped stdin error: exit $rc, out '$(cat "$tmp/out")', err '$(head -1 "$tmp/err")'"; fi
printf 'x = 1\ny = (x +\n' | $TSL >/dev/null 2>"$tmp/err"; rc=$?
if [ $rc -eq 1 ] && head -1 "$tmp/err" | grep -q '^<stdin>:[0-9]*:[0-9]*: error: ' && sanitized; then ok
else bad "piped stdin ending mid-statement: exit $rc, err '$(head -1 "$tmp/err")'"; fi
# standard input that cannot be read is like a script file that cannot: exit 2
$TSL </ 2>"$tmp/err"; rc=$?
if [ $rc -eq 2 ] && grep -q "^tsl: error: cannot read standard input" "$tmp/err"; then ok; else bad "unreadable stdin: exit $rc: $(cat "$tmp/err")"; fi
# a failed write to stdout is an error: at exit (buffered) or located at the print
if [ -w /dev/full ]; then
    $TSL -e 'print(1)' >/dev/full 2>"$tmp/err"; rc=$?
    if [ $rc -eq 1 ] && [ "$(cat "$tmp/err")" = "tsl: error: cannot write to standard output: No space left on device" ]; then ok
    else bad "print to /dev/full: exit $rc, err '$(head -1 "$tmp/err")'"; fi
    for mode in --no-static ""; do
        $TSL $mode -e 'static { for i in range(3000) { print(0.25) } }' >/dev/full 2>"$tmp/err"; rc=$?
        if [ $rc -eq 1 ] && [ "$(head -1 "$tmp/err")" = "<string>:1:33: error: cannot write to standard output: No space left on device" ] &&
           sanitized; then ok; else bad "long print to /dev/full $mode: exit $rc, err '$(head -1 "$tmp/err")'"; fi
    done
fi
( trap '' PIPE; $TSL -e 'for i in range(100000) { print("0123456789abcdef") }' 2>"$tmp/err"; echo $? >"$tmp/rc" ) | head -c 1 >/dev/null
if [ "$(cat "$tmp/rc")" = 1 ] && grep -q '^<string>:1:26: error: cannot write to standard output' "$tmp/err"; then ok
else bad "print to a closed pipe (SIGPIPE ignored): exit $(cat "$tmp/rc"), err '$(head -1 "$tmp/err")'"; fi
# control bytes and terminal escapes from the source are shown escaped, the caret still aligned
printf 'x = "\033[31m\\t" + missing_name\n' >"$tmp/esc.tsl"
$TSL "$tmp/esc.tsl" 2>"$tmp/err"; rc=$?
printf '%s\n' "$tmp/esc.tsl:1:17: error: undefined variable 'missing_name'" '    x = "\x1b[31m\t" + missing_name' \
    '                       ^' >"$tmp/want"
if [ $rc -eq 1 ] && cmp -s "$tmp/err" "$tmp/want"; then ok; else bad "escaped error line: $(cat -A "$tmp/err")"; fi
$TSL -e 'd = {}; y = d["\u{1b}[2J\u{7}"]' 2>"$tmp/err"; rc=$?
if [ $rc -eq 1 ] && [ "$(head -1 "$tmp/err")" = "<string>:1:13: error: key '\x1b[2J\x07' not found in dict" ]; then ok
else bad "escaped error message: $(head -1 "$tmp/err" | cat -A)"; fi
# the caret counts columns, not bytes: é and € take one, 😀 and 漢 two (wide), a combining ring none
$TSL -e 'x = "é€😀漢e̊" + missing_name' 2>"$tmp/err"
if [ "$(sed -n 3p "$tmp/err")" = "$(printf '%20s^' '')" ]; then ok; else bad "caret under non-ASCII text: $(sed -n 2,3p "$tmp/err")"; fi
# ... also in a file's name, in errors and TSL_EXPLAIN lines
esc="$tmp/$(printf '\033')[2Jname.tsl"
printf 'static { y = 1 }\nz = undefined_w\n' >"$esc"
TSL_EXPLAIN=1 $TSL "$esc" 2>"$tmp/err"; rc=$?
if [ $rc -eq 1 ] && ! grep -q "$(printf '\033')" "$tmp/err" && grep -q '^explain: .*/\\x1b\[2Jname.tsl:1:1: compiled' "$tmp/err" &&
   grep -q '/\\x1b\[2Jname.tsl:2:5: error: undefined variable' "$tmp/err"; then ok; else bad "escaped file name: $(cat -A "$tmp/err")"; fi
# misplaced break is found before anything runs
out=$($TSL -e 'print("ran"); break' 2>"$tmp/err"); rc=$?
if [ $rc -eq 1 ] && [ -z "$out" ] && grep -q "^<string>:1:15: error: 'break' or 'continue' outside a loop" "$tmp/err"; then ok
else bad "break at top level after a print: exit $rc, out '$out', err '$(head -1 "$tmp/err")'"; fi
# tracebacks: the innermost 10 frames, '... N more frames ...', the outermost 10; identical
# consecutive frames once with '(repeated N times)'. a(30) makes 61 frames: a(30) from line 8,
# then b and a alternating from lines 3 and 6.
f="$tmp/tb.tsl"
printf 'fn a(n) {\n  if n == 0 { return 1 / "x" }\n  return b(n - 1)\n}\nfn b(n) {\n  return a(n)\n}\na(30)\n' >"$f"
{ for i in 1 2 3 4 5; do echo "  in a() called from $f:6:10"; echo "  in b() called from $f:3:10"; done
  echo "  ... 41 more frames ..."
  for i in 1 2 3 4; do echo "  in b() called from $f:3:10"; echo "  in a() called from $f:6:10"; done
  echo "  in b() called from $f:3:10"; echo "  in a() called from $f:8:1"; } >"$tmp/want"
$TSL "$f" 2>"$tmp/err"; rc=$?
if [ $rc -eq 1 ] && tail -n +4 "$tmp/err" | cmp -s - "$tmp/want"; then ok; else bad "traceback 10 + N + 10: $(tail -n +4 "$tmp/err" | head -14)"; fi
printf 'fn f(n) {\n  if n == 0 { return undefined_z }\n  return f(n - 1)\n}\nfn g() { return f(50) }\ng()\n' >"$f"
printf '%s\n' "  in f() called from $f:3:10 (repeated 50 times)" "  in f() called from $f:5:17" "  in g() called from $f:6:1" >"$tmp/want"
$TSL "$f" 2>"$tmp/err"; rc=$?
if [ $rc -eq 1 ] && tail -n +4 "$tmp/err" | cmp -s - "$tmp/want"; then ok; else bad "traceback repeats: $(tail -n +4 "$tmp/err" | head -5)"; fi
# a function called on the user's behalf keeps its frame: a dict's forward, a sorted key,
# grad's f (every mode: the calls are eager), the calls a static fn inlines, and an nn layer
# reached through sequential
f=tests/errors/traceback_callbacks.tsl
printf '%s\n' "  in check() called from $f:6:40" "  in <fn>() called from $f:7:27" "  in by_key() called from $f:8:25" \
    "  in loss() called from $f:9:5" >"$tmp/want"
for mode in --no-static "" --verify-static; do
    $TSL $mode "$f" 2>"$tmp/err"; rc=$?
    if [ $rc -eq 1 ] && tail -n +4 "$tmp/err" | cmp -s - "$tmp/want"; then ok; else bad "traceback through callbacks $mode: $(tail -n +4 "$tmp/err" | head -5)"; fi
done
f=tests/errors/traceback_static.tsl
printf '%s\n' "  in check() called from $f:7:40" "  in <fn>() called from $f:9:12" "  in run() called from $f:11:5" >"$tmp/want"
g=tests/errors/traceback_static_run.tsl
printf '%s\n' "  in pick() called from $g:9:33" "  in layer() called from $g:13:12" "  in run() called from $g:15:5" >"$tmp/want2"
for mode in --no-static "" --verify-static; do
    $TSL $mode "$f" 2>"$tmp/err"; rc=$?
    if [ $rc -eq 1 ] && tail -n +4 "$tmp/err" | cmp -s - "$tmp/want"; then ok; else bad "traceback through inlined calls $mode: $(tail -n +4 "$tmp/err" | head -5)"; fi
    $TSL $mode "$g" 2>"$tmp/err"; rc=$?
    if [ $rc -eq 1 ] && tail -n +4 "$tmp/err" | cmp -s - "$tmp/want2"; then ok; else bad "run-time traceback through inlined calls $mode: $(tail -n +4 "$tmp/err" | head -5)"; fi
done
f="$tmp/layers.tsl"
printf 'import nn\nmodel = nn.sequential([nn.linear(4, 8), nn.relu(), nn.linear(3, 2)])\ny = model(zeros([5, 4]))\n' >"$f"
$TSL "$f" 2>"$tmp/err"; rc=$?
if [ $rc -eq 1 ] && [ "$(tail -n 1 "$tmp/err")" = "  in <fn>() called from $f:3:5" ]; then ok; else bad "traceback of an nn layer: $(tail -n 3 "$tmp/err")"; fi
# dis counts them apart too: 20 tensors and one function; the listing shows 12, then the rest
python3 -c 'print("\n".join("x%d = ones([2])" % i for i in range(20)))
print("static { y = " + " + ".join("x%d" % i for i in range(20)) + " + exp(x0) }\ndis()")' >"$tmp/many.tsl" 2>/dev/null &&
if $TSL "$tmp/many.tsl" >"$tmp/out" 2>"$tmp/err" && head -1 "$tmp/out" | grep -q ", 20 inputs, 1 guards," &&
   grep -qx "  ... 8 more inputs, 1 more guards" "$tmp/out"; then ok; else bad "dis input/guard counts: $(head -1 "$tmp/out")"; fi
# at the depth limit: 10000 frames, a(0) from line 3 then b and a alternating; and 10000
# identical frames (tests/errors/deep_recursion.tsl) collapse into one line
printf 'fn a(n) { return b(n + 1) }\nfn b(n) { return a(n + 1) }\na(0)\n' >"$f"
$TSL "$f" 2>"$tmp/err"; rc=$?
if [ $rc -eq 1 ] && [ "$(wc -l <"$tmp/err")" -eq 24 ] && [ "$(sed -n 14p "$tmp/err")" = "  ... 9980 more frames ..." ] &&
   [ "$(sed -n 24p "$tmp/err")" = "  in a() called from $f:3:1" ]; then ok; else bad "traceback at the depth limit: $(sed -n '12,16p' "$tmp/err")"; fi
f=tests/errors/deep_recursion.tsl
printf '%s\n' "  in down() called from $f:1:21 (repeated 9999 times)" "  in down() called from $f:2:1" >"$tmp/want"
$TSL "$f" 2>"$tmp/err"; rc=$?
if [ $rc -eq 1 ] && tail -n +4 "$tmp/err" | cmp -s - "$tmp/want"; then ok; else bad "traceback of 10000 identical frames: $(tail -n +4 "$tmp/err" | head -3)"; fi
# TSL_EXPLAIN counts inputs (x, read at each run) and guards (exp, a fixed function) apart
printf 'x = zeros([3])\nstatic { y = exp(x) }\n' >"$tmp/count.tsl"
TSL_EXPLAIN=1 $TSL "$tmp/count.tsl" 2>"$tmp/err" >/dev/null
if grep -q "compiled static block in .*, 1 inputs, 1 guards)" "$tmp/err"; then ok; else bad "TSL_EXPLAIN counts: $(cat "$tmp/err")"; fi
# tensor printing (issue 11): random tensors under random printoptions print as NumPy 1.24's
# array2string lays them out, eagerly and from static blocks (tests/print_diff.py)
if /usr/bin/python3 -c 'import numpy' 2>/dev/null; then
    if /usr/bin/python3 tests/print_diff.py --tsl "$TSL" --count "${PRINT_DIFF_COUNT:-300}" --seed "${PRINT_DIFF_SEED:-1}" \
        >"$tmp/prdiff" 2>&1; then ok
    else bad "printing differs from NumPy: $(head -12 "$tmp/prdiff")"; fi
else
    bad "printing differential test: /usr/bin/python3 has no numpy"
fi

# a closed pipe (tsl ... | head -1) is a write error: a message and exit status 1, never death by
# SIGPIPE (spec section 1: no signal ends the process)
( $TSL -e 'for i in range(200000) { print(i) }' 2>"$tmp/err"; echo $? >"$tmp/rc" ) | head -1 >/dev/null
if [ "$(cat "$tmp/rc")" = 1 ] && grep -q 'cannot write to standard output: Broken pipe' "$tmp/err"; then ok
else bad "closed pipe: exit $(cat "$tmp/rc"), $(head -1 "$tmp/err")"; fi

# files and process built-ins (issue 11, strings/lists/files): exit(code) ends the program with
# that status after flushing stdout (in a script, -e, a static block and the REPL); save_csv
# writes the shortest text load_csv reads back exactly (the texts are Python's repr of the f32 /
# f64 values); read_text/write_text round-trip UTF-8 and refuse what is not a regular file
out=$(timeout 5 $TSL -e 'print("a"); exit(3); print("b")' 2>"$tmp/err"); rc=$?
if [ $rc -eq 3 ] && [ "$out" = "a" ] && [ ! -s "$tmp/err" ]; then ok; else bad "exit(3): exit $rc, out '$out', err $(head -1 "$tmp/err")"; fi
printf 'fn leave(n) { exit(n) }\nx = [1, 2]\nstatic {\n  y = x[0]\n  leave(4)\n}\nprint("not here")\n' >"$tmp/exit.tsl"
for mode in --no-static "" --verify-static; do
    out=$(TSL_WARN=0 timeout 5 $TSL $mode "$tmp/exit.tsl" 2>"$tmp/err"); rc=$?   # exit() in static code runs eagerly
    if [ $rc -eq 4 ] && [ -z "$out" ] && [ ! -s "$tmp/err" ]; then ok; else bad "exit(4) in a static block $mode: exit $rc: $out $(head -1 "$tmp/err")"; fi
done
out=$(timeout 5 $TSL -e 'exit()' 2>&1); rc=$?
if [ $rc -eq 0 ] && [ -z "$out" ]; then ok; else bad "exit(): exit $rc: $out"; fi
out=$(printf 'print(1)\nexit(7)\nprint(2)\n' | timeout 5 $TSL 2>"$tmp/err"); rc=$?
if [ $rc -eq 7 ] && [ "$out" = "1" ]; then ok; else bad "exit(7) in the REPL: exit $rc, out '$out'"; fi
cat >"$tmp/csv.tsl" <<CSV_EOF
t = tensor([[0.1, 1e-7, -3], [1 / 3, 123456.789, 2 ** -20]])
save_csv("$tmp/t.csv", t)
assert(read_text("$tmp/t.csv") == "0.1,1e-07,-3\n0.33333334,123456.79,9.536743e-07\n")
assert(equal(load_csv("$tmp/t.csv"), t))
save_csv("$tmp/h.csv", t, header=["a", "b", "c"])
assert(startswith(read_text("$tmp/h.csv"), "a,b,c\n"))
assert(equal(load_csv("$tmp/h.csv", skip_header=true), t))
v = tensor([0.1, 1 / 3], "f64")
save_csv("$tmp/v.csv", v)
assert(read_text("$tmp/v.csv") == "0.1\n0.3333333333333333\n")
assert(equal(load_csv("$tmp/v.csv"), reshape(astype(v, "f32"), [2, 1])))
write_text("$tmp/u.txt", "h\u{e9}llo\n\u{1F600}")
s = read_text("$tmp/u.txt")
assert(s == "h\u{e9}llo\n\u{1F600}" and len(s) == 7)
print("csv")
CSV_EOF
if [ "$(timeout 5 $TSL "$tmp/csv.tsl" 2>"$tmp/err")" = "csv" ] && sanitized; then ok; else bad "save_csv/read_text round trip: $(head -1 "$tmp/err")"; fi
printf 'x\377y' >"$tmp/bad.txt"
timeout 5 $TSL -e "s = read_text(\"$tmp/bad.txt\")" >/dev/null 2>"$tmp/err"; rc=$?
if [ $rc -eq 1 ] && grep -q "^<string>:1:5: error: read_text: .* is not UTF-8 text (invalid UTF-8 at byte 1)" "$tmp/err"; then ok
else bad "read_text of invalid UTF-8: exit $rc: $(head -1 "$tmp/err")"; fi
timeout 5 $TSL -e 's = read_text("/dev/zero")' >/dev/null 2>"$tmp/err"; rc=$?
if [ $rc -eq 1 ] && grep -q "error: read_text: '/dev/zero' is not a regular file" "$tmp/err"; then ok; else bad "read_text of /dev/zero: exit $rc: $(head -1 "$tmp/err")"; fi
# format(value, spec) against Python's format() on random specs of the whole mini-language
if /usr/bin/python3 tests/format_diff.py --tsl "$TSL" --count 3000 --seed "${FORMAT_DIFF_SEED:-1}" >"$tmp/out" 2>&1; then ok
else bad "format() differs from Python's: $(head -3 "$tmp/out")"; fi
if /usr/bin/python3 tests/strings_diff.py --tsl "$TSL" --count 400 --seed "${STRINGS_DIFF_SEED:-1}" >"$tmp/out" 2>&1; then ok
else bad "string built-ins differ from Python's: $(head -3 "$tmp/out")"; fi
mkfifo "$tmp/fifo.txt"
timeout 5 $TSL -e "write_text(\"$tmp/fifo.txt\", \"x\")" >/dev/null 2>"$tmp/err"; rc=$?
if [ $rc -eq 1 ] && grep -q "^<string>:1:1: error: write_text: cannot write .*: not a regular file" "$tmp/err"; then ok; else bad "write_text to a FIFO nobody reads: exit $rc: $(head -1 "$tmp/err")"; fi

# help and --help (issue 11): `tsl --help` names every environment variable the source reads
# (the list comes from the source, so a new getenv without --help text fails here)
$TSL --help >"$tmp/out" 2>&1
vars=$(grep -ho 'getenv("[A-Za-z0-9_]*")' lang/*.c lang/*/*.c lang/*.re vm/*.c vm/*/*.c ops/*.c ops/*/*.c ops/*/*/*.c repl/*.c | sed 's/getenv("\(.*\)")/\1/' | sort -u)
if [ -z "$vars" ]; then bad "--help check: found no getenv calls in the source"; fi
for v in $vars; do
    if grep -q "^  $v[ =]" "$tmp/out"; then ok; else bad "tsl --help does not describe environment variable $v"; fi
done
# ... and every option repl/main.c parses (a lone "-" is a file name, not an option)
opts=$(grep -o 'strcmp(a, "-[^"]*")' repl/main.c | sed 's/strcmp(a, "\(.*\)")/\1/' | grep -v '^-$' | sort -u)
$TSL --help >"$tmp/out" 2>&1
for o in $opts; do
    if grep -q -- "^  .*$o\([ ,]\|\$\)" "$tmp/out"; then ok; else bad "tsl --help does not list option $o"; fi
done
# help("name") inside a module looks the name up in that module; a static fn that calls help
# runs it eagerly, in program order
mkdir -p "$tmp/helpmod"
printf '# the module'"'"'s g\nfn g(a, b=[1, 2]) { return a }\nfn show() { help("g") }\n' >"$tmp/helpmod/hm.tsl"
printf 'import hm\nfn g() { return 0 }\nhm.show()\nstatic fn s(x) {\n  help(hm.g)\n  return x + 1\n}\nprint(s(1))\n' >"$tmp/helpmod/main.tsl"
printf 'fn g(a, b=[1, 2])\n  the module'"'"'s g\nfn g(a, b=[1, 2])\n  the module'"'"'s g\n2\n' >"$tmp/want"
if $TSL "$tmp/helpmod/main.tsl" >"$tmp/out" 2>"$tmp/err" && cmp -s "$tmp/out" "$tmp/want"; then ok
else bad "help in a module / static fn: $(head -3 "$tmp/out") $(head -2 "$tmp/err")"; fi
# help(module) reads the module's text once, not once per function (was quadratic: minutes)
seq 40000 | awk '{ printf "# doc %d\nfn f%d(a, b=[1, 2]) { return a }\n", $1, $1 }' >"$tmp/helpmod/bigmod.tsl"
if TSL_PATH="$tmp/helpmod" timeout 10 $TSL -e 'import bigmod
help(bigmod)' >"$tmp/out" 2>"$tmp/err" && tail -1 "$tmp/out" | grep -q '^  fn f40000(a, b=\[1, 2\]) *doc 40000$'; then ok
else bad "help of a module of 40000 functions: exit $?: $(tail -1 "$tmp/out") $(head -2 "$tmp/err")"; fi
# docs (issue 11): docs/reference.md names every registered built-in and its ```tsl examples
# print what their comments say; README, docs and examples link only inside the repository
if command -v python3 >/dev/null 2>&1; then
    if python3 tests/check_reference.py "$TSL" >"$tmp/ref" 2>&1; then ok; else bad "tests/check_reference.py: $(head -5 "$tmp/ref")"; fi
else
    echo "SKIP: the reference check needs python3"
fi
if grep -rnIE '\.\./shared|/work/' README.md docs examples --exclude='*.csv' >"$tmp/out"; then
    bad "README/docs/examples mention a path outside the repository: $(head -3 "$tmp/out")"
else ok; fi
for f in examples/data/digits.csv examples/data/iris.csv examples/data/gettysburg.txt; do
    if [ -s "$f" ] && grep -q "$(basename "$f")" examples/data/README.md; then ok; else bad "$f missing or without provenance in examples/data/README.md"; fi
done

# static gradients: the same bits as eager with fusion, CSE and loop-invariant motion switched off too;
# what is not compiled yet runs eagerly and says why, at the user's line
if TSL_OPT=-fuse,-cse,-licm $TSL tests/scripts/grad_static.tsl >/dev/null 2>"$tmp/err"; then ok; else bad "grad_static.tsl with TSL_OPT=-fuse,-cse,-licm: $(head -3 "$tmp/err")"; fi
TSL_EXPLAIN=1 $TSL tests/scripts/grad_static_fallback.tsl >/dev/null 2>"$tmp/err"
for why in "6:16: a second derivative through a run-time loop is not compiled yet" \
           "19:27: a gradient through an index of a value with a run-time shape"; do
    if grep -q "runs eagerly: .*$why" "$tmp/err"; then ok; else bad "grad_static_fallback.tsl: no '$why' in: $(head -3 "$tmp/err")"; fi
done
# returns static code cannot merge (issue 26): a located reason each
TSL_EXPLAIN=1 $TSL tests/scripts/static_return_fallback.tsl >/dev/null 2>"$tmp/err"
for why in "5:3: 'return' of a tensor f64 \\[2\\] where another path of a run-time branch or loop returns a tensor f32 \\[2\\]" \
           "7:8: maybe() can end without 'return' where another path of a run-time branch or loop returns a tensor f64 \\[2\\]" \
           "10:3: 'return' of a number where another path of a run-time branch or loop returns true/false"; do
    if grep -q "runs eagerly: .*$why" "$tmp/err"; then ok; else bad "static_return_fallback.tsl: no '$why' in: $(head -3 "$tmp/err")"; fi
done

# training examples (issues 12, 28): reduced runs of examples/train_digits.tsl and cnn_digits.tsl (3
# epochs on 400 rows), examples/tiny_gpt.tsl (40 steps of 16-character windows) and
# examples/char_rnn.tsl (40 steps of 8-character windows). Each asserts that its training
# loss falls; static and --no-static must print the same lines (losses, accuracies, samples)
# once the timing column is cut off, and --verify-static must agree with eager.
for ex in "examples/train_digits.tsl 3 400" "examples/cnn_digits.tsl 3 400" "examples/tiny_gpt.tsl 40 16" "examples/char_rnn.tsl 40 8"; do
    if $TSL $ex >"$tmp/static.out" 2>"$tmp/err" && $TSL --no-static $ex >"$tmp/eager.out" 2>>"$tmp/err"; then
        sed 's/ *[0-9.]* ms.*$//' "$tmp/static.out" >"$tmp/static.cut"
        sed 's/ *[0-9.]* ms.*$//' "$tmp/eager.out" >"$tmp/eager.cut"
        if ! grep -qE '^ *(3 |step +40 )' "$tmp/static.out"; then bad "training example $ex: no line for the last epoch/step"
        elif cmp -s "$tmp/static.cut" "$tmp/eager.cut"; then ok
        else bad "training example $ex: static and --no-static differ: $(diff "$tmp/static.cut" "$tmp/eager.cut" | head -3)"; fi
    else
        bad "training example $ex: $(head -3 "$tmp/err")"
    fi
    if $TSL --verify-static $ex >/dev/null 2>"$tmp/err"; then ok; else bad "--verify-static $ex: $(head -3 "$tmp/err")"; fi
done
# progress (issue 29): with stderr redirected, one summary line per loop and no control bytes
# (no \r, no ESC); on a terminal the bar redraws in place (tests/progress_pty.py); plot's
# PNG pixels and SVG text (tests/plot_check.py)
printf 'for i in progress(range(7), desc="steps") { print(i) }\n' >"$tmp/prog.tsl"
for mode in --no-static ""; do
    out=$($TSL $mode "$tmp/prog.tsl" 2>"$tmp/err" | tr '\n' ' '); rc=$?
    if [ $rc -eq 0 ] && [ "$out" = "0 1 2 3 4 5 6 " ] && [ "$(wc -l <"$tmp/err")" -eq 1 ] \
       && grep -qE '^steps: 100%\|#{24}\| 7/7 \[00:00<00:00, [0-9.]+it/s\]$' "$tmp/err" \
       && ! grep -q "$(printf '[\r\033]')" "$tmp/err"; then ok
    else bad "progress with stderr redirected ($mode): exit $rc, out '$out', err '$(od -c "$tmp/err" | head -3)'"; fi
done
# in static code the loop compiles (the bar as host instructions) and draws what eager code
# draws (tests/scripts/progress_static.tsl, rates cut off); a loop whose body is copied (over a
# list) runs eagerly and says why
printf 'static {\n  s = 0\n  for i in progress(range(3)) { s = s + i }\n  print(s)\n}\n' >"$tmp/progs.tsl"
out=$(TSL_EXPLAIN=1 $TSL "$tmp/progs.tsl" 2>"$tmp/err"); rc=$?
if [ $rc -eq 0 ] && [ "$out" = 3 ] && grep -q "compiled static block" "$tmp/err" \
   && grep -qE '^100%\|#{24}\| 3/3 \[' "$tmp/err" && [ "$(wc -l <"$tmp/err")" -eq 2 ]; then ok
else bad "progress in a static block: exit $rc, out '$out', err '$(cat "$tmp/err")'"; fi
for mode in --no-static "" --verify-static; do
    $TSL $mode tests/scripts/progress_static.tsl 2>&1 >/dev/null | sed 's/, [0-9.]*it\/s\]$/]/' >"$tmp/bars$mode"
done
if [ "$(wc -l <"$tmp/bars--no-static")" -eq 8 ] && cmp -s "$tmp/bars--no-static" "$tmp/bars" \
   && cmp -s "$tmp/bars--no-static" "$tmp/bars--verify-static"; then ok
else bad "progress bars of static code differ from eager's: $(diff "$tmp/bars--no-static" "$tmp/bars" | head -4)"; fi
printf 'static {\n  for x in progress([1, 2]) { y = x }\n}\n' >"$tmp/progl.tsl"
if $TSL "$tmp/progl.tsl" 2>&1 | grep -q "static block runs eagerly: .*a progress() loop over a list, dict or string"; then ok
else bad "progress over a list in static code: no reason given"; fi
if python3 tests/progress_pty.py "$TSL" >"$tmp/pty" 2>&1; then ok; else bad "progress pty test: $(tail -3 "$tmp/pty")"; fi
if python3 tests/plot_check.py "$TSL" >"$tmp/plot" 2>&1; then ok; else bad "plot images: $(tail -3 "$tmp/plot")"; fi
# char_rnn's text (the last run above) is described in examples/data/README.md with the counts it prints
if grep -q '^text: 946 characters, 38 distinct' "$tmp/static.out" && grep -q 'two_cities.txt' examples/data/README.md \
   && grep -q '946 characters, 38 distinct' examples/data/README.md; then ok
else bad "examples/data/two_cities.txt: missing, changed, or without provenance in examples/data/README.md"; fi
# training (issue 12: stdlib/optim.tsl, stdlib/nn.tsl, the eager-fallback warning in vm/static.c):
# static code that falls back to eager says so once per block / static fn, located, without
# TSL_EXPLAIN; never under --no-static; TSL_WARN=0 silences it; TSL_EXPLAIN prints it as its
# own line instead. An optimizer step compiles (no fallback) and recompiles only once (for
# the state the first step makes), not at every step as its step count grows.
printf 'for i in range(3) {\n  static {\n    import optim\n    y = i\n  }\n}\nstatic fn f(x) {\n  import optim\n  return x\n}\nprint(f(1) + f(2) + y)\n' >"$tmp/warn.tsl"
printf '%s\n' "$tmp/warn.tsl:2:3: warning: static block runs eagerly: $tmp/warn.tsl:3:5: import inside static code" \
    "$tmp/warn.tsl:7:8: warning: static fn runs eagerly: $tmp/warn.tsl:8:3: import inside static code" >"$tmp/want"
out=$($TSL "$tmp/warn.tsl" 2>"$tmp/err"); rc=$?
if [ $rc -eq 0 ] && [ "$out" = 5 ] && cmp -s "$tmp/err" "$tmp/want"; then ok; else bad "eager-fallback warning: exit $rc, out '$out', err '$(cat "$tmp/err")'"; fi
for env in "" TSL_WARN=0; do
    for mode in --no-static --verify-static; do
        [ -z "$env" ] && [ "$mode" = --verify-static ] && continue
        out=$(env $env $TSL $mode "$tmp/warn.tsl" 2>"$tmp/err"); rc=$?
        if [ $rc -eq 0 ] && [ "$out" = 5 ] && [ ! -s "$tmp/err" ]; then ok; else bad "no fallback warning ($env $mode): exit $rc, err '$(head -1 "$tmp/err")'"; fi
    done
done
TSL_EXPLAIN=1 $TSL "$tmp/warn.tsl" >/dev/null 2>"$tmp/err"
if [ "$(grep -c 'runs eagerly' "$tmp/err")" = 2 ] && ! grep -q 'warning:' "$tmp/err" &&
   grep -q "^explain: $tmp/warn.tsl:2:3: static block runs eagerly: $tmp/warn.tsl:3:5: import inside static code" "$tmp/err"
then ok; else bad "fallback under TSL_EXPLAIN: $(cat "$tmp/err")"; fi
printf 'import optim\nm = {w: ones([3]), l: [{b: ones([2])}]}\ng = {w: ones([3]), l: [{b: ones([2])}]}\nfor o in [optim.adam(0.1, weight_decay=0.01), optim.sgd(0.1, momentum=0.9)] {\n  for i in range(5) {\n    static { o.step(m, g) }\n  }\n}\n' >"$tmp/steps.tsl"
TSL_EXPLAIN=1 $TSL "$tmp/steps.tsl" >/dev/null 2>"$tmp/err"; rc=$?
if [ $rc -eq 0 ] && [ "$(grep -c 'steps.tsl:6:5: compiled' "$tmp/err")" = 1 ] && [ "$(grep -c 'recompiled' "$tmp/err")" = 3 ] &&
   [ "$(grep -c "recompiled.*'o\.\(m\|velocity\)' must be a list of 0, got a list of 2" "$tmp/err")" = 2 ] && ! grep -q 'eagerly' "$tmp/err"
then ok; else bad "optimizer steps compile once per state shape: exit $rc: $(cat "$tmp/err")"; fi
# ... and once warm, a training step (forward, loss, update with gradients passed in) in a
# static block or static fn allocates no tensor: each updated weight is written into the one
# its store replaced the step before (a weight the program still holds is never written)
cat >"$tmp/warm.tsl" <<'WARM_EOF'
import nn
import optim
seed(1)
m = nn.mlp([4, 8, 3])
x = randn([5, 4])
g = grad(fn(m) { return sum(m(x)) })(m)
fn steps(opt, n) {
  for i in range(n) { static { opt.step(m, g) } }
}
static fn step(opt, m, g) {
  opt.step(m, g)
  return sum(m(x))
}
for opt in [optim.sgd(0.1, momentum=0.9, weight_decay=0.01), optim.adam(0.01), optim.adamw(0.01)] {
  steps(opt, 3)
  a0 = memstats().allocations
  steps(opt, 10)
  print(memstats().allocations - a0)
}
opt = optim.adam(0.01)
for i in range(3) { l = step(opt, m, g) }
a0 = memstats().allocations
for i in range(10) { l = step(opt, m, g) }
print(memstats().allocations - a0)
held = m.layers[0].w
copy = held + 0
for i in range(3) { l = step(opt, m, g) }
assert(equal(held, copy) and not equal(held, m.layers[0].w))
WARM_EOF
out=$($TSL "$tmp/warm.tsl" 2>"$tmp/err" | tr '\n' ' '); rc=$?
# the static fn hands back its loss (one new tensor a call)
if [ $rc -eq 0 ] && [ "$out" = "0 0 0 10 " ] && sanitized; then ok; else bad "warm training steps allocate: exit $rc, allocations per 10 steps '$out' (want 0 0 0 10), $(head -1 "$tmp/err")"; fi

# `tsl run MODEL.tslg`: a graph exported by a script runs from the command line, its outputs
# equal to what the static fn gave (saved by the script); mistakes are clear errors (exit 1)
cat >"$tmp/mk.tsl" <<'RUN_EOF'
d = args()[0]
seed(3)
w = randn([4, 3])
static fn f(x, m) { return [tanh(x @ w) * m.a, sum(x, axis=1)] }
x = randn([2, 4])
m = { a: randn([3]) }
export(f, [x, m], d + "/f.tslg")
save_npy(d + "/x.npy", x)
save_npy(d + "/a.npy", m.a)
r = f(x, m)
save_npy(d + "/want0.npy", r[0])
save_npy(d + "/want1.npy", r[1])
RUN_EOF
cat >"$tmp/cmp.tsl" <<'RUN_EOF'
d = args()[0]
assert(equal(load_npy(d + "/y0.npy"), load_npy(d + "/want0.npy")))
assert(equal(load_npy(d + "/y1.npy"), load_npy(d + "/want1.npy")))
RUN_EOF
mkdir "$tmp/run"
if $TSL "$tmp/mk.tsl" "$tmp/run" 2>"$tmp/err" && sanitized &&
   $TSL run "$tmp/run/f.tslg" --in "$tmp/run/x.npy" --in "$tmp/run/a.npy" --out "$tmp/run/y0.npy" --out "$tmp/run/y1.npy" 2>"$tmp/err" &&
   sanitized && $TSL "$tmp/cmp.tsl" "$tmp/run" 2>"$tmp/err"; then ok; else bad "tsl run --out: $(head -3 "$tmp/err")"; fi
out=$($TSL run "$tmp/run/f.tslg" --in "$tmp/run/x.npy" --in "$tmp/run/a.npy" 2>"$tmp/err"); rc=$?
want=$($TSL -e 'd = args()[0]
print("output 1:")
print(load_npy(d + "/want0.npy"))
print("output 2:")
print(load_npy(d + "/want1.npy"))' "$tmp/run")
if [ $rc -eq 0 ] && [ "$out" = "$want" ] && sanitized; then ok; else bad "tsl run (printed): exit $rc, got '$out', want '$want'"; fi
head -c 100 "$tmp/run/f.tslg" >"$tmp/run/cut.tslg"
for c in "one input too few|--in $tmp/run/x.npy|the model takes 2 inputs, 1 --in file was given" \
         "inputs swapped|--in $tmp/run/a.npy --in $tmp/run/x.npy|'x' must be f32 [2, 4], got f32 [3]" \
         "a missing input|--in $tmp/run/x.npy --in $tmp/run/none.npy|input 2 (m.a): load_npy: cannot open" \
         "too few outputs|--in $tmp/run/x.npy --in $tmp/run/a.npy --out $tmp/run/o.npy|the model has 2 outputs, 1 --out file was given"; do
    what=${c%%|*}; rest=${c#*|}; flags=${rest%%|*}; msg=${rest#*|}
    $TSL run "$tmp/run/f.tslg" $flags >/dev/null 2>"$tmp/err"; rc=$?
    if [ $rc -eq 1 ] && grep -qF "tsl: error: $msg" "$tmp/err" && sanitized; then ok; else bad "tsl run, $what: exit $rc, $(head -2 "$tmp/err")"; fi
done
for m in cut none; do
    $TSL run "$tmp/run/$m.tslg" --in "$tmp/run/x.npy" >/dev/null 2>"$tmp/err"; rc=$?
    if [ $rc -eq 1 ] && grep -q "^tsl: error: .*$m.tslg" "$tmp/err" && sanitized; then ok; else bad "tsl run, $m.tslg: exit $rc, $(head -2 "$tmp/err")"; fi
done
# load(), tsl run's model and its --in files refuse a FIFO (it would block) and /dev/zero (read
# without end) as every reader does, through io_open_regular (issue 24)
for c in "$tmp/fifo.tsl|--in $tmp/run/x.npy --in $tmp/run/a.npy" "/dev/zero|--in $tmp/run/x.npy --in $tmp/run/a.npy" \
         "$tmp/run/f.tslg|--in $tmp/fifo.tsl --in $tmp/run/a.npy" "$tmp/run/f.tslg|--in $tmp/run/x.npy --in /dev/zero"; do
    model=${c%%|*}; flags=${c#*|}
    timeout 5 $TSL run "$model" $flags >/dev/null 2>"$tmp/err"; rc=$?
    if [ $rc -eq 1 ] && grep -q "^tsl: error: .*is not a regular file" "$tmp/err" && sanitized; then ok
    else bad "tsl run $model $flags: exit $rc, $(head -2 "$tmp/err")"; fi
done
timeout 5 $TSL -e "g = load(\"$tmp/fifo.tsl\")" >/dev/null 2>"$tmp/err"; rc=$?
if [ $rc -eq 1 ] && grep -q "^<string>:1:5: error: load(): .* is not a regular file" "$tmp/err" && sanitized; then ok
else bad "load() of a FIFO: exit $rc: $(head -1 "$tmp/err")"; fi
if $TSL --help 2>/dev/null | grep -q '^ *tsl run MODEL.tslg'; then ok; else bad "tsl --help does not list tsl run"; fi
# the graph's signature (issue 24): help() of a loaded graph and `tsl run MODEL --help` print the
# same text (model_signature); f(x, m) returns [tanh(x @ w) * m.a, sum(x, axis=1)] with x [2, 4]
# and w [4, 3]: outputs [2, 3] and [2]
printf '%s\n' "f(x, m)" "  a graph exported by export(): 2 inputs, 2 outputs" "  input 1: x: f32[2, 4]" \
    "  input 2: m.a: f32[3]" "  output 1: f32[2, 3]" "  output 2: f32[2]" >"$tmp/want"
$TSL -e 'help(load(args()[0]))' "$tmp/run/f.tslg" >"$tmp/out" 2>"$tmp/err"
if cmp -s "$tmp/out" "$tmp/want" && sanitized; then ok; else bad "help(load(f.tslg)): $(head -3 "$tmp/out") $(head -1 "$tmp/err")"; fi
$TSL run "$tmp/run/f.tslg" --help >"$tmp/out" 2>"$tmp/err"; rc=$?
if [ $rc -eq 0 ] && cmp -s "$tmp/out" "$tmp/want" && sanitized; then ok; else bad "tsl run f.tslg --help: exit $rc: $(head -3 "$tmp/out") $(head -1 "$tmp/err")"; fi
$TSL run "$tmp/run/f.tslg" --in "$tmp/run/x.npy" >/dev/null 2>"$tmp/err"
if tail -n +2 "$tmp/err" | cmp -s - "$tmp/want"; then ok; else bad "tsl run with too few inputs does not print the signature: $(cat "$tmp/err")"; fi
# docs/format.md's layout table, magic and codes agree with the files export() writes and the code
if python3 tests/format_doc.py "$TSL" >"$tmp/out" 2>&1; then ok; else bad "docs/format.md: $(head -3 "$tmp/out")"; fi
# dis(f, "dot"): the pre-activation an epilogue step writes (t6, instruction 4 of
# tests/dis/grad.all.out) feeds the gt that reads it (instruction 7)
sed 's/^dis(step)$/dis(step, "dot")/' tests/dis/grad.tsl >"$tmp/dot.tsl"
$TSL "$tmp/dot.tsl" >"$tmp/out" 2>"$tmp/err"
if grep -q '^  i4 -> i7;$' "$tmp/out" && sanitized; then ok; else bad "dis dot: no edge from the epilogue's step register to its reader: $(head -2 "$tmp/err")"; fi
# `tsl run` stops as `tsl` does: --timeout is the time-limit error (exit 1), Ctrl-C exits 130,
# --max-memory bounds what the run holds; both options are read by tsl's own parsing (a bad
# value: exit 2). spin's loop runs n times, n an input (1e15: days), then makes 4 MB.
cat >"$tmp/spin.tsl" <<'RUN_EOF'
d = args()[0]
static fn spin(x, n) {
  i = 0
  while i < n { i = i + 1 }
  return x @ transpose(x) + i
}
x = ones([1000, 4])
export(spin, [x, tensor(1.0, dtype="f64")], d + "/spin.tslg")
save_npy(d + "/x1000.npy", x)
save_npy(d + "/n3.npy", tensor(3.0, dtype="f64"))
save_npy(d + "/nbig.npy", tensor(1e15, dtype="f64"))
RUN_EOF
if $TSL "$tmp/spin.tsl" "$tmp/run" 2>"$tmp/err" && sanitized; then ok; else bad "exporting spin: $(head -2 "$tmp/err")"; fi
spin="$tmp/run/spin.tslg --in $tmp/run/x1000.npy"
t0=$(ms)
# shellcheck disable=SC2086
timeout 10 $TSL run $spin --in "$tmp/run/nbig.npy" --timeout 0.3 >/dev/null 2>"$tmp/err"; rc=$? t=$(($(ms) - t0))
if [ $rc -eq 1 ] && [ $t -lt 3000 ] && grep -q '^tsl: error: .*spin.tslg:[0-9]*:[0-9]*: time limit exceeded (--timeout)$' "$tmp/err" &&
   sanitized; then ok; else bad "tsl run --timeout 0.3 on a loop of days: exit $rc after $t ms: $(head -1 "$tmp/err")"; fi
# shellcheck disable=SC2086
$TSL run $spin --in "$tmp/run/nbig.npy" >/dev/null 2>"$tmp/err" &
pid=$!
sleep 1   # loaded and running by then, even on a busy machine
kill -INT $pid
for i in $(seq 30); do kill -0 $pid 2>/dev/null || break; sleep 0.1; done   # 3 s, then it ignored Ctrl-C
kill -KILL $pid 2>/dev/null
wait $pid
rc=$?
if [ $rc -eq 130 ] && grep -q '^tsl: error: .*spin.tslg:[0-9]*:[0-9]*: interrupted$' "$tmp/err" && sanitized; then ok
else bad "SIGINT to tsl run: exit $rc, want 130: $(head -1 "$tmp/err")"; fi
# shellcheck disable=SC2086
timeout 10 $TSL run $spin --in "$tmp/run/n3.npy" --max-memory 1000000 >/dev/null 2>"$tmp/err"; rc=$?
if [ $rc -eq 1 ] && grep -q "^tsl: error: .*spin.tslg:[0-9]*:[0-9]*: out of memory: the program's memory would exceed --max-memory (1000000 bytes)$" "$tmp/err" &&
   sanitized; then ok; else bad "tsl run --max-memory 1000000 (a 4 MB result): exit $rc: $(head -1 "$tmp/err")"; fi
# shellcheck disable=SC2086
if timeout 10 $TSL run $spin --in "$tmp/run/n3.npy" --max-memory 100000000 --timeout 60 --out "$tmp/run/spin3.npy" 2>"$tmp/err" &&
   sanitized && $TSL -e 'assert(equal(load_npy(args()[0]), ones([1000, 1000]) * 7))' "$tmp/run/spin3.npy" 2>"$tmp/err"
then ok; else bad "tsl run with room and time: $(head -2 "$tmp/err")"; fi
for opt in "--timeout nan" "--timeout 0" "--timeout" "--max-memory 1e6" "--max-memory -1" "--max-memory"; do
    # shellcheck disable=SC2086
    check "tsl run usage error: $opt" 2 "" -- $TSL run $spin --in "$tmp/run/n3.npy" $opt
    if grep -q '^tsl: error: --' "$tmp/err"; then ok; else bad "tsl run $opt: message '$(cat "$tmp/err")'"; fi
done
# `tsl run` of a graph exported with a symbolic batch (export's dynamic=): any number of rows,
# each the bits eager code gives; the fixed axis is still checked
cat >"$tmp/mkdyn.tsl" <<'RUN_EOF'
d = args()[0]
seed(5)
w = randn([4, 3])
fn body(x, m) { return [tanh(x @ w) * m.a, sum(x, axis=1)] }
static fn f(x, m) { return body(x, m) }
m = { a: randn([3]) }
export(f, [randn([2, 4]), m], d + "/fdyn.tslg", dynamic={"x": [0]})
save_npy(d + "/a.npy", m.a)
for n in [1, 7, 300] {
  x = randn([n, 4])
  save_npy(d + "/x" + str(n) + ".npy", x)
  r = body(x, m)
  save_npy(d + "/want" + str(n) + "_0.npy", r[0])
  save_npy(d + "/want" + str(n) + "_1.npy", r[1])
}
save_npy(d + "/x35.npy", randn([3, 5]))
RUN_EOF
mkdir "$tmp/dyn"
if $TSL "$tmp/mkdyn.tsl" "$tmp/dyn" 2>"$tmp/err" && sanitized; then ok; else bad "export with dynamic=: $(head -3 "$tmp/err")"; fi
for n in 1 7 300; do
    if $TSL run "$tmp/dyn/fdyn.tslg" --in "$tmp/dyn/x$n.npy" --in "$tmp/dyn/a.npy" --out "$tmp/dyn/y0.npy" \
         --out "$tmp/dyn/y1.npy" 2>"$tmp/err" && sanitized &&
       $TSL -e "d = args()[0]
assert(equal(load_npy(d + \"/y0.npy\"), load_npy(d + \"/want${n}_0.npy\")))
assert(equal(load_npy(d + \"/y1.npy\"), load_npy(d + \"/want${n}_1.npy\")))" "$tmp/dyn" 2>"$tmp/err"
    then ok; else bad "tsl run, a symbolic batch of $n rows: $(head -3 "$tmp/err")"; fi
done
$TSL run "$tmp/dyn/fdyn.tslg" --in "$tmp/dyn/x35.npy" --in "$tmp/dyn/a.npy" >/dev/null 2>"$tmp/err"; rc=$?
if [ $rc -eq 1 ] && grep -qF "tsl: error: 'x' must be f32 [?, 4], got f32 [3, 5]" "$tmp/err" && sanitized; then ok
else bad "tsl run, a symbolic batch with a wrong fixed axis: exit $rc, $(head -2 "$tmp/err")"; fi

# dis() of a loaded graph lists the file's program under the function's name
out=$($TSL -e 'dis(load(args()[0]))' "$tmp/run/f.tslg" 2>"$tmp/err")
case "$out" in "== f: "*"matmul"*"(t"*) ok ;; *) bad "dis of a loaded graph: $(echo "$out" | head -2) $(head -2 "$tmp/err")" ;; esac

# the examples run
for ex in examples/fancy_func.tsl examples/demo.tsl "examples/mlp.tsl 3" examples/kmeans_digits.tsl \
          examples/text_stats.tsl examples/linreg.tsl "--verify-static examples/kmeans_digits.tsl" \
          "--verify-static examples/linreg.tsl" examples/train_digits.tsl examples/cnn_digits.tsl \
          "examples/train_digits_dist.tsl 3 600 check"; do
    if $TSL $ex >/dev/null 2>"$tmp/err"; then ok; else bad "example $ex: $(head -3 "$tmp/err")"; fi
done

# collectives over MPI (spec section 11): tests/mpi/*.tsl without mpirun (a world of one:
# identities) and under mpirun on 1, 2 and 3 ranks (shared memory on this machine); a rank
# that fails, and ranks that disagree on a shape, end the job with an error within seconds.
# Skipped, saying why, where mpirun cannot start processes or the plugin was not built.
for f in tests/mpi/*.tsl; do
    for mode in --no-static "" --verify-static; do
        if $TSL $mode "$f" >"$tmp/out" 2>"$tmp/err" && sanitized; then ok; else bad "$f $mode (no mpirun): $(head -3 "$tmp/err")"; fi
    done
done
MPIRUN="mpirun --allow-run-as-root --oversubscribe"
mpi_plugin="$(dirname "$TSL")/libtsl_mpi.so"
if ! command -v mpirun >/dev/null 2>&1; then
    echo "SKIP: MPI tests: mpirun is not installed (make installs openmpi-bin)"
elif [ ! -f "$mpi_plugin" ]; then
    echo "SKIP: MPI tests: no $mpi_plugin (make builds it beside bin/tsl where mpicc is installed; make asan does not)"
elif ! timeout -k 5 60 $MPIRUN -np 2 true >"$tmp/err" 2>&1; then
    echo "SKIP: MPI tests: mpirun cannot start 2 processes here: $(head -2 "$tmp/err")"
else
    for f in tests/mpi/*.tsl; do
        for np in 1 2 3; do
            for mode in "" --no-static; do
                if timeout -k 5 120 $MPIRUN -np $np $TSL $mode "$f" >"$tmp/out" 2>"$tmp/err"; then ok
                else bad "$f on $np ranks $mode: exit $?: $(head -3 "$tmp/err")"; fi
            done
        done
    done
    t0=$(ms)
    timeout -k 5 60 $MPIRUN -np 2 $TSL tests/mpi/errors/rank_fails.tsl >"$tmp/out" 2>"$tmp/err"; rc=$?
    t=$(($(ms) - t0))
    if [ $rc -ne 0 ] && [ $rc -ne 124 ] && [ $t -lt 10000 ] && grep -q '^\[rank 1 of 2\] .*error: assertion failed: the last rank fails' "$tmp/err" &&
       ! grep -q 'not reached' "$tmp/out"; then ok
    else bad "a failing rank: exit $rc after $t ms: $(head -3 "$tmp/err")"; fi
    timeout -k 5 60 $MPIRUN -np 2 $TSL tests/mpi/errors/shapes_differ.tsl >"$tmp/out" 2>"$tmp/err"; rc=$?
    if [ $rc -ne 0 ] && [ $rc -ne 124 ] && grep -qF 'rank 0 called allreduce(op="sum") of f32[2], rank 1 called allreduce(op="sum") of f32[3]' "$tmp/err"; then ok
    else bad "shapes that differ between ranks: exit $rc: $(head -3 "$tmp/err")"; fi
    # ranks that do different things (a barrier against an allreduce, a collective after the
    # others ended, exit(0) while the others wait) all stop, each with its error at its own
    # line, and the job fails within seconds (timeout -k: a hung mpirun ignores SIGTERM)
    mpi_stops() {   # NAME NP LINE...: tests/mpi/errors/NAME.tsl on NP ranks prints every LINE on stderr
        f=tests/mpi/errors/$1.tsl np=$2; shift 2
        t0=$(ms)
        timeout -k 5 60 $MPIRUN -np $np $TSL "$f" >"$tmp/out" 2>"$tmp/err"; rc=$?
        t=$(($(ms) - t0)) missing=""
        for want in "$@"; do grep -qxF "$want" "$tmp/err" || missing="$missing [$want]"; done
        if [ $rc -ne 0 ] && [ $rc -ne 124 ] && [ $rc -ne 137 ] && [ $t -lt 20000 ] && [ -z "$missing" ] &&
           ! grep -q 'not reached' "$tmp/out"; then ok
        else bad "$f on $np ranks: exit $rc after $t ms, missing:$missing: $(head -3 "$tmp/err")"; fi
    }
    mpi_stops barrier_disagrees 2 \
        "[rank 0 of 2] tests/mpi/errors/barrier_disagrees.tsl:5:3: error: barrier(): the ranks disagree: rank 0 called barrier(), rank 1 called allreduce(op=\"sum\") of f32[2]" \
        "[rank 1 of 2] tests/mpi/errors/barrier_disagrees.tsl:7:7: error: allreduce(): the ranks disagree: rank 1 called allreduce(op=\"sum\") of f32[2], rank 0 called barrier()"
    mpi_stops extra_collective 3 \
        "[rank 0 of 3] tsl: error: this rank finished while rank 2 waits in allreduce(op=\"sum\") of f32[2]" \
        "[rank 1 of 3] tsl: error: this rank finished while rank 2 waits in allreduce(op=\"sum\") of f32[2]" \
        "[rank 2 of 3] tests/mpi/errors/extra_collective.tsl:6:16: error: rank 0 finished while this rank waits in allreduce(op=\"sum\") of f32[2]"
    mpi_stops exit_while_waiting 2 \
        "[rank 0 of 2] tsl: error: this rank finished while rank 1 waits in barrier()" \
        "[rank 1 of 2] tests/mpi/errors/exit_while_waiting.tsl:5:1: error: rank 0 finished while this rank waits in barrier()"
    # the data-parallel example: parameters asserted equal on both ranks after every step
    if timeout -k 5 300 $MPIRUN -np 2 $TSL examples/train_digits_dist.tsl 3 600 check >"$tmp/out" 2>"$tmp/err" &&
       grep -q 'over 2 rank(s)' "$tmp/out"; then ok
    else bad "examples/train_digits_dist.tsl on 2 ranks: $(head -3 "$tmp/err")"; fi
    # GPU collectives (tests/gpu/nccl.sh runs them where GPUs are): where the GPU cannot start,
    # to() fails first with the reason, on every rank, and the job ends
    TSL_CUDA_PLUGIN=/nonexistent/libtsl_cuda.so timeout -k 5 60 $MPIRUN -np 2 $TSL tests/gpu/nccl.tsl >"$tmp/out" 2>"$tmp/err"; rc=$?
    if [ $rc -ne 0 ] && [ $rc -ne 124 ] && grep -q '^\[rank [01] of 2\] tests/gpu/nccl.tsl:[0-9]*:[0-9]*: error: CUDA runtime not available: ' "$tmp/err"; then ok
    else bad "a GPU collective where the GPU cannot start: exit $rc: $(head -3 "$tmp/err")"; fi
    TSL_MPI_PLUGIN=/nonexistent/libtsl_mpi.so timeout -k 5 60 $MPIRUN -np 1 $TSL -e 'print(rank())' >"$tmp/out" 2>"$tmp/err"; rc=$?
    if [ $rc -ne 0 ] && grep -q 'started by mpirun, but the MPI plugin could not be loaded' "$tmp/err"; then ok
    else bad "a plugin that cannot load under mpirun: exit $rc: $(head -3 "$tmp/err")"; fi
fi

# the REPL through a pseudo-terminal
if command -v python3 >/dev/null 2>&1; then
    if python3 tests/repl_pty.py "$TSL" >"$tmp/repl" 2>&1; then ok; else bad "REPL pty test: $(tail -5 "$tmp/repl")"; fi
    # the REPL transcripts of README.md and docs/ typed in as written
    if python3 tests/repl_docs.py "$TSL" >"$tmp/repl" 2>&1; then ok; else bad "REPL transcripts in the docs: $(head -8 "$tmp/repl")"; fi
else
    echo "SKIP: REPL pty test needs python3"
fi

echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
