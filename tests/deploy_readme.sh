#!/bin/sh
# tests/deploy_readme.sh - examples/deploy/README.md's commands, run as a new user types them:
# the indented command lines (make ..., bin/...) taken from the README itself, in order, from
# the repository root, with its output folder /tmp/digits moved to a folder that does not
# exist yet inside a private mktemp -d (as /tmp/digits on a fresh machine; nothing is left
# behind), then its REPL lines (>>> ...) as a script. Checks that deploy prints the classes
# TSL's load() gave (expected.txt), whatever the batch. Usage: sh tests/deploy_readme.sh (part of `make deploy-test`).
readme=examples/deploy/README.md
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
out="$tmp/fresh/digits"
fail() { echo "FAIL: $readme: $*"; exit 1; }

sed -n 's/^    \(make .*\|bin\/.*\)$/\1/p' "$readme" | sed 's/ *#.*$//' | sed "s|/tmp/digits|$out|g" >"$tmp/commands"
sed -n 's/^    >>> //p' "$readme" | sed "s|/tmp/digits|$out|g" >"$tmp/repl.tsl"
[ "$(wc -l <"$tmp/commands")" -ge 3 ] || fail "found only $(wc -l <"$tmp/commands") command lines"
[ -s "$tmp/repl.tsl" ] || fail "found no >>> lines"
grep -q "$out" "$tmp/commands" || fail "its commands no longer write to /tmp/digits"

ndeploy=0
while IFS= read -r cmd; do
    sh -c "$cmd" >"$tmp/stdout" 2>"$tmp/stderr" || fail "'$cmd' failed: $(head -3 "$tmp/stderr")"
    case "$cmd" in bin/deploy*)
        # each deploy command (batches of every size) prints the classes load() gave in the script
        ndeploy=$((ndeploy + 1))
        cmp -s "$tmp/stdout" "$out/expected.txt" ||
            fail "'$cmd' printed '$(head -2 "$tmp/stdout")', expected.txt says '$(head -2 "$out/expected.txt")'" ;;
    esac
done <"$tmp/commands"
[ "$ndeploy" -ge 3 ] || fail "found only $ndeploy bin/deploy commands"
bin/tsl "$tmp/repl.tsl" >/dev/null 2>"$tmp/stderr" || fail "the REPL lines failed: $(head -3 "$tmp/stderr")"
echo "deploy README: $(wc -l <"$tmp/commands") commands and the REPL lines ran; $ndeploy deploy runs classified $(wc -l <"$tmp/stdout") rows as load() did"
