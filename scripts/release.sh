#!/usr/bin/env bash
# Makes a release tarball of the worker from a commit (default HEAD): the tree of that commit exported as it is
# (no work-tree changes), its commit written into BuildCommit.swift (`worker --version`, push_build_info{commit}),
# built in release mode with the Swift runtime linked statically, so the binary runs where no Swift is installed.
# It needs only Debian libraries (hiredis, nghttp2, OpenSSL, libcurl, jemalloc, ICU): runtime-packages.txt in the
# tarball names their packages and the versions it was built with, from the binary's own list of libraries, and
# scripts/test-release.sh checks them; scripts/image.sh installs exactly those in the image.
# Writes dist/push-worker-<VERSION>-linux-<arch>.tar.gz and dist/SHA256SUMS (a new release's: scripts/image.sh adds
# the image's line); prints the tarball's path last.
# Usage: scripts/release.sh [COMMIT]
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
revision="${1:-HEAD}"
commit="$(git rev-parse --verify "$revision^{commit}")"
version="$(git show "$commit:VERSION" | tr -d '[:space:]')"
arch="$(uname -m)"
name="push-worker-$version-linux-$arch"
# A fixed place for the exported tree and its build, so a second release of the same commit builds incrementally.
work="$root/.build-release"

# The Debian package of a library path as ldd prints it. Debian 12 merged /lib into /usr/lib, but dpkg's database
# still names each file where its package put it (/lib/... for some, /usr/lib/... for others), so every spelling
# is asked.
package_of() {
  local path="$1" candidate owner
  for candidate in "$path" "$(readlink -f "$path")" "/usr$path" "${path#/usr}"; do
    owner="$(dpkg-query -S "$candidate" 2>/dev/null | head -1)" && [ -n "$owner" ] && { echo "${owner%%:*}"; return 0; }
  done
  return 1
}
# runtime-packages.txt: one package a line with the version this build linked against and what it is for. From
# the binary's own NEEDED entries only: the libraries those load come with their packages' dependencies.
runtime_packages() {
  local binary="$1" soname path package
  command -v dpkg-query >/dev/null || { echo "release.sh: dpkg-query not found: the runtime packages are Debian's" >&2; return 1; }
  declare -A sonames=()
  for soname in $(objdump -p "$binary" | awk '$1 == "NEEDED" { print $2 }'); do
    path="$(ldd "$binary" | awk -v name="$soname" '$1 == name && $2 == "=>" { print $3; exit }
      substr($1, length($1) - length(name)) == "/" name { print $1; exit }')"
    [ -n "$path" ] && [ "$path" != "not" ] || { echo "release.sh: $soname is not found on this machine" >&2; return 1; }
    package="$(package_of "$path")" || { echo "release.sh: no Debian package holds $path ($soname)" >&2; return 1; }
    sonames[$package]+="${sonames[$package]:+ }$soname"
  done
  # Not a library: the CA bundle the worker trusts for services configured without a ca_file.
  sonames[ca-certificates]="(the system CA bundle, for services without a ca_file)"
  echo "# The Debian 12 (bookworm) packages bin/worker needs at run time: package, the version it was built with, what for."
  echo "# Install them with: apt-get install --no-install-recommends \$(grep -v '^#' runtime-packages.txt | cut -d' ' -f1)"
  for package in $(printf '%s\n' "${!sonames[@]}" | sort); do
    echo "$package $(dpkg-query -W -f='${Version}' "$package") ${sonames[$package]}"
  done
}

rm -rf "$work/src" "$work/$name"
mkdir -p "$work/src" "$root/dist"
git archive "$commit" | tar -x -C "$work/src"
printf '// Written by scripts/release.sh in the copy of the tree it builds (the commit of the release); never edited by hand.\nlet buildCommit = "%s"\n' \
  "$commit" > "$work/src/Sources/worker/BuildCommit.swift"
echo "building $name from $commit (release, static Swift runtime; the first build takes several minutes)..." >&2
(cd "$work/src" && swift build -c release --static-swift-stdlib --product worker --scratch-path "$work/build" >&2)
binary="$work/build/release/worker"
mkdir -p "$work/$name/bin" "$work/$name/config" "$work/$name/deploy"
cp "$binary" "$work/$name/bin/worker"
strip "$work/$name/bin/worker" 2>/dev/null || true
cp "$work/src/config/worker.example.yaml" "$work/$name/config/"
cp -r "$work/src/deploy/systemd" "$work/$name/deploy/"
# The image's configuration (metrics on every address), so that scripts/image.sh builds from the tarball alone.
cp "$work/src/deploy/image-worker.yaml" "$work/$name/deploy/"
runtime_packages "$work/$name/bin/worker" > "$work/$name/runtime-packages.txt"
cp -r "$work/src/docs" "$work/src/schema" "$work/$name/"
cp "$work/src/LICENSE" "$work/src/README.md" "$work/src/CHANGELOG.md" "$work/src/VERSION" "$work/$name/"
tarball="$root/dist/$name.tar.gz"
tar -C "$work" --owner=0 --group=0 --numeric-owner -czf "$tarball" "$name"
(cd "$root/dist" && sha256sum "$name.tar.gz" > SHA256SUMS)
echo "$tarball"
