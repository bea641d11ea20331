#!/usr/bin/env bash
# Makes a release tarball of the worker from a commit (default HEAD): the tree of that commit exported as it is
# (no work-tree changes), its commit written into BuildCommit.swift (push_build_info{commit}), built in release
# mode with the Swift runtime linked statically, so the binary runs where no Swift is installed (it needs only
# the Debian libraries the README's install step lists: hiredis, nghttp2, OpenSSL, libcurl, jemalloc, ICU).
# Writes dist/push-worker-<VERSION>-linux-<arch>.tar.gz and dist/SHA256SUMS; prints the tarball's path last.
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
rm -rf "$work/src" "$work/$name"
mkdir -p "$work/src" "$root/dist"
git archive "$commit" | tar -x -C "$work/src"
printf '// Written by scripts/release.sh in the copy of the tree it builds (the commit of the release); never edited by hand.\nlet buildCommit = "%s"\n' \
  "$commit" > "$work/src/Sources/PushCore/Metrics/BuildCommit.swift"
echo "building $name from $commit (release, static Swift runtime; the first build takes several minutes)..." >&2
(cd "$work/src" && swift build -c release --static-swift-stdlib --product worker --scratch-path "$work/build" >&2)
binary="$work/build/release/worker"
mkdir -p "$work/$name/bin" "$work/$name/config" "$work/$name/deploy"
cp "$binary" "$work/$name/bin/worker"
strip "$work/$name/bin/worker" 2>/dev/null || true
cp "$work/src/config/worker.example.yaml" "$work/$name/config/"
cp -r "$work/src/deploy/systemd" "$work/$name/deploy/"
cp -r "$work/src/docs" "$work/src/schema" "$work/$name/"
cp "$work/src/LICENSE" "$work/src/README.md" "$work/src/CHANGELOG.md" "$work/src/VERSION" "$work/$name/"
tarball="$root/dist/$name.tar.gz"
tar -C "$work" --owner=0 --group=0 --numeric-owner -czf "$tarball" "$name"
(cd "$root/dist" && sha256sum "$name.tar.gz" > SHA256SUMS)
echo "$tarball"
