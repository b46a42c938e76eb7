#!/bin/sh
# bench/venv.sh - the virtual environment of the compiled peers (jax.jit, torch.compile):
# build/bench-venv, git-ignored, made with Debian's python3 and filled by pip from PyPI by package
# name. Idempotent: a venv whose packages import is kept as it is (a quick check, no network).
# Prints the venv's python on the last line of stdout, or nothing when it cannot be made.
# The first install downloads about 3 GB (PyPI's torch wheel brings its CUDA libraries; they are
# not used here) and takes a few minutes; progress goes to stderr.
cd "$(dirname "$0")/.."
venv=build/bench-venv
pkgs='jax[cpu] torch numpy'
if [ -x $venv/bin/python ] && $venv/bin/python -c 'import jax, torch, numpy' >/dev/null 2>&1; then
    echo $venv/bin/python
    exit 0
fi
if ! /usr/bin/python3 -c 'import venv, ensurepip' >/dev/null 2>&1; then
    if [ "$(id -u)" = 0 ]; then
        echo "bench-venv: installing python3-venv" >&2
        apt-get update -qq >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-venv >/dev/null 2>&1
    fi
fi
echo "bench-venv: making $venv and installing $pkgs from PyPI (first time: ~3 GB, a few minutes)" >&2
rm -rf $venv
if ! /usr/bin/python3 -m venv $venv >&2; then
    echo "bench-venv: python3 -m venv failed: no jax.jit / torch.compile rows" >&2
    exit 0
fi
if ! $venv/bin/pip install --progress-bar off $pkgs >&2 ||
   ! $venv/bin/python -c 'import jax, torch, numpy' >&2; then
    echo "bench-venv: pip install failed: no jax.jit / torch.compile rows" >&2
    exit 0
fi
echo "bench-venv: ready" >&2
echo $venv/bin/python
