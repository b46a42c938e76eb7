#!/bin/sh
# tests/static_idioms/run.sh TSL - the idiom corpus (issue 26): programs written the way a
# deep-learning engineer writes them at first try, each with its static code in `static { }`
# blocks or `static fn`s. For every NN_name.tsl here:
#   - eagerly (--no-static) it must pass (exit 0); a NN_name.out beside it, written by hand,
#     must match its stdout;
#   - with static code (the default, under TSL_EXPLAIN=1) it must pass and print exactly what
#     the eager run printed, byte for byte;
#   - with --verify-static it must pass and print the same again;
#   - its static code must compile with no eager fallback ("runs eagerly" under TSL_EXPLAIN=1),
#     unless PENDING lists it: then it MUST still fall back (a listed program that now compiles
#     fails, so the list only shrinks, and honestly), and the warning must be on stderr in a
#     plain run too (nothing runs eagerly silently).
# Prints one line per failure, then "static idioms: N programs, C compile without fallback,
# P pending"; exits 1 if anything failed. Run from anywhere; the programs run from the
# repository root (they read examples/data/).
TSL=${1:-bin/tsl}
case "$TSL" in /*) ;; */*) TSL="$(pwd)/$TSL" ;; esac
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../.." || exit 2
dir=tests/static_idioms
unset TSL_EXPLAIN TSL_WARN   # the checks read the default warning and the explain lines
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

fail=0
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }
# a sanitizer report in a run's stderr is a failure, whatever the exit status (make asan)
sanitized() { ! grep -q 'Sanitizer' "$1" || bad "$2: sanitizer report: $(grep -m1 Sanitizer "$1")"; }
# pending NAME: whether PENDING lists NAME (its first word on a line; # starts a comment)
pending() { sed 's/#.*//' "$dir/PENDING" | awk -v n="$1" '$1 == n { found = 1 } END { exit !found }'; }

# every PENDING entry names a program that exists (names have no spaces)
# shellcheck disable=SC2013
for name in $(sed 's/#.*//' "$dir/PENDING" | awk 'NF { print $1 }'); do
    [ -f "$dir/$name" ] || bad "PENDING lists $name, which is not in $dir"
done

n=0 compiled=0 npending=0
for f in "$dir"/[0-9]*.tsl; do
    name=$(basename "$f")
    n=$((n + 1))
    if ! timeout 60 "$TSL" --no-static "$f" >"$tmp/eager" 2>"$tmp/err"; then
        bad "$f --no-static: exit $?: $(head -3 "$tmp/err")"
        continue
    fi
    sanitized "$tmp/err" "$f --no-static"
    if [ -f "${f%.tsl}.out" ] && ! cmp -s "$tmp/eager" "${f%.tsl}.out"; then
        bad "$f --no-static: stdout differs from ${f%.tsl}.out"
    fi
    if ! TSL_EXPLAIN=1 timeout 60 "$TSL" "$f" >"$tmp/static" 2>"$tmp/explain"; then
        bad "$f (static): exit $?: $(grep -v '^explain: ' "$tmp/explain" | head -3)"
        continue
    fi
    sanitized "$tmp/explain" "$f (static)"
    cmp -s "$tmp/eager" "$tmp/static" || bad "$f: static stdout differs from --no-static stdout: $(diff "$tmp/eager" "$tmp/static" | head -4)"
    if ! timeout 60 "$TSL" --verify-static "$f" >"$tmp/verify" 2>"$tmp/err"; then
        bad "$f --verify-static: exit $?: $(grep -v ': warning: ' "$tmp/err" | head -3)"
    elif ! cmp -s "$tmp/eager" "$tmp/verify"; then
        bad "$f --verify-static: stdout differs from --no-static stdout"
    else
        sanitized "$tmp/err" "$f --verify-static"
    fi
    falls_back=$(grep -m1 'runs eagerly' "$tmp/explain")
    if pending "$name"; then
        npending=$((npending + 1))
        if [ -z "$falls_back" ]; then
            bad "$f now compiles: remove it from $dir/PENDING"
        else
            # the plain run warns, located, with the same words
            timeout 60 "$TSL" "$f" >/dev/null 2>"$tmp/err"
            grep -q "^$f:[0-9]*:[0-9]*: warning: static .* runs eagerly: " "$tmp/err" ||
                bad "$f falls back without a located warning: $(head -2 "$tmp/err")"
        fi
    elif [ -n "$falls_back" ]; then
        bad "$f falls back (add it to PENDING only if that is today's limit): ${falls_back#explain: }"
    else
        compiled=$((compiled + 1))
    fi
done

echo "static idioms: $n programs, $compiled compile without fallback, $npending pending"
[ "$fail" -eq 0 ]
