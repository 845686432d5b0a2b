#!/usr/bin/env bash
# Times `fastpath facts --image` on each image kind of
# TestToolsImagesMatchUnpackedRoot (300 MB each: gzip, zstd, uncompressed,
# docker-archive, whiteouts, uv hard links) against:
#   - `fastpath facts --root` on the same image unpacked by umoci,
#   - `umoci unpack` of the image (into a fresh folder),
#   - the floor: one decompression pass over the image's layers
#     (gzip -dc / zstd -dc / cat of each layer blob to /dev/null).
# Best of RUNS runs (default 3) for each; peak memory (max RSS) from
# /usr/bin/time. Needs umoci, skopeo, gzip, zstd, python3.
# Usage: scripts/bench-image.sh [WORKDIR]   (default /tmp/fastpath-bench-image)
#   The images are built once into WORKDIR by the Go test and reused.
set -euo pipefail
cd "$(dirname "$0")/.."
work=${1:-/tmp/fastpath-bench-image}
runs=${RUNS:-3}
mkdir -p "$work"
if [ ! -f "$work/oci/index.json" ] || [ ! -f "$work/image-docker-archive.tar" ]; then
  FASTPATH_IMAGE_KEEP=$work go test -count=1 -run TestToolsImagesMatchUnpackedRoot ./internal/cli/ >/dev/null
fi
CGO_ENABLED=0 go build -o "$work/fastpath" ./cmd/fastpath
fp=$work/fastpath
env_flags=(--env PATH=/root/venv/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin --env HOME=/root --env VIRTUAL_ENV=/root/venv)

# best CMD...: prints "SECONDS MAXRSS_MB" of the fastest of $runs runs.
best() {
  local bs= bm=
  for _ in $(seq "$runs"); do
    /usr/bin/time -f '%e %M' -o "$work/time.out" "$@" >/dev/null 2>&1 || true
    read -r s m < <(tail -n1 "$work/time.out")
    if [ -z "$bs" ] || awk "BEGIN{exit !($s < $bs)}"; then bs=$s; bm=$m; fi
  done
  printf '%s %d' "$bs" $((bm / 1024))
}

# layers TAG: the layer blob paths of TAG in the layout, bottom first.
layers() {
  python3 - "$work/oci" "$1" <<'PY'
import json, sys, os
oci, tag = sys.argv[1], sys.argv[2]
blob = lambda d: os.path.join(oci, "blobs", *d.split(":"))
for m in json.load(open(os.path.join(oci, "index.json")))["manifests"]:
    if m.get("annotations", {}).get("org.opencontainers.image.ref.name") == tag:
        for l in json.load(open(blob(m["digest"])))["layers"]:
            print(blob(l["digest"]))
PY
}

floor() {
  local tag=$1
  if [ "$tag" = docker-archive ]; then
    cat "$work/image-docker-archive.tar" >/dev/null
    return
  fi
  for l in $(layers "$tag"); do
    case $(head -c4 "$l" | od -An -tx1 | tr -d ' ') in
      1f8b*) gzip -dc "$l" >/dev/null ;;
      28b52ffd) zstd -dc "$l" >/dev/null ;;
      *) cat "$l" >/dev/null ;;
    esac
  done
}
export -f floor layers
export work

printf '%-15s %9s %9s %9s %9s %9s %9s %7s\n' kind image_s image_MB root_s root_MB unpack_s floor_s img/floor
for kind in gzip zstd uncompressed docker-archive whiteouts uv-hardlinks; do
  ref=$work/oci:$kind
  [ "$kind" = docker-archive ] && ref=$work/image-docker-archive.tar
  src=$kind
  case $kind in zstd|uncompressed|docker-archive) src=gzip ;; esac  # the same layer tars
  rootfs=$work/unpacked-$src/rootfs
  read -r is im <<<"$(best "$fp" facts --image "$ref")"
  read -r rs rm <<<"$(best "$fp" facts --root "$rootfs" "${env_flags[@]}")"
  us=-
  if [ "$kind" != zstd ] && [ "$kind" != docker-archive ]; then  # umoci 0.4 reads neither
    rm -rf "$work/bench-unpack"
    /usr/bin/time -f '%e' -o "$work/time.out" umoci unpack --rootless --image "$work/oci:$kind" "$work/bench-unpack" >/dev/null 2>&1 || true
    us=$(tail -n1 "$work/time.out")
    rm -rf "$work/bench-unpack"
  fi
  read -r fs _ <<<"$(best bash -c "floor $kind")"
  ratio=$(awk "BEGIN{ if ($fs > 0) printf \"%.2f\", $is/$fs; else print \"-\" }")
  printf '%-15s %9s %9s %9s %9s %9s %9s %7s\n' "$kind" "$is" "$im" "$rs" "$rm" "$us" "$fs" "$ratio"
done
