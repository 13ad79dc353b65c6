#!/usr/bin/env bash
# Galaxy's and Automation Hub's import checks on this collection, as an upload meets them: build the tarball
# from the staged copy this runs in (hacking/in_staged_copy.sh), then run galaxy-importer over it - the
# metadata and file checks, ansible-doc on every plugin, ansible-lint at the production profile -,
# offline and without a container (hacking/galaxy-importer.cfg). Any ERROR or WARNING line of the importer
# fails the check, as does a refused import.
#
#   check_importer.sh BIN_DIR     (BIN_DIR: a venv's bin holding galaxy-importer, ansible-galaxy, ansible-lint)
set -euo pipefail
bin=${1:?usage: check_importer.sh BIN_DIR}
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/modelarts-importer-XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/dist" "$work/run" "$work/ansible-tmp"

"$bin/ansible-galaxy" collection build --output-path "$work/dist" . >/dev/null
tarball=$(ls "$work"/dist/*.tar.gz)
echo "importer: $(basename "$tarball"), $(stat -c %s "$tarball") bytes"

# The importer runs ansible-doc and ansible-lint from PATH, writes importer_result.json to its working directory
# and keeps Ansible's temporary files under ANSIBLE_LOCAL_TMP (set in the configuration file to a placeholder).
sed "s|@ANSIBLE_LOCAL_TMP@|$work/ansible-tmp|" "$here/galaxy-importer.cfg" >"$work/galaxy-importer.cfg"
status=0
(
    cd "$work/run"
    export PATH="$bin:$PATH" GALAXY_IMPORTER_CONFIG="$work/galaxy-importer.cfg" HOME="$work/home" ANSIBLE_HOME="$work/home/.ansible"
    "$bin/python" -m galaxy_importer.main "$tarball"
) >"$work/importer.log" 2>&1 || status=$?
cat "$work/importer.log"
if [ "$status" -ne 0 ]; then
    echo "importer: the import failed (exit status $status)" >&2
    exit 1
fi
if grep -E '^(ERROR|WARNING|CRITICAL):' "$work/importer.log" >/dev/null; then
    echo "importer: the import passed with the findings above; Galaxy shows them to every user" >&2
    exit 1
fi
[ -s "$work/run/importer_result.json" ] || { echo "importer: no importer_result.json written" >&2; exit 1; }
echo "importer: accepted, no findings"
