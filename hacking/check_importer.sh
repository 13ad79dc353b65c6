#!/usr/bin/env bash
# Galaxy's and Automation Hub's import checks on this collection, as an upload meets them: build the tarball
# from the staged copy this runs in (hacking/in_staged_copy.sh), then run galaxy-importer over it - the
# metadata and file checks, ansible-doc on every plugin, ansible-lint at the production profile -,
# offline and without a container (hacking/galaxy-importer.cfg). Any ERROR or WARNING line of the importer
# fails the check, as does a refused import.
#
# One exception, for loaded CI machines: galaxy-importer gives ansible-lint a fixed 180 s of wall-clock time and
# logs "ERROR: Timeout on call to ansible-lint" when it takes longer (two cores under a load of 11-20 did). The
# lint's verdict is what this check is for, so then the very command the importer ran (its "CMD:" debug line)
# runs again on the same tarball without that limit, and its findings decide; its CPU time is printed, the
# figure that says how far the collection is from the limit on Galaxy's own machines.
#
#   check_importer.sh BIN_DIR     (BIN_DIR: a venv's bin holding galaxy-importer, ansible-galaxy, ansible-lint)
set -euo pipefail
bin=${1:?usage: check_importer.sh BIN_DIR}
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/modelarts-importer-XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/dist" "$work/run" "$work/ansible-tmp"

# lint_again 'DEBUG: CMD: /usr/bin/env VAR=... ansible-lint ARGS...': run ansible-lint with the importer's ARGS on
# the tarball, unpacked as the importer unpacks it, without a time limit; exit 1 on any finding.
lint_again() {
    local words=() word args=() seen='' user system
    read -ra words <<<"${1#DEBUG: CMD: }"
    [ "${#words[@]}" -gt 0 ] || { echo "importer: ansible-lint timed out and the importer's command line was not logged" >&2; exit 1; }
    for word in "${words[@]}"; do
        if [ -n "$seen" ]; then args+=("$word"); elif [ "$word" = ansible-lint ]; then seen=1; fi
    done
    echo "importer: ansible-lint outlived galaxy-importer's fixed 180 s here (load average $(cut -d' ' -f1-3 /proc/loadavg));" \
        "running the importer's command again without the limit: ansible-lint ${args[*]}"
    mkdir -p "$work/lint/ansible_collections/modelarts/training"
    tar -xzf "$tarball" -C "$work/lint/ansible_collections/modelarts/training"
    local began=$SECONDS rc
    (
        cd "$work/lint/ansible_collections/modelarts/training"
        status=0
        env PATH="$bin:$PATH" HOME="$work/home" ANSIBLE_HOME="$work/home/.ansible" ANSIBLE_COLLECTIONS_PATH="$work/lint" \
            ANSIBLE_LOCAL_TEMP="$work/ansible-tmp" XDG_CACHE_HOME="$work/ansible-tmp" \
            "$bin/ansible-lint" "${args[@]}" >"$work/lint.out" 2>"$work/lint.err" || status=$?
        echo "$status" >"$work/lint.rc"
        times >"$work/lint.cpu" # its second line: this subshell's children, the lint alone (not in a pipe: a fork has none)
    )
    rc=$(cat "$work/lint.rc")
    read -r user system < <(tail -n 1 "$work/lint.cpu")
    echo "importer: ansible-lint again: exit status $rc, $(wc -l <"$work/lint.out") finding lines;" \
        "$((SECONDS - began)) s elapsed, CPU $user user + $system system"
    if [ "$rc" -ne 0 ] || [ -s "$work/lint.out" ]; then
        cat "$work/lint.out" "$work/lint.err"
        echo "importer: ansible-lint, run as the importer runs it, found the above" >&2
        exit 1
    fi
}

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
grep -v '^DEBUG: ' "$work/importer.log" || true
if [ "$status" -ne 0 ]; then
    echo "importer: the import failed (exit status $status)" >&2
    exit 1
fi
judged=$(cat "$work/importer.log")
if grep -qxF 'ERROR: Timeout on call to ansible-lint' <<<"$judged"; then
    # What the importer logged of the lint it cut short (the killed process's partial output, its broken-pipe
    # traceback) says nothing of the collection: the lint run again without the limit replaces it.
    lint_again "$(grep -m1 '^DEBUG: CMD: .*ansible-lint ' <<<"$judged" || true)"
    judged=$(sed '/^Linting collection via ansible-lint/,/^\.\.\.ansible-lint run complete$/d' <<<"$judged")
fi
findings=$(grep -E '^(ERROR|WARNING|CRITICAL):' <<<"$judged" || true)
if [ -n "$findings" ]; then
    echo "importer: the import passed with the findings above; Galaxy shows them to every user" >&2
    exit 1
fi
[ -s "$work/run/importer_result.json" ] || { echo "importer: no importer_result.json written" >&2; exit 1; }
echo "importer: accepted, no findings"
