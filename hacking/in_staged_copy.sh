#!/usr/bin/env bash
# Run a command inside a fresh staged copy of this checkout.
#
#   hacking/in_staged_copy.sh [SUBDIR] -- COMMAND [ARGS...]
#
# ansible-test needs the collection at .../ansible_collections/modelarts/training
# (a copy, not a symlink). Each call stages its own copy in a new temporary
# directory, points ANSIBLE_COLLECTIONS_PATH at it (so ansible-lint, molecule and
# playbooks use this checkout, never an installed copy), runs COMMAND in the
# copy (or in SUBDIR of it), and removes the copy afterwards. Separate runs
# never share or delete each other's copies.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
subdir=.
if [ "${1:-}" != "--" ]; then subdir=$1; shift; fi
[ "${1:-}" = "--" ] || { echo "usage: in_staged_copy.sh [SUBDIR] -- COMMAND..." >&2; exit 2; }
shift
root=$(mktemp -d "${TMPDIR:-/tmp}/modelarts.training-XXXXXX")
trap 'rm -rf "$root"' EXIT
staged=$("$here/stage_collection.sh" "$root") || exit 1
export ANSIBLE_COLLECTIONS_PATH="$root"
cd "$staged/$subdir" || exit 1
"$@"
