#!/usr/bin/env bash
# Copy the working tree to DEST/ansible_collections/modelarts/training, the
# layout ansible-test insists on (a symlink is not accepted), leaving out
# virtual environments, caches and test output. Prints the staged path.
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
dest=${1:?usage: stage_collection.sh DEST}
target="$dest/ansible_collections/modelarts/training"
rm -rf "$target"
mkdir -p "$target"
# Suites run side by side: one may create a directory here (docs/build, a venv) while another stages its
# copy. GNU tar then says "file changed as we read it" and exits 1; the copy is whole all the same (what
# changed is left out anyway), so that status alone is not a failure. Any other is.
tar -C "$src" --warning=no-file-changed \
    --exclude='./.venv*' --exclude=./.git --exclude=./.cache --exclude=./.ansible \
    --exclude=./tests/output --exclude=./benchmarks/results --exclude=./docs/build \
    --exclude='__pycache__' --exclude=.pytest_cache --exclude=.hypothesis --exclude=.ruff_cache \
    --exclude=./dist --exclude='./*.tar.gz' \
    -cf - . | tar -C "$target" -xf - || {
    statuses=("${PIPESTATUS[@]}")
    if [ "${statuses[0]}" -gt 1 ] || [ "${statuses[1]}" -ne 0 ]; then
        echo "stage_collection.sh: copying $src to $target failed" >&2
        exit 1
    fi
}
echo "$target"
