#!/bin/sh
# repl/jupyter/setup.sh - what the TSL kernel needs: build/jupyter-venv (git-ignored; Debian's
# python3, filled by pip from PyPI by package name: ipykernel and, for the tests, nbclient) and
# the kernel spec build/jupyter/kernels/tsl/kernel.json (the venv's python running
# repl/jupyter/tsl_kernel over bin/libtsl.so). Idempotent: a venv whose packages import is
# kept as it is (no network). Prints the venv's python on the last line of stdout.
# Exit status: 0 ready; 3 when pip cannot reach PyPI (no network: the tests skip); 1 otherwise.
cd "$(dirname "$0")/../.."
root=$(pwd)
venv=build/jupyter-venv
pkgs='ipykernel jupyter_client nbclient nbformat'
check='import ipykernel, jupyter_client, nbclient, nbformat'
if ! [ -x $venv/bin/python ] || ! $venv/bin/python -c "$check" >/dev/null 2>&1; then
    if ! /usr/bin/python3 -c 'import venv, ensurepip' >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
        echo "jupyter: installing python3-venv" >&2
        apt-get update -qq >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-venv >/dev/null 2>&1
    fi
    echo "jupyter: making $venv and installing $pkgs from PyPI (first time: ~60 MB)" >&2
    rm -rf $venv
    if ! /usr/bin/python3 -m venv $venv >&2; then
        echo "jupyter: python3 -m venv failed (install python3-venv)" >&2
        exit 1
    fi
    if ! $venv/bin/pip install --progress-bar off $pkgs >&2 || ! $venv/bin/python -c "$check" >&2; then
        # no network, or something else? ask the index for one small file
        tmp=$(mktemp -d)
        if ! $venv/bin/pip download --no-deps --no-cache-dir --progress-bar off -d "$tmp" nbformat >/dev/null 2>&1; then
            rm -rf "$tmp"
            echo "jupyter: pip cannot reach PyPI" >&2
            exit 3
        fi
        rm -rf "$tmp"
        echo "jupyter: pip install $pkgs failed" >&2
        exit 1
    fi
fi
spec=build/jupyter/kernels/tsl
mkdir -p $spec
$venv/bin/python - "$root" "$venv" >$spec/kernel.json.tmp <<'PY' || exit 1
import json, sys
root, venv = sys.argv[1], sys.argv[2]
json.dump({"argv": [root + "/" + venv + "/bin/python", "-m", "tsl_kernel", "-f", "{connection_file}"],
           "display_name": "TSL", "language": "tsl", "interrupt_mode": "signal",
           "env": {"PYTHONPATH": root + "/repl/jupyter", "TSL_LIB": root + "/bin/libtsl.so"}}, sys.stdout, indent=2)
PY
mv $spec/kernel.json.tmp $spec/kernel.json
echo $venv/bin/python
