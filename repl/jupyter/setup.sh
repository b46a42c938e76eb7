#!/bin/sh
# repl/jupyter/setup.sh - what the TSL kernel needs: build/jupyter-venv (git-ignored; made by
# .ci/mkvenv.sh: Debian's python3, filled by pip from PyPI by package name with ipykernel and, for
# the tests, nbclient) and the kernel spec build/jupyter/kernels/tsl/kernel.json (the venv's python
# running repl/jupyter/tsl_kernel over bin/libtsl.so). Idempotent: a venv whose packages import is
# kept as it is (no network). Prints the venv's python on the last line of stdout.
# Exit status: 0 ready; 3 when pip cannot reach PyPI (no network: the tests skip); 1 otherwise.
cd "$(dirname "$0")/../.."
root=$(pwd)
. ./.ci/mkvenv.sh
venv=build/jupyter-venv
pkgs='ipykernel jupyter_client nbclient nbformat'
check='import ipykernel, jupyter_client, nbclient, nbformat'
mkvenv jupyter $venv "$pkgs" "$check" || exit $?
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
