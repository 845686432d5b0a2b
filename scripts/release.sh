#!/usr/bin/env bash
# Builds fastpath's static release binaries and their checksums:
#   DIST/fastpath-linux-amd64, DIST/fastpath-linux-arm64, DIST/SHA256SUMS
# (DIST defaults to dist/). CGO_ENABLED=0 and -trimpath: one static binary
# per architecture that starts in any Linux container, glibc or musl, and
# builds the same bytes from the same commit. Each binary is checked to be
# static (`file`, and `ldd` where it can run it) before its checksum is written.
#
#   scripts/release.sh [DIST]          # build, check, checksum
#   scripts/release.sh --names         # print the artifact names, build nothing
#   VERSION=v0.2.0 scripts/release.sh  # the version --version prints (default: git describe)
set -euo pipefail
cd "$(dirname "$0")/.."
arches=(amd64 arm64)
if [ "${1:-}" = "--names" ]; then
  for arch in "${arches[@]}"; do echo "fastpath-linux-$arch"; done
  echo SHA256SUMS
  exit 0
fi
dist=${1:-dist}
version=${VERSION:-$(git describe --tags --always --dirty 2>/dev/null || echo 0.1.0-dev)}
mkdir -p "$dist"
for arch in "${arches[@]}"; do
  out="$dist/fastpath-linux-$arch"
  echo "building $out ($version)"
  CGO_ENABLED=0 GOOS=linux GOARCH=$arch go build -trimpath -buildvcs=false \
    -ldflags "-s -w -X github.com/fastpath-dev/fastpath/internal/cli.Version=$version" \
    -o "$out" ./cmd/fastpath
  # Static: no program interpreter, no shared libraries.
  if command -v file >/dev/null; then
    desc=$(file -b "$out")
    echo "  file: $desc"
    case "$desc" in
      *"statically linked"*) ;;
      *) echo "release: $out is not statically linked: $desc" >&2; exit 1 ;;
    esac
  else
    echo "  (no file(1): relying on readelf)"
  fi
  if command -v readelf >/dev/null && readelf -lW "$out" | grep -q 'INTERP'; then
    echo "release: $out has a program interpreter (dynamically linked)" >&2; exit 1
  fi
  # ldd can only inspect binaries of this machine's architecture.
  if [ "$(go env GOARCH)" = "$arch" ] && command -v ldd >/dev/null; then
    if ldd_out=$(ldd "$out" 2>&1); then
      echo "release: ldd lists shared libraries for $out:" >&2; echo "$ldd_out" >&2; exit 1
    fi
    echo "  ldd: $ldd_out"
  fi
done
( cd "$dist" && sha256sum "${arches[@]/#/fastpath-linux-}" > SHA256SUMS && sha256sum -c SHA256SUMS )
ls -l "$dist"
