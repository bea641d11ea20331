#!/usr/bin/env bash
# Builds the worker's container image from a release tarball (scripts/release.sh) with no registry: a Debian 12
# (bookworm) root filesystem made by debootstrap from the Debian archive, with the archive's updates and security
# updates, the packages the tarball's runtime-packages.txt names (the libraries the static worker loads and the CA
# bundle), a user `push` (uid and gid 10001), and the tarball's worker. No emulator, no compiler, no Swift.
# Saves it as an OCI archive beside the tarball, dist/push-worker-<VERSION>-linux-<arch>.oci.tar (`podman load -i`,
# `skopeo copy oci-archive:FILE docker://REGISTRY/...`), adds its line to dist/SHA256SUMS and prints its path last.
# scripts/test-image.sh runs it. The Dockerfile stays for building from source where a registry is reachable.
#
# Two layers: the base (Debian and the packages) and the worker's files, so that an upgrade of the worker moves
# only the second. The base takes minutes (debootstrap), so it is cached as a tar file keyed by its recipe (this
# script's build_base), the architecture and the package list, and made again after 7 days so that security
# updates come in: in $IMAGE_BASE_CACHE, by default ~/.cache/push-pipeline/image-base (outside the checkout, so
# that a fresh clone, as CI makes, finds it). --fresh-base ignores the cache.
# The archive is the one this machine's apt uses for bookworm (apt-get indextargets), or DEBIAN_MIRROR and
# DEBIAN_SECURITY_MIRROR (URLs of the debian and debian-security archives). IMAGE_SOURCE, your repository's
# address, fills the org.opencontainers.image.source label. Needs root (debootstrap, chroot) and buildah:
# scripts/install-deps.sh --image.
# Usage: scripts/image.sh [--fresh-base] TARBALL
set -euo pipefail
fresh=0
if [ "${1:-}" = "--fresh-base" ]; then fresh=1; shift; fi
[ $# -eq 1 ] || { echo "usage: scripts/image.sh [--fresh-base] TARBALL" >&2; exit 2; }
tarball="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"
[ "$(id -u)" -eq 0 ] || { echo "image.sh: run as root (debootstrap and chroot need it)" >&2; exit 2; }
for tool in debootstrap buildah chroot; do
  command -v "$tool" >/dev/null || { echo "image.sh: $tool not found: run scripts/install-deps.sh --image" >&2; exit 2; }
done
suite=bookworm
debian_arch="$(dpkg --print-architecture)"
cache="${IMAGE_BASE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/push-pipeline/image-base}"
started=$SECONDS

# Everything of this run in one folder (the unpacked tarball, the base being made, buildah's storage, which is
# its own and not the machine's: vfs, plain files), removed at the end however the script ends.
work="$(mktemp -d /tmp/push-image-XXXXXX)"
buildah_() { TMPDIR="$work/tmp" buildah --root "$work/storage" --runroot "$work/runroot" --storage-driver vfs "$@"; }
# What debootstrap and apt say, shown only when the script fails.
log="$work/base.log"
cleanup() {
  local status=$?
  [ "$status" -eq 0 ] || [ ! -s "$log" ] || { echo "image.sh: the end of the base's log:" >&2; tail -30 "$log" >&2; }
  # A failure midway can leave the check's /proc mounted; buildah's containers and images live in $work.
  umount "$work/check/proc" 2>/dev/null || true
  buildah_ rm --all >/dev/null 2>&1 || true
  buildah_ rmi --all --force >/dev/null 2>&1 || true
  rm -rf --one-file-system "$work"
}
trap cleanup EXIT
mkdir -p "$work/tmp" "$cache"

tar -xzf "$tarball" -C "$work"
dir="$(find "$work" -maxdepth 1 -type d -name 'push-worker-*' | head -1)"
[ -n "$dir" ] && [ -x "$dir/bin/worker" ] && [ -s "$dir/runtime-packages.txt" ] && [ -s "$dir/deploy/image-worker.yaml" ] || {
  echo "image.sh: $tarball is not a release tarball of scripts/release.sh (bin/worker, runtime-packages.txt, deploy/image-worker.yaml)" >&2
  exit 2
}
name="$(basename "$dir")"
version="$(tr -d '[:space:]' < "$dir/VERSION")"
[ "${name##*-linux-}" = "$(uname -m)" ] || { echo "image.sh: $name is not for this machine's $(uname -m)" >&2; exit 2; }
packages="$(grep -v '^#' "$dir/runtime-packages.txt" | cut -d' ' -f1 | sort -u | xargs)"

# The archive's address for a suite, as this machine's apt has it (a deb822 or a one-line sources file alike).
archive_for() {
  apt-get indextargets --format '$(REPO_URI) $(RELEASE)' 'Identifier: Packages' 2>/dev/null | awk -v s="$1" '$2 == s { print $1; exit }'
}

# The base root filesystem into $1 (a folder), as a tar file $2. debootstrap's minbase (dpkg, apt, a shell) so
# that the packages come with their dependencies and the image's dpkg database tells scanners what is installed.
build_base() {
  local rootfs="$1" out="$2" mirror security updates valid_until=""
  # Everything below writes under $rootfs: never the machine's own root.
  [ -n "$rootfs" ] && [ "$(cd "$rootfs" && pwd)" != / ] || return 1
  mirror="${DEBIAN_MIRROR:-$(archive_for "$suite")}"
  updates="${DEBIAN_MIRROR:-$(archive_for "$suite-updates")}"
  security="${DEBIAN_SECURITY_MIRROR:-$(archive_for "$suite-security")}"
  [ -n "$mirror" ] && [ -n "$security" ] || {
    echo "image.sh: this machine's apt has no $suite or $suite-security archive: set DEBIAN_MIRROR and DEBIAN_SECURITY_MIRROR" >&2
    return 1
  }
  # As strict as this machine's apt about an archive's Release dates (a snapshot mirror's are in the past).
  eval "$(apt-config shell valid_until Acquire::Check-Valid-Until)"
  local apt=(chroot "$rootfs" apt-get -qq -o "Acquire::Check-Valid-Until=${valid_until:-true}")
  echo "image.sh: debootstrap $suite ($debian_arch, minbase) from $mirror (a few minutes)..." >&2
  debootstrap --variant=minbase --arch="$debian_arch" "$suite" "$rootfs" "$mirror" >>"$log" 2>&1
  # The suite's updates and security updates; no services start in the chroot (policy-rc.d); documentation,
  # manual pages and translations are left out of what dpkg installs from now on (copyright files stay).
  printf 'deb %s %s main\ndeb %s %s-updates main\ndeb %s %s-security main\n' \
    "$mirror" "$suite" "${updates:-$mirror}" "$suite" "$security" "$suite" > "$rootfs/etc/apt/sources.list"
  printf '#!/bin/sh\nexit 101\n' > "$rootfs/usr/sbin/policy-rc.d"
  chmod 755 "$rootfs/usr/sbin/policy-rc.d"
  printf '%s\n' 'path-exclude /usr/share/doc/*' 'path-include /usr/share/doc/*/copyright' 'path-exclude /usr/share/man/*' \
    'path-exclude /usr/share/info/*' 'path-exclude /usr/share/locale/*' 'path-exclude /usr/share/lintian/*' \
    > "$rootfs/etc/dpkg/dpkg.cfg.d/01-push-worker-slim"
  echo "image.sh: installing $packages with $suite's updates..." >&2
  "${apt[@]}" update >>"$log" 2>&1
  DEBIAN_FRONTEND=noninteractive "${apt[@]}" -y dist-upgrade >>"$log" 2>&1
  # shellcheck disable=SC2086 # one word a package
  DEBIAN_FRONTEND=noninteractive "${apt[@]}" -y install --no-install-recommends $packages >>"$log" 2>&1
  # A system account with the Dockerfile's uid, 10001, and a group of the same number (the Kubernetes manifests'
  # runAsUser, runAsGroup and fsGroup); useradd's warning that 10001 is above the system range is expected.
  chroot "$rootfs" groupadd --system --gid 10001 push >>"$log" 2>&1
  chroot "$rootfs" useradd --system --uid 10001 --gid push --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin push >>"$log" 2>&1
  "${apt[@]}" clean
  # What the image must not carry: this machine's archive address, name and resolver (debootstrap copies the
  # last two in), apt's package lists and logs, the files the exclusions above keep out of later installs, and
  # the device nodes debootstrap made (the container runtime provides /dev).
  rm -rf "${rootfs:?}/etc/apt/sources.list" "${rootfs:?}/usr/sbin/policy-rc.d" "${rootfs:?}"/var/lib/apt/lists/* \
    "${rootfs:?}"/var/cache/apt/*.bin "${rootfs:?}"/var/log/* "${rootfs:?}"/usr/share/man/* "${rootfs:?}"/usr/share/info/* \
    "${rootfs:?}"/usr/share/locale/* "${rootfs:?}"/usr/share/lintian/* "${rootfs:?}"/dev/* "${rootfs:?}"/run/* \
    "${rootfs:?}"/tmp/* "${rootfs:?}"/var/tmp/*
  find "$rootfs/usr/share/doc" -mindepth 1 ! -type d ! -name copyright -delete
  find "$rootfs/usr/share/doc" -mindepth 1 -type d -empty -delete
  : > "$rootfs/etc/hostname"
  : > "$rootfs/etc/resolv.conf"
  : > "$rootfs/etc/machine-id"
  chmod 644 "$rootfs/etc/hostname" "$rootfs/etc/resolv.conf" "$rootfs/etc/machine-id"
  tar --numeric-owner --xattrs -C "$rootfs" -cf "$out.tmp" .
  mv "$out.tmp" "$out"
}

key="$( { declare -f build_base archive_for; echo "$suite $debian_arch $packages"; } | sha256sum | cut -c1-16)"
base="$cache/base-$suite-$debian_arch-$key.tar"
if [ "$fresh" = 0 ] && [ -n "$(find "$base" -mtime -7 2>/dev/null)" ]; then
  echo "image.sh: base from the cache ($base, $(date -r "$base" '+%Y-%m-%d %H:%M'))" >&2
else
  mkdir -p "$work/base"
  build_base "$work/base" "$work/base.tar"
  # Another recipe's or an expired base is not used again: one base in the cache.
  rm -f "$cache"/base-*.tar
  mv "$work/base.tar" "$base"
  rm -rf "$work/base"
  echo "image.sh: base made in $((SECONDS - started)) s and cached ($(du -h "$base" | cut -f1))" >&2
fi

# Before the image is made: the worker runs on this base (every library found, the version the tarball says).
mkdir -p "$work/check"
tar --numeric-owner -xf "$base" -C "$work/check"
install -D -m 0755 "$dir/bin/worker" "$work/check/usr/local/bin/worker"
# The Swift runtime reads the command line from /proc/self/cmdline: without /proc the worker sees no arguments.
mount -t proc proc "$work/check/proc"
if chroot "$work/check" /usr/bin/ldd /usr/local/bin/worker | grep 'not found' >&2; then
  echo "image.sh: the base lacks libraries the worker loads (above)" >&2
  exit 1
fi
printed="$(chroot "$work/check" /usr/local/bin/worker --version)"
commit="$(sed -n 's/^.* (commit \([^)]*\))$/\1/p' <<<"$printed")"
[ "${printed%% *}" = "$version" ] && [ -n "$commit" ] || {
  echo "image.sh: the worker says '$printed', the tarball's VERSION is $version" >&2
  exit 1
}
umount "$work/check/proc"
rm -rf "$work/check"

echo "image.sh: assembling $name ($printed)..." >&2
base_container="$(buildah_ from --name push-worker-base scratch)"
buildah_ add "$base_container" "$base" / >/dev/null
buildah_ config --created-by "scripts/image.sh: debootstrap $suite minbase, its updates, $packages, user push" "$base_container"
# Named after the base's key: the image's manifest names its base (org.opencontainers.image.base.name).
buildah_ commit --quiet --rm "$base_container" "push-worker-base:$key" >/dev/null
container="$(buildah_ from --name push-worker "push-worker-base:$key")"
buildah_ copy --chmod 0755 "$container" "$dir/bin/worker" /usr/local/bin/worker >/dev/null
buildah_ copy --chmod 0644 "$container" "$dir/deploy/image-worker.yaml" /etc/push/worker.yaml >/dev/null
buildah_ copy --chmod 0644 "$container" "$dir/config/worker.example.yaml" /etc/push/worker.example.yaml >/dev/null
buildah_ copy --chmod 0644 "$container" "$dir/LICENSE" "$dir/VERSION" "$dir/runtime-packages.txt" /usr/share/doc/push-worker/ >/dev/null
# As the Dockerfile's image: user push by number (Kubernetes' runAsNonRoot checks a number), `worker run` with
# the image's configuration, the metrics port. The OCI format has no HEALTHCHECK: probes ask /healthz and
# /readyz (deploy/kubernetes), or run `worker health --config /etc/push/worker.yaml`.
buildah_ config --created-by "scripts/image.sh: the worker of $name" --user 10001:10001 --workingdir / --port 9464 \
  --entrypoint '["/usr/local/bin/worker"]' --cmd '["run", "--config", "/etc/push/worker.yaml"]' \
  --label org.opencontainers.image.title=push-worker \
  --label "org.opencontainers.image.description=Redis lists to APNs, FCM, Huawei and Xiaomi: the push pipeline's worker" \
  --label "org.opencontainers.image.version=$version" \
  --label "org.opencontainers.image.revision=$commit" \
  --label org.opencontainers.image.licenses=Apache-2.0 \
  --label "org.opencontainers.image.source=${IMAGE_SOURCE:-}" \
  "$container"
archive="$(dirname "$tarball")/$name.oci.tar"
rm -f "$archive"
buildah_ commit --quiet --rm --format oci --disable-compression=false "$container" "oci-archive:$archive:push-worker:$version" >/dev/null
# dist/SHA256SUMS: release.sh's tarball line, and this archive's in place of an earlier one of the same name.
sums="$(dirname "$archive")/SHA256SUMS"
{ grep -v "  $(basename "$archive")\$" "$sums" 2>/dev/null || true; (cd "$(dirname "$archive")" && sha256sum "$(basename "$archive")"); } > "$sums.tmp"
mv "$sums.tmp" "$sums"
echo "image.sh: $(basename "$archive"): $(du -h "$archive" | cut -f1) in $((SECONDS - started)) s" >&2
echo "$archive"
