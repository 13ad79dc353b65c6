#!/usr/bin/env bash
# Print the path of a Python interpreter of version MAJOR.MINOR, found the way pyenv
# users expect, or print nothing and exit 1 when there is none:
#
#   1. $PYENV_ROOT/versions/MAJOR.MINOR*/bin/pythonMAJOR.MINOR (newest release first)
#   2. the same under `pyenv root` (pyenv on PATH), then under ~/.pyenv, pyenv's default root
#   3. `pyenv which pythonMAJOR.MINOR` (the active pyenv versions)
#   4. pythonMAJOR.MINOR in each PATH directory, in order (and, for a pyenv shims
#      directory, the versions of the pyenv root it belongs to)
#
# A candidate counts only if it runs and reports that version: a pyenv shim of a
# version that is not active ("pyenv: python3.13: command not found"), a dangling
# symlink or a mislabelled interpreter is skipped.
#
# Usage: hacking/find_python.sh 3.13
set -uo pipefail

version=${1:?usage: find_python.sh MAJOR.MINOR}
if [[ ! $version =~ ^[0-9]+\.[0-9]+$ ]]; then
    echo "find_python.sh: version must look like 3.13, got '$version'" >&2
    exit 2
fi
name=python$version

# Succeed when $1 is an interpreter of $version, printing the path it runs from (a
# pyenv shim that resolves prints the real interpreter, which venvs should link to).
try() {
    local candidate=$1 answer reported executable
    [[ -n $candidate && -f $candidate && -x $candidate ]] || return 1
    answer=$("$candidate" -c 'import sys; print("%d.%d" % sys.version_info[:2], sys.executable)' </dev/null 2>/dev/null) || return 1
    read -r reported executable <<<"$answer"
    [[ $reported == "$version" ]] || return 1
    printf '%s\n' "${executable:-$candidate}"
}

# Try the interpreters that pyenv root $1 holds for $version, newest release first.
try_root() {
    local root=$1 dir
    [[ -n $root && -d $root/versions ]] || return 1
    while IFS= read -r dir; do
        try "$dir/bin/$name" && return 0
    done < <(
        shopt -s nullglob
        # 3.13, 3.13.1, 3.13.0rc2, 3.13-dev; not other versions such as 3.130, nor virtualenvs.
        for dir in "$root/versions/$version" "$root/versions/$version".* "$root/versions/$version"-*; do
            [[ -d $dir ]] && printf '%s\n' "$dir"
        done | sort -V -r
    )
    return 1
}

pyenv_root=""
if command -v pyenv >/dev/null 2>&1; then
    pyenv_root=$(pyenv root 2>/dev/null) || pyenv_root=""
fi

try_root "${PYENV_ROOT:-}" && exit 0
[[ $pyenv_root != "${PYENV_ROOT:-}" ]] && try_root "$pyenv_root" && exit 0
if [[ -n ${HOME:-} && $HOME/.pyenv != "${PYENV_ROOT:-}" && $HOME/.pyenv != "$pyenv_root" ]]; then
    try_root "$HOME/.pyenv" && exit 0
fi

if command -v pyenv >/dev/null 2>&1; then
    try "$(pyenv which "$name" 2>/dev/null)" && exit 0
fi

IFS=: read -r -a path_dirs <<<"${PATH:-}"
for dir in "${path_dirs[@]}"; do
    try "${dir:-.}/$name" && exit 0
    # A pyenv shims directory whose pyenv is not set up in this shell: its root is next to it.
    [[ $dir == */shims ]] && try_root "${dir%/shims}" && exit 0
done
exit 1
