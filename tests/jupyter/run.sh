#!/bin/sh
# tests/jupyter/run.sh - the Jupyter kernel under nbclient (part of `make test`): makes the venv
# and the kernel spec if needed (repl/jupyter/setup.sh), then tests/jupyter/check.py. Without
# network for pip's first install it says SKIP and passes; any other failure fails.
cd "$(dirname "$0")/../.."
py=$(sh repl/jupyter/setup.sh)
rc=$?
if [ $rc = 3 ]; then
    echo "SKIP: the Jupyter kernel test (pip cannot reach PyPI to install ipykernel and nbclient into build/jupyter-venv)"
    exit 0
fi
[ $rc = 0 ] && [ -n "$py" ] || { echo "jupyter: repl/jupyter/setup.sh failed"; exit 1; }
# the kernel spec of this checkout, and nothing of the user's: a private Jupyter home
tmp=$(mktemp -d) && trap 'rm -rf "$tmp"' EXIT
JUPYTER_PATH=$(pwd)/build/jupyter JUPYTER_DATA_DIR=$tmp/data JUPYTER_RUNTIME_DIR=$tmp/runtime \
JUPYTER_CONFIG_DIR=$tmp/config IPYTHONDIR=$tmp/ipython JUPYTER_PLATFORM_DIRS=1 \
    timeout 120 "$py" tests/jupyter/check.py >"$tmp/log" 2>&1
rc=$?
grep -v "running over TCP without encryption" "$tmp/log"   # ipykernel's note on every start
[ $rc = 124 ] && echo "jupyter: tests/jupyter/check.py ran past 120 s"
exit $rc
