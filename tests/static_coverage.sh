#!/bin/sh
# tests/static_coverage.sh TSL [--list] - how much of the static code in tests/ and examples/
# compiles without an eager fallback (issue 26). It reports; it never fails a build.
#
# Every static block and static fn is found in the source (by its FILE:LINE:COL: a block at
# its `static`, a static fn at its `fn`, as TSL_EXPLAIN=1 names them; static code nested in
# other static code compiles with it and is not counted again). Each program runs once under
# TSL_EXPLAIN=1, and each location counts once:
#   compiled       an "explain: LOC: compiled static ..." line and no fallback
#   falls back     an "explain: LOC: static ... runs eagerly: REASON" line (even after compiling
#                  once: a recompile may fall back)
#   not run        no line at all: never reached, only exported, or only called inside grad
#                  (which runs static code eagerly); reported apart, not counted as compiled
# Two figures: all, and without the files marked `# allows-eager` (they test the fallback).
# --list: the locations that fall back grouped by reason, and those never reached.
# Skipped, saying why: programs that fail on purpose (tests/errors, tests/hostile,
# tests/mpi/errors, tests/oom/located_*), fuzz inputs (tests/fuzz-regress) and programs that
# need a GPU (tests/gpu). tests/mpi runs as a world of one (no mpirun), as tests/run.sh does.
TSL=${1:-bin/tsl}
list=0
[ "$2" = "--list" ] && list=1
case "$TSL" in /*) ;; */*) TSL="$(pwd)/$TSL" ;; esac
cd "$(dirname "$0")/.." || exit 2
unset TSL_WARN
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# the arguments a program runs with (reduced runs of the examples, as tests/run.sh makes them);
# a test gets an empty scratch folder of its own (args()[0]), as tests/run.sh gives it
args_for() {
    case "$1" in
        examples/deploy/export_digits.tsl) rm -rf "$tmp/scratch" && mkdir "$tmp/scratch" && echo "$tmp/scratch" 2 ;;
        examples/mlp.tsl) echo 3 ;;
        examples/train_digits.tsl) echo 3 400 ;;
        examples/char_rnn.tsl) echo 40 8 ;;
        examples/train_digits_dist.tsl) echo 3 600 check ;;
        tests/soak/*.tsl) echo 1 ;;                  # one second of each soak
        examples/*) ;;
        *) rm -rf "$tmp/scratch" && mkdir "$tmp/scratch" && echo "$tmp/scratch" ;;
    esac
}
# why a program is not run, as "WHICH<TAB>WHY", or nothing
skip_reason() {
    case "$1" in
        tests/errors/*) echo "tests/errors/	each fails on purpose (error tests)" ;;
        tests/mpi/errors/*) echo "tests/mpi/errors/	each fails on purpose (error tests)" ;;
        tests/hostile/*) echo "tests/hostile/	hostile inputs: each fails on purpose" ;;
        tests/oom/located_*) echo "tests/oom/located_*	each fails on purpose under a memory limit" ;;
        tests/fuzz-regress/*) echo "tests/fuzz-regress/	fuzz inputs" ;;
        tests/gpu/*) echo "tests/gpu/	needs a GPU" ;;
    esac
}

# The static blocks and fns of a file: "FILE:LINE:COL<TAB>kind<TAB>nested", outside strings
# and comments; nested is 1 inside another static block or fn (braces counted).
scan() {
    awk -v file="$1" '
    function isid(c) { return c ~ /[A-Za-z0-9_]/ }
    {
        line = $0; len = length(line); instr = ""; esc = 0
        for (i = 1; i <= len; i++) {
            c = substr(line, i, 1)
            if (instr != "") {
                if (esc) esc = 0; else if (c == "\\") esc = 1; else if (c == instr) instr = ""
                continue
            }
            if (c == "#") break
            if (c == "\"" || c == "'"'"'") { instr = c; continue }
            if (c == "{") {
                depth++
                if (pending) { region[++nreg] = depth; pending = 0 }
                continue
            }
            if (c == "}") {
                if (nreg > 0 && region[nreg] == depth) nreg--
                depth--
                continue
            }
            if (c !~ /[A-Za-z_]/ || (i > 1 && isid(substr(line, i - 1, 1)))) continue
            j = i
            while (j <= len && isid(substr(line, j, 1))) j++
            word = substr(line, i, j - i)
            if (word == "static") {
                k = j
                while (k <= len && substr(line, k, 1) ~ /[ \t]/) k++
                kind = ""
                if (substr(line, k, 1) == "{") { kind = "block"; col = i }
                else if (substr(line, k, 2) == "fn" && !isid(substr(line, k + 2, 1))) { kind = "fn"; col = k }
                if (kind != "") {
                    printf "%s:%d:%d\t%s\t%d\n", file, NR, col, kind, (nreg > 0)
                    pending = 1
                }
            }
            i = j - 1
        }
    }' "$1"
}

nrun=0
: >"$tmp/sites"
: >"$tmp/explain"
: >"$tmp/failed"
: >"$tmp/skipped"
: >"$tmp/eagerfiles"
for f in $(find tests examples -name '*.tsl' | LC_ALL=C sort); do
    why=$(skip_reason "$f")
    if [ -n "$why" ]; then
        echo "$why" >>"$tmp/skipped"
        continue
    fi
    scan "$f" >"$tmp/one"
    [ -s "$tmp/one" ] || continue           # no static code: nothing to count
    cat "$tmp/one" >>"$tmp/sites"
    grep -q '^# allows-eager' "$f" && echo "$f" >>"$tmp/eagerfiles"
    nrun=$((nrun + 1))
    # shellcheck disable=SC2046
    if TSL_EXPLAIN=1 timeout 120 "$TSL" "$f" $(args_for "$f") >/dev/null 2>"$tmp/err"; then
        grep '^explain: ' "$tmp/err" >>"$tmp/explain"
    else
        echo "$f	exit $?: $(grep -v '^explain: ' "$tmp/err" | head -1)" >>"$tmp/failed"
    fi
done

# what was skipped, one line per kind
awk -F'\t' '!($1 in n) { order[++k] = $1; why[$1] = $2 } { n[$1]++ }
    END { for (i = 1; i <= k; i++) printf "  skipped %s (%d files): %s\n", order[i], n[order[i]], why[order[i]] }' "$tmp/skipped" >"$tmp/skipsum"

# join the sites with what the runs said about them
awk -F'\t' -v list=$list -v nrun=$nrun -v eagerfiles="$tmp/eagerfiles" -v failedf="$tmp/failed" -v skipsum="$tmp/skipsum" '
function pct(a, b) { return b ? sprintf("%.1f%%", 100 * a / b) : "-" }
FILENAME == eagerfiles { allows[$1] = 1; next }
FILENAME == failedf { failed[$1] = $2; nfailed++; next }
FILENAME == skipsum { skipped = skipped $0 "\n"; next }
FILENAME ~ /explain$/ {
    # explain: FILE:L:C: compiled static ... | static X runs eagerly: REASON
    s = substr($0, 10)
    if (!match(s, /^[^ ]*:[0-9]+:[0-9]+: /)) next
    loc = substr(s, 1, RLENGTH - 2); rest = substr(s, RLENGTH + 1)
    if (rest ~ /^compiled static /) seen[loc] = seen[loc] ? seen[loc] : "compiled"
    else if (match(rest, /^static (block|fn) runs eagerly: /)) {
        seen[loc] = "eager"
        r = substr(rest, RLENGTH + 1)
        if (match(r, /^[^ ]*:[0-9]+:[0-9]+: /)) { inner[loc] = substr(r, 1, RLENGTH - 2); r = substr(r, RLENGTH + 1) }
        reason[loc] = r
    }
    next
}
{   # a site: LOC kind nested
    loc = $1; file = loc; sub(/:[0-9]+:[0-9]+$/, "", file)
    if ($3 == 1) { nested++; next }
    if (file in failed) { notrun++; next }
    st = (loc in seen) ? seen[loc] : "unreached"
    n[st]++
    if (!(file in allows)) m[st]++
    if (st == "eager") {
        r = reason[loc]
        if (!(r in groups)) order[++nr] = r
        groups[r] = groups[r] "    " loc (loc in inner ? " (at " inner[loc] ")" : "") (file in allows ? " [allows-eager]" : "") "\n"
        count[r]++
    } else if (st == "unreached") unreached = unreached "    " loc "\n"
}
END {
    all = n["compiled"] + n["eager"]; own = m["compiled"] + m["eager"]
    printf "static coverage: %d programs with static code run from tests/ and examples/\n", nrun
    printf "  all:                    %d of %d static blocks and fns compile without fallback (%s)\n", n["compiled"], all, pct(n["compiled"], all)
    printf "  without # allows-eager: %d of %d (%s)\n", m["compiled"], own, pct(m["compiled"], own)
    printf "  not run statically: %d (not counted above); nested in other static code: %d (compiled with it)\n", n["unreached"], nested
    if (nfailed) {
        printf "  programs that failed to run (their %d static blocks and fns not counted):\n", notrun
        for (f in failed) printf "    %s: %s\n", f, failed[f]
    }
    printf "%s", skipped
    if (list) {
        printf "falls back, by reason:\n"
        for (i = 1; i <= nr; i++) printf "  %s (%d):\n%s", order[i], count[order[i]], groups[order[i]]
        if (unreached != "") printf "not run statically (not reached, only exported, or only inside grad):\n%s", unreached
    }
}' "$tmp/eagerfiles" "$tmp/failed" "$tmp/skipsum" "$tmp/explain" "$tmp/sites"
exit 0
