#!/usr/bin/env bash
# A real torch wheel as an image: the tree of scripts/bench-image.sh's seed
# container (build it first: WORKDIR/tree) with its torch replaced by the
# wheel's, as one gzip layer of an OCI layout. Then `fastpath facts` and
# `doctor` on --image against --root on the tree (must be identical), times
# and peak memory, and the floor (gzip -dc of the layer).
# Usage: scripts/bench-image-torch.sh TORCH.whl [WORKDIR]
#   e.g. TORCH.whl = torch-2.15.0-cp311-cp311-manylinux_2_28_x86_64.whl from PyPI
#   (pip download torch==2.15.0 --no-deps --python-version 3.11 --only-binary :all:)
set -euo pipefail
cd "$(dirname "$0")/.."
wheel=${1:?usage: bench-image-torch.sh TORCH.whl [WORKDIR]}
work=${2:-/tmp/fastpath-bench-image}
[ -d "$work/tree" ] || scripts/bench-image.sh "$work" >/dev/null
CGO_ENABLED=0 go build -o "$work/fastpath" ./cmd/fastpath
fp=$work/fastpath
t=$work/torch-image
rm -rf "$t" && mkdir -p "$t/oci/blobs/sha256"
cp -a "$work/tree" "$t/tree"
site=$t/tree/root/venv/lib/python3.12/site-packages
rm -rf "$site"/torch "$site"/torch-*.dist-info
python3 -c 'import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extractall(sys.argv[2])' "$wheel" "$site"
tar -C "$t/tree" --sort=name -cf - . | tee >(sha256sum | cut -d' ' -f1 >"$t/diffid") | gzip -6 >"$t/layer.tgz"
sleep 1
python3 - "$t" <<'PY'
import hashlib, json, os, sys
t = sys.argv[1]; blobs = os.path.join(t, "oci/blobs/sha256")
def sha(p):
    h = hashlib.sha256()
    with open(p, "rb") as f:
        for b in iter(lambda: f.read(1 << 20), b""): h.update(b)
    return h.hexdigest()
def blob(b):
    h = hashlib.sha256(b).hexdigest(); open(os.path.join(blobs, h), "wb").write(b); return "sha256:" + h, len(b)
d, size = sha(os.path.join(t, "layer.tgz")), os.path.getsize(os.path.join(t, "layer.tgz"))
os.rename(os.path.join(t, "layer.tgz"), os.path.join(blobs, d))
env = ["PATH=/root/venv/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "HOME=/root", "VIRTUAL_ENV=/root/venv"]
cd, cl = blob(json.dumps({"architecture": "amd64", "os": "linux", "config": {"Env": env},
    "rootfs": {"type": "layers", "diff_ids": ["sha256:" + open(os.path.join(t, "diffid")).read().strip()]}}).encode())
md, ml = blob(json.dumps({"schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json",
    "config": {"mediaType": "application/vnd.oci.image.config.v1+json", "digest": cd, "size": cl},
    "layers": [{"mediaType": "application/vnd.oci.image.layer.v1.tar+gzip", "digest": "sha256:" + d, "size": size}]}).encode())
json.dump({"schemaVersion": 2, "manifests": [{"mediaType": "application/vnd.oci.image.manifest.v1+json", "digest": md, "size": ml,
    "annotations": {"org.opencontainers.image.ref.name": "torch"}}]}, open(os.path.join(t, "oci/index.json"), "w"))
open(os.path.join(t, "oci/oci-layout"), "w").write('{"imageLayoutVersion":"1.0.0"}')
print("gzip layer: %d MB" % (size >> 20))
PY
E=(--env PATH=/root/venv/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin --env HOME=/root --env VIRTUAL_ENV=/root/venv)
for cmd in facts "doctor --json"; do
  /usr/bin/time -f "$cmd --image: %e s, %M KB peak" $fp $cmd --gpu 12.0 --image "$t/oci:torch" >"$t/image.json" || true
  /usr/bin/time -f "$cmd --root:  %e s, %M KB peak" $fp $cmd --gpu 12.0 --root "$t/tree" "${E[@]}" >"$t/root.json" || true
  python3 - "$t" <<'PY'
import json, sys
t = sys.argv[1]
a, b = (json.load(open(f"{t}/{n}.json")) for n in ("image", "root"))
for d in (a, b):
    d.pop("source", None); (d.get("facts") or {}).pop("source", None)
print("identical" if a == b else "DIFFERENT")
PY
done
layer=$(ls -S "$t"/oci/blobs/sha256/* | head -n1)
/usr/bin/time -f "floor (gzip -dc of the layer): %e s" gzip -dc "$layer" >/dev/null
