#!/bin/sh
# tests/run.sh TSL - the script-level test suite:
#   tests/scripts/*.tsl  self-asserting scripts, run three ways: eagerly (--no-static), with
#                        static code compiled (the default) and with --verify-static
#                        (a NAME.out beside one, written by hand, must match its stdout);
#                        their static code must compile (no eager fallback) unless a line
#                        starts with `# allows-eager`
#   tests/errors/*.tsl   each must fail with exit 1 and print the `# error: L:C: MSG` it names
#   command-line behaviour, the examples, and the REPL through a pty (tests/repl_pty.py)
# Prints one line per failure and ends with "N passed, N failed".
TSL=${1:-bin/tsl}
pass=0
fail=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

ok() { pass=$((pass + 1)); }
# a sanitizer report anywhere in a run's stderr is a failure, whatever the exit status
sanitized() { ! grep -q 'Sanitizer' "$tmp/err"; }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }

for f in tests/scripts/*.tsl; do
    # all their static code compiles, unless the script says it tests the eager fallback
    if ! grep -q '^# allows-eager' "$f"; then
        TSL_EXPLAIN=1 $TSL "$f" >/dev/null 2>"$tmp/err"
        if grep -q 'runs eagerly' "$tmp/err"; then bad "$f: $(grep -m1 'runs eagerly' "$tmp/err")"; else ok; fi
    fi
    for mode in --no-static "" --verify-static; do
        if $TSL $mode "$f" >"$tmp/out" 2>"$tmp/err"; then
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

for f in tests/errors/*.tsl; do
    want="$f:$(sed -n 's/^# error: \([0-9]*:[0-9]*\): /\1: error: /p' "$f")"
    $TSL "$f" >/dev/null 2>"$tmp/err"
    rc=$?
    got=$(head -1 "$tmp/err")
    if [ $rc -eq 1 ] && [ "$got" = "$want" ] && sanitized; then ok; else bad "$f: exit $rc, got '$got', want '$want'"; fi
done

# hostile inputs: each must fail cleanly with the error its '# expect:' line names,
# within 5 s (and 256 MiB where no sanitizer needs its shadow memory)
case "$TSL" in *asan*|*fuzz*) memcap="" ;; *) memcap="ulimit -v 262144;" ;; esac
for f in tests/hostile/*.tsl; do
    want=$(sed -n '1s/^# expect: //p' "$f")
    flags=$(sed -n '2s/^# flags: //p' "$f")
    (eval "$memcap" TSL_PATH=tests/hostile/mods timeout 5 $TSL $flags "$f" >/dev/null 2>"$tmp/err")
    rc=$?
    first=$(head -1 "$tmp/err")
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
check "unreadable script" 2 "" -- $TSL /nonexistent/script.tsl
check "runtime error exit" 1 "" -- $TSL -e 'error("x")'
check "version" 0 "tsl 0.1.0" -- $TSL --version
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

# a TSL_OPT that names no pass is reported, not silently ignored
TSL_OPT=-fusion $TSL -e 'static { y = 1 }' 2>"$tmp/err" >/dev/null
if grep -q "TSL_OPT: ignoring '-fusion'" "$tmp/err"; then ok; else bad "TSL_OPT typo not reported: $(cat "$tmp/err")"; fi

# TSL_EXPLAIN names what changed when a block recompiles
printf 'x = zeros([3])\nfor n in [3, 4] {\n  x = zeros([n])\n  static { y = x + 1 }\n}\n' >"$tmp/explain.tsl"
TSL_EXPLAIN=1 $TSL "$tmp/explain.tsl" 2>"$tmp/err" >/dev/null
if grep -q "explain: .*explain.tsl:4:3: recompiled static block in .* ms: 'x' changed from f32 \[3\] to f32 \[4\]" "$tmp/err"; then ok
else bad "TSL_EXPLAIN recompile line: $(cat "$tmp/err")"; fi

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
if [ $rc -eq 1 ] && grep -q "^<string>:1:1: error: save_npy: cannot open" "$tmp/err" && sanitized; then ok
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
printf 'a = [1]\npush(a, a)\nstatic { n = len(a) }\nassert(n == 2)\n' >"$tmp/cyc.tsl"
TSL_EXPLAIN=1 timeout 10 $TSL "$tmp/cyc.tsl" 2>"$tmp/err" >/dev/null
if grep -q "cyc.tsl:3:1: static block runs eagerly: .*'a\[1\]' contains itself" "$tmp/err" && sanitized; then ok
else bad "static block reading a cyclic list: $(head -3 "$tmp/err")"; fi

# files and process built-ins (issue 11, strings/lists/files): exit(code) ends the program with
# that status after flushing stdout (in a script, -e, a static block and the REPL); save_csv
# writes the shortest text load_csv reads back exactly (the texts are Python's repr of the f32 /
# f64 values); read_text/write_text round-trip UTF-8 and refuse what is not a regular file
out=$(timeout 5 $TSL -e 'print("a"); exit(3); print("b")' 2>"$tmp/err"); rc=$?
if [ $rc -eq 3 ] && [ "$out" = "a" ] && [ ! -s "$tmp/err" ]; then ok; else bad "exit(3): exit $rc, out '$out', err $(head -1 "$tmp/err")"; fi
printf 'fn leave(n) { exit(n) }\nx = [1, 2]\nstatic {\n  y = x[0]\n  leave(4)\n}\nprint("not here")\n' >"$tmp/exit.tsl"
for mode in --no-static "" --verify-static; do
    out=$(timeout 5 $TSL $mode "$tmp/exit.tsl" 2>"$tmp/err"); rc=$?
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
if [ $rc -eq 1 ] && grep -q "^<string>:1:1: error: write_text: cannot open" "$tmp/err"; then ok; else bad "write_text to a FIFO nobody reads: exit $rc: $(head -1 "$tmp/err")"; fi

# the examples run
for ex in examples/fancy_func.tsl examples/demo.tsl "examples/mlp.tsl 3"; do
    if $TSL $ex >/dev/null 2>"$tmp/err"; then ok; else bad "example $ex: $(head -3 "$tmp/err")"; fi
done

# the REPL through a pseudo-terminal
if command -v python3 >/dev/null 2>&1; then
    if python3 tests/repl_pty.py "$TSL" >"$tmp/repl" 2>&1; then ok; else bad "REPL pty test: $(tail -5 "$tmp/repl")"; fi
else
    echo "SKIP: REPL pty test needs python3"
fi

echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
