#!/usr/bin/env bash
# `make ee`: build the execution environment (EE) and the decision environment (DE) of this
# collection with ansible-builder and Podman, and run them against the emulator on this machine.
#
#   hacking/check_ee.sh VENV_PYTHON
#
# 1. The collection's EE metadata names files that exist; ansible-builder writes a build context
#    for both user-facing definitions (tests/ee/execution-environment.yml, decision-environment.yml).
# 2. Podman, runc and debootstrap are there, or installed when running as root
#    (hacking/ee/prerequisites.sh). Without them: one line saying what to install, and a skip, or
#    a failure under CI=true. CONTAINERS_CONF defaults to hacking/ee/containers.conf.
# 3. The collection tarball is built from the checkout (`ansible-galaxy collection build`).
# 4. The base image: Debian bookworm bootstrapped once and cached (hacking/ee/base_image.sh).
# 5. The images localhost/modelarts-training-ee:VERSION and localhost/modelarts-training-de:VERSION
#    are built from definitions derived from the user-facing ones (hacking/ee/local_definition.py).
# 6. tests/ee (pytest) runs inside them: the demo through ansible-navigator, ansible-doc for every
#    plugin, the AWX credential type's injectors, the event source under ansible-rulebook.
# 7. The image sizes and build times are printed; untagged build stages older than a day are removed.
#
# Work files go to .cache/ee (build logs included); the emulator runs on 127.0.0.1 only and every
# container a test starts is removed.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
python=${1:-python3}
bin=$(cd "$(dirname "$python")" && pwd)

is_ci() { case "${CI:-}" in [Tt][Rr][Uu][Ee] | 1) return 0 ;; *) return 1 ;; esac; }
now() { date +%s; }

# 1. Metadata and build contexts (no container engine needed).
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
for definition in execution-environment decision-environment; do
    "$bin/ansible-builder" create --file "tests/ee/$definition.yml" --context "$context/$definition" --output-filename Containerfile >/dev/null
    grep -q "modelarts.training" "$context/$definition/_build/requirements.yml" || { echo "tests/ee/$definition.yml: the build context does not install modelarts.training" >&2; exit 1; }
    grep -q "ansible-galaxy collection install" "$context/$definition/Containerfile" || { echo "tests/ee/$definition.yml: the Containerfile installs no collection" >&2; exit 1; }
done
echo "ee: tests/ee definitions: build contexts OK"

# 2. What pip cannot install.
export CONTAINERS_CONF=${CONTAINERS_CONF:-$root/hacking/ee/containers.conf}
status=0
reason=$(hacking/ee/prerequisites.sh) || status=$?
if [ "$status" -eq 3 ]; then
    if is_ci; then
        echo "ee: failed: $reason" >&2
        exit 1
    fi
    echo "ee: skipped: $reason"
    exit 0
elif [ "$status" -ne 0 ]; then
    echo "ee: failed: hacking/ee/prerequisites.sh exited $status" >&2
    exit 1
fi

version=$("$python" -c 'import yaml; print(yaml.safe_load(open("galaxy.yml"))["version"])')
ee_image=localhost/modelarts-training-ee:$version
de_image=localhost/modelarts-training-de:$version
work=$root/.cache/ee
mkdir -p "$work"
find "$work" -mindepth 1 -maxdepth 1 ! -name collection -exec rm -rf {} +
started=$(now)

# 3. The collection, built from the checkout (a staged copy leaves out venvs, caches and .git).
# ansible-galaxy stamps build times into the tarball: when its files are those of the last build
# (FILES.json lists every file's checksum), the last tarball is kept, and Podman reuses its layers.
staged=$(hacking/stage_collection.sh "$work/stage")
(cd "$staged" && "$bin/ansible-galaxy" collection build --force --output-path "$work/new" >/dev/null)
tarball=$work/collection/modelarts-training-$version.tar.gz
new=$work/new/$(basename "$tarball")
if [ -f "$tarball" ] && cmp -s <(tar -xOzf "$tarball" MANIFEST.json FILES.json) <(tar -xOzf "$new" MANIFEST.json FILES.json); then
    echo "ee: collection $(basename "$tarball") built from the checkout: the same files as the last build's tarball, which is kept"
else
    mkdir -p "$work/collection"
    rm -f "$work"/collection/*.tar.gz
    mv "$new" "$tarball"
    echo "ee: collection $(basename "$tarball") built from the checkout"
fi
rm -rf "$work/stage" "$work/new"

# 4. The base image (bootstrapped once, then cached).
base_started=$(now)
base_image=$(EE_HOST_PYTHON="$python" hacking/ee/base_image.sh "$work/base" | tail -n 1)
base_seconds=$(( $(now) - base_started ))

# 5. The images.
size_of() { podman image inspect --format '{{.Size}}' "$1" | awk '{ printf "%d MB", $1 / 1000000 }'; }
ee_seconds=0
de_seconds=0
build() {  # $1: ee or de, $2: source definition, $3: tag
    local dir="$work/$1" started log
    "$python" hacking/ee/local_definition.py "$2" "$dir/$1-local.yml" --base-image "$base_image" --collection "$tarball"
    log="$dir/build.log"
    started=$(now)
    echo "ee: building $3 from $2 (log: ${log#"$root"/})"
    if ! "$bin/ansible-builder" build --file "$dir/$1-local.yml" --context "$dir/context" --tag "$3" \
        --container-runtime podman --extra-build-cli-args=--network=host -v 3 >"$log" 2>&1; then
        tail -n 40 "$log" >&2
        echo "ee: failed: ansible-builder build of $3 (above; the whole log is $log)" >&2
        exit 1
    fi
    if [ "$1" = ee ]; then ee_seconds=$(( $(now) - started )); else de_seconds=$(( $(now) - started )); fi
}
build ee tests/ee/execution-environment.yml "$ee_image"
build de tests/ee/decision-environment.yml "$de_image"
build_seconds=$(( $(now) - started ))
# Each rebuild leaves the stages of the last one untagged. Those of the last day stay as Podman's layer
# cache (what makes a second run fast); older ones are removed.
podman image prune -f --filter until=24h >/dev/null 2>&1 || true
summary() {
    echo "ee: $ee_image: $(size_of "$ee_image"), built in ${ee_seconds} s"
    echo "ee: $de_image: $(size_of "$de_image"), built in ${de_seconds} s"
    echo "ee: base image $base_image: $(size_of "$base_image"), ready in ${base_seconds} s"
    echo "ee: build time ${build_seconds} s (collection, base image and both images)"
}
summary

# 6. Run them.
run_id=$(date +%s)-$$
# shellcheck disable=SC2329  # invoked by the trap
cleanup() {
    local ids
    ids=$(podman ps -a -q --filter "label=modelarts.training.ee-test=$run_id" 2>/dev/null || true)
    # shellcheck disable=SC2086  # one container id per word
    [ -z "$ids" ] || podman rm -f $ids >/dev/null 2>&1 || true
    rm -rf "$context"
}
trap cleanup EXIT
tests_started=$(now)
status=0
MODELARTS_EE_IMAGE=$ee_image MODELARTS_DE_IMAGE=$de_image MODELARTS_EE_RUN_ID=$run_id \
    "$python" -m pytest -q -p no:cacheprovider tests/ee || status=$?
echo
summary
echo "ee: tests in the images took $(( $(now) - tests_started )) s"
exit "$status"
