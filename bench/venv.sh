#!/bin/sh
# bench/venv.sh - the virtual environment of the compiled peers (jax.jit, torch.compile):
# build/bench-venv, git-ignored, made by .ci/mkvenv.sh (Debian's python3, filled by pip from PyPI
# by package name; kept as it is once its packages import).
# Prints the venv's python on the last line of stdout, or nothing when it cannot be made.
# The first install downloads about 3 GB (PyPI's torch wheel brings its CUDA libraries; they are
# not used here) and takes a few minutes; progress goes to stderr.
cd "$(dirname "$0")/.."
. ./.ci/mkvenv.sh
venv=build/bench-venv
if mkvenv bench-venv $venv 'jax[cpu] torch numpy' 'import jax, torch, numpy'; then
    echo $venv/bin/python
else
    echo "bench-venv: no jax.jit / torch.compile rows" >&2
fi
exit 0
