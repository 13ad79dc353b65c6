#!/usr/bin/env bash
# The base image of the local EE and DE builds: Debian bookworm bootstrapped with debootstrap and
# imported into Podman, because no container registry is reachable from CI. Users build from the
# public base image named in tests/ee/*.yml; hacking/ee/local_definition.py swaps in this one.
#
#   hacking/ee/base_image.sh WORKDIR      (prints the image name on its last line)
#
# The image holds python3 (with pip and venv), ca-certificates, and this machine's CA bundle
# (installed as a local CA, so that it survives update-ca-certificates) and pip index settings:
# pip traffic may be re-signed by a proxy that only the host's bundle trusts. Its tag is a hash
# of these inputs and of this script, so the image is bootstrapped once and reused while they stay
# the same (`podman image exists`). Run as root (debootstrap, chroot).
set -euo pipefail
work=${1:?usage: base_image.sh WORKDIR}
repository=localhost/modelarts-ee-base
suite=bookworm
python=${EE_HOST_PYTHON:-python3}

# The Debian mirror this machine's apt uses (deb822 .sources or one-line sources.list), else Debian's CDN.
mirror_of() {  # $1: "debian" or "debian-security"
    local found
    found=$(cat /etc/apt/sources.list.d/*.sources 2>/dev/null | awk -v want="$1" '
        /^URIs:/ { for (i = 2; i <= NF; i++) { n = split($i, p, "/"); last = p[n] == "" ? p[n-1] : p[n]; if (last == want) { print $i; exit } } }')
    if [ -z "$found" ]; then
        found=$(cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null | awk -v want="$1" '
            $1 == "deb" { for (i = 2; i <= NF; i++) if ($i ~ /^https?:/) { n = split($i, p, "/"); last = p[n] == "" ? p[n-1] : p[n]; if (last == want) { print $i; exit } } }')
    fi
    printf '%s\n' "${found:-http://deb.debian.org/$1}"
}
mirror=${EE_DEBIAN_MIRROR:-$(mirror_of debian)}
security=${EE_DEBIAN_SECURITY_MIRROR:-$(mirror_of debian-security)}
mirror=${mirror%/}
security=${security%/}

# The CA bundle the host trusts (what pip and apt on this machine verify against).
ca_bundle=""
for candidate in "${PIP_CERT:-}" "${SSL_CERT_FILE:-}" /etc/ssl/certs/ca-certificates.crt /etc/pki/tls/certs/ca-bundle.crt; do
    if [ -n "$candidate" ] && [ -s "$candidate" ]; then ca_bundle=$candidate; break; fi
done
[ -n "$ca_bundle" ] || { echo "base_image.sh: no CA bundle found on this machine" >&2; exit 1; }

# pip's index settings on this machine (pip config files and PIP_* variables), the http(s) ones only:
# file:// indexes and find-links are directories of this machine that the build cannot see.
pip_conf=$("$python" - <<'PY'
import subprocess, sys
try:
    out = subprocess.run([sys.executable, "-m", "pip", "config", "list"], capture_output=True, text=True, check=False).stdout
except OSError:
    out = ""
settings = {}
# Environment variables (":env:" keys) override the configuration files, as in pip itself.
for line in sorted(out.splitlines(), key=lambda line: line.startswith(":env:")):
    key, _, value = line.partition("=")
    name = key.rpartition(".")[2]
    value = value.strip().strip("'\"")
    if name in ("index-url", "extra-index-url", "trusted-host", "timeout", "default-timeout", "retries"):
        settings[name] = value
lines = ["[global]", "cert = /etc/ssl/certs/ca-certificates.crt"]
for name in ("index-url", "extra-index-url"):
    urls = [url for url in settings.get(name, "").split() if url.startswith(("http://", "https://"))]
    if urls:
        lines.append("%s = %s" % (name, " ".join(urls)))
for name in ("trusted-host", "timeout", "default-timeout", "retries"):
    if settings.get(name):
        lines.append("%s = %s" % (name, settings[name]))
print("\n".join(lines))
PY
)

tag=$( { cat "$0"; echo "$suite $mirror $security"; sha256sum <"$ca_bundle"; echo "$pip_conf"; } | sha256sum | cut -c1-12)
image="$repository:$suite-$tag"

if podman image exists "$image"; then
    echo "ee: base image $image: cached" >&2
    echo "$image"
    exit 0
fi

for tool in debootstrap chroot; do
    command -v "$tool" >/dev/null 2>&1 || [ -x "/usr/sbin/$tool" ] || { echo "base_image.sh: $tool is missing (hacking/ee/prerequisites.sh installs it)" >&2; exit 1; }
done
[ "$(id -u)" -eq 0 ] || { echo "base_image.sh: debootstrap needs root; run make ee as root" >&2; exit 1; }

start=$(date +%s)
rootfs="$work/rootfs"
rm -rf "$rootfs"
mkdir -p "$work"
log="$work/debootstrap.log"
echo "ee: bootstrapping Debian $suite from $mirror into $image (log: $log)" >&2
if ! debootstrap --variant=minbase --include=python3,python3-pip,python3-venv,ca-certificates "$suite" "$rootfs" "$mirror" >"$log" 2>&1; then
    tail -n 30 "$log" >&2
    echo "base_image.sh: debootstrap failed (above)" >&2
    exit 1
fi

# Leave documentation out of this and every later package install (the image only runs Ansible).
cat >"$rootfs/etc/dpkg/dpkg.cfg.d/01-modelarts-ee-nodoc" <<'EOF'
path-exclude /usr/share/doc/*
path-include /usr/share/doc/*/copyright
path-exclude /usr/share/man/*
path-exclude /usr/share/info/*
path-exclude /usr/share/locale/*
path-include /usr/share/locale/locale.alias
EOF
find "$rootfs/usr/share/doc" -mindepth 2 ! -name copyright ! -type d -delete 2>/dev/null || true
rm -rf "$rootfs"/usr/share/man/* "$rootfs"/usr/share/info/* "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/lib/apt/lists/*
# Some maintainer scripts (openjdk's update-alternatives) link man pages into this directory.
mkdir -p "$rootfs/usr/share/man/man1"
cat >"$rootfs/etc/apt/sources.list" <<EOF
deb $mirror $suite main
deb $mirror $suite-updates main
deb $security $suite-security main
EOF
# apt inside the build: no recommended packages, and no prompts.
printf 'APT::Install-Recommends "false";\nAPT::Install-Suggests "false";\n' >"$rootfs/etc/apt/apt.conf.d/01-modelarts-ee"

cp "$ca_bundle" "$rootfs/usr/local/share/ca-certificates/modelarts-ee-host-bundle.crt"
chroot "$rootfs" update-ca-certificates >>"$log" 2>&1
printf '%s\n' "$pip_conf" >"$rootfs/etc/pip.conf"

tar -C "$rootfs" -c . | podman import \
    --change 'CMD ["/bin/bash"]' \
    --change "LABEL org.opencontainers.image.description=\"Debian $suite for the local modelarts.training EE build (hacking/ee/base_image.sh)\"" \
    - "$image" >>"$log" 2>&1
rm -rf "$rootfs"
# Earlier base images (other inputs) are no longer used by `make ee`.
for old in $(podman images --format '{{.Repository}}:{{.Tag}}' --filter "reference=$repository" | grep -v -x -F "$image" || true); do
    podman rmi "$old" >/dev/null 2>&1 || true
done
echo "ee: base image $image bootstrapped in $(( $(date +%s) - start )) s" >&2
echo "$image"
