# .ci/mkvenv.sh - sourced by bench/venv.sh (make bench) and repl/jupyter/setup.sh (make jupyter):
# mkvenv TAG DIR "PKGS" "CHECK" makes the git-ignored virtual environment DIR with Debian's python3
# and fills it by pip from PyPI by package name. Idempotent: a venv where the python code CHECK
# runs is kept as it is (no network). Progress and errors go to stderr, prefixed by TAG.
# Returns 0 when ready, 3 when pip cannot reach PyPI (no network), 1 otherwise.
mkvenv() {
    tag=$1 venv=$2 pkgs=$3 check=$4
    if [ -x "$venv/bin/python" ] && "$venv/bin/python" -c "$check" >/dev/null 2>&1; then
        return 0
    fi
    if ! /usr/bin/python3 -c 'import venv, ensurepip' >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
        echo "$tag: installing python3-venv" >&2
        apt-get update -qq >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-venv >/dev/null 2>&1
    fi
    echo "$tag: making $venv and installing $pkgs from PyPI" >&2
    rm -rf "$venv"
    if ! /usr/bin/python3 -m venv "$venv" >&2; then
        echo "$tag: python3 -m venv failed (install python3-venv)" >&2
        return 1
    fi
    if "$venv/bin/pip" install --progress-bar off $pkgs >&2 && "$venv/bin/python" -c "$check" >&2; then
        return 0
    fi
    # no network, or something else? ask the index for one small file
    tmp=$(mktemp -d)
    if ! "$venv/bin/pip" download --no-deps --no-cache-dir --progress-bar off -d "$tmp" six >/dev/null 2>&1; then
        rm -rf "$tmp"
        echo "$tag: pip cannot reach PyPI" >&2
        return 3
    fi
    rm -rf "$tmp"
    echo "$tag: pip install $pkgs failed" >&2
    return 1
}
