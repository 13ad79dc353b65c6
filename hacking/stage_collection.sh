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
tar -C "$src" \
    --exclude='./.venv*' --exclude=./.git --exclude=./.cache --exclude=./.ansible \
    --exclude=./tests/output --exclude=./benchmarks/results --exclude=./docs/build \
    --exclude='__pycache__' --exclude=.pytest_cache --exclude=.hypothesis --exclude=.ruff_cache \
    -cf - . | tar -C "$target" -xf -
echo "$target"
