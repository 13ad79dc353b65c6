#!/usr/bin/env bash
# What `make ee` needs that pip cannot install: Podman, an OCI runtime (runc) and debootstrap (the
# base image is bootstrapped locally: no container registry is reachable from CI), plus the
# /dev/mqueue directory ansible-navigator insists on with Podman.
#
#   hacking/ee/prerequisites.sh
#
# Run as root, it installs the missing Debian packages with apt-get and creates /dev/mqueue.
# Exit 0: ready. Exit 3: not available here; the single line on stdout says exactly what to install
# (hacking/check_ee.sh turns it into a skip, or a failure under CI=true). Progress goes to stderr.
set -uo pipefail

packages=(podman runc debootstrap)
missing=()
for package in "${packages[@]}"; do
    command -v "$package" >/dev/null 2>&1 || [ -x "/usr/sbin/$package" ] || missing+=("$package")
done

if [ ${#missing[@]} -gt 0 ]; then
    if [ "$(id -u)" -ne 0 ]; then
        echo "needs ${missing[*]}: as root, run apt-get install ${packages[*]} (or run make ee as root, which does)"
        exit 3
    fi
    if ! command -v apt-get >/dev/null 2>&1; then
        echo "needs ${missing[*]} (Debian packages ${packages[*]}); this machine has no apt-get to install them with"
        exit 3
    fi
    echo "ee: installing ${missing[*]} (apt-get install --no-install-recommends ${packages[*]})" >&2
    export DEBIAN_FRONTEND=noninteractive
    log=$(mktemp "${TMPDIR:-/tmp}/modelarts-ee-apt-XXXXXX")
    if ! { apt-get update -qq && apt-get install -y -qq --no-install-recommends "${packages[@]}"; } >"$log" 2>&1; then
        tail -n 20 "$log" >&2
        rm -f "$log"
        echo "needs ${missing[*]}, and apt-get install ${packages[*]} failed (above)"
        exit 3
    fi
    rm -f "$log"
fi

# ansible-runner starts Podman containers with --ipc=host, and ansible-navigator refuses to start
# without /dev/mqueue (systemd mounts it on most distributions; nothing does on the CI machines).
if [ ! -d /dev/mqueue ]; then
    if [ "$(id -u)" -ne 0 ]; then
        echo "needs the /dev/mqueue directory for ansible-navigator: as root, run mkdir /dev/mqueue && mount -t mqueue mqueue /dev/mqueue"
        exit 3
    fi
    echo "ee: creating /dev/mqueue (POSIX message queues, which ansible-navigator needs with Podman)" >&2
    mkdir -p /dev/mqueue
    mount -t mqueue mqueue /dev/mqueue 2>/dev/null || true
fi

if ! out=$(podman info --format '{{.Host.OCIRuntime.Name}}' 2>&1); then
    echo "podman is installed but 'podman info' fails: $(printf '%s' "$out" | head -n 1)"
    exit 3
fi
exit 0
