#!/usr/bin/env bash
# Check the execution environment files: the collection's own EE metadata points at
# files that exist, and ansible-builder turns the example EE definition into a
# build context that installs this collection and its Python requirements.
set -euo pipefail
cd "$(dirname "$0")/.."
python=${1:-python3}
"$python" - <<'PY'
import os, sys, yaml
meta = yaml.safe_load(open("meta/execution-environment.yml"))
for kind in ("python", "system"):
    path = meta["dependencies"][kind]
    if not os.path.isfile(path):
        sys.exit("meta/execution-environment.yml: dependencies.%s names %s, which does not exist" % (kind, path))
PY
context=$(mktemp -d "${TMPDIR:-/tmp}/modelarts-ee-XXXXXX")
trap 'rm -rf "$context"' EXIT
"$(dirname "$python")/ansible-builder" create --file tests/ee/execution-environment.yml --context "$context" --output-filename Containerfile >/dev/null
grep -q "modelarts.training" "$context/_build/requirements.yml" || { echo "the build context does not install modelarts.training" >&2; exit 1; }
grep -q "ansible-galaxy collection install" "$context/Containerfile" || { echo "the Containerfile installs no collection" >&2; exit 1; }
echo "execution environment: build context OK ($(wc -l < "$context/Containerfile") lines of Containerfile)"
