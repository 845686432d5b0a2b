#!/usr/bin/env bash
# Device evidence for issue 12 (packages): run on the H200 from the repo root.
#   bash .device/packages/run.sh
# Inputs (in .device/packages/): fastpath (this branch's build), bitsandbytes and
# xformers wheels (bitsandbytes repacked: see device-requests/packages.md).
# Output: $OUT/packages.log and $OUT/packages.tar.gz. Leaves the venv as it found it.
set -u
D=${D:-.device/packages}
FP=$(cd "$D" && pwd)/fastpath
V=${V:-/opt/torch/.venv}
PY=$V/bin/python3
OUT=${OUT:-/tmp/packages-out}
W=$(mktemp -d)
LOG=$OUT/packages.log
mkdir -p "$OUT" "$W/r"
exec > >(tee -a "$LOG") 2>&1
set -x
CU=$(command -v cuobjdump || echo /usr/local/cuda/bin/cuobjdump)
SITE=$($PY -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
step() { echo; echo "=== $* ($(date +%T))"; }

step "1. inspect --cuobjdump vs cuobjdump on every CUDA file in $V"
cat > "$W/one.sh" <<'EOS'
#!/usr/bin/env bash
# one.sh CU FP FILE -> prints "SAME|DIFF|NOCODE FILE"
CU=$1 FP=$2 f=$3
o=$(timeout 120 "$CU" --list-elf "$f" 2>&1; timeout 120 "$CU" --list-ptx "$f" 2>&1)
case "$o" in *"does not contain device code"*|*"Invalid fatbin header"*) echo "NOCODE $f"; exit 0;; esac
g=$("$FP" inspect --cuobjdump "$f" 2>&1 | grep -v '^fastpath: could not read')
if [ "$o" == "$g" ]; then echo "SAME $f"; else echo "DIFF $f"; diff <(echo "$o") <(echo "$g") | head -20 | sed 's/^/    /'; fi
EOS
chmod +x "$W/one.sh"
time (find "$V" -type f \( -name '*.so' -o -name '*.so.*' -o -name '*.cubin' -o -name '*.fatbin' \) -print0 |
  timeout 500 xargs -0 -n1 -P6 "$W/one.sh" "$CU" "$FP" > "$W/r/cuobjdump-compare.txt")
grep -c . "$W/r/cuobjdump-compare.txt"
echo "inspect --cuobjdump vs cuobjdump: $(grep -c '^SAME' "$W/r/cuobjdump-compare.txt") of $(grep -c '^\(SAME\|DIFF\)' "$W/r/cuobjdump-compare.txt") identical (files with CUDA code; $(grep -c '^NOCODE' "$W/r/cuobjdump-compare.txt") without)"
grep -A20 '^DIFF' "$W/r/cuobjdump-compare.txt" | head -80

step "2. doctor on the venv as it is"
timeout 60 "$FP" doctor --python "$PY" > "$W/r/doctor-base.txt" 2>&1; echo "exit $?"
timeout 60 "$FP" doctor --python "$PY" --json > "$W/r/doctor-base.json" 2>&1
cat "$W/r/doctor-base.txt"
for cc in 7.5 8.0 9.0 10.0 12.0; do
  timeout 60 "$FP" doctor --python "$PY" --gpu $cc > "$W/r/doctor-gpu-$cc.txt" 2>&1; echo "doctor --gpu $cc exit $?"
  grep -E '^\s*(ERROR|error|WARN|warning|INFO|info)' "$W/r/doctor-gpu-$cc.txt" | head -20
done

step "3. a torch nvidia-* library (libcudnn.so.9) moved away: doctor must name it (torch-libraries-missing)"
# cuDNN first: the system CUDA toolkit (/usr/local/cuda) has its own cuBLAS, which the
# loader may find through ld.so.conf; it has no cuDNN.
LIB=$(ls "$SITE"/nvidia/cudnn/lib/libcudnn.so.9 2>/dev/null | head -1)
[ -z "$LIB" ] && LIB=$(ls "$SITE"/nvidia/*/lib/libcublasLt.so.* 2>/dev/null | head -1)
ldconfig -p | grep -E "libcudnn.so|libcublasLt.so" | head -5
echo "moving $LIB"
if [ -n "$LIB" ]; then
  HIDE="$LIB.fastpath-moved"
  trap 'mv -f "$HIDE" "$LIB" 2>/dev/null' EXIT
  mv "$LIB" "$HIDE"
  timeout 60 "$FP" doctor --python "$PY" > "$W/r/doctor-missing-lib.txt" 2>&1; echo "doctor exit $?"
  timeout 60 "$FP" doctor --python "$PY" --json > "$W/r/doctor-missing-lib.json" 2>&1
  cat "$W/r/doctor-missing-lib.txt"
  grep -c torch-libraries-missing "$W/r/doctor-missing-lib.json"
  timeout 120 "$PY" -c 'import torch' > "$W/r/import-torch-missing-lib.txt" 2>&1; echo "import torch exit $?"
  tail -3 "$W/r/import-torch-missing-lib.txt"
  mv -f "$HIDE" "$LIB"; trap - EXIT
  ls -la "$LIB"
fi

step "4. bitsandbytes and xformers installed: doctor --live"
ls -la "$D"/*.whl
timeout 120 "$PY" -m pip install --no-deps --no-index --disable-pip-version-check "$D"/*.whl > "$W/r/pip-install.txt" 2>&1; echo "pip install exit $?"
tail -3 "$W/r/pip-install.txt"
timeout 300 "$FP" doctor --python "$PY" --live > "$W/r/doctor-live.txt" 2>&1; echo "doctor --live exit $?"
timeout 300 "$FP" doctor --python "$PY" --live --json > "$W/r/doctor-live.json" 2>&1
cat "$W/r/doctor-live.txt"
echo "static-live-disagree findings: $(grep -c '"static-live-disagree"' "$W/r/doctor-live.json")"
for cc in 8.0 9.0 10.0 12.0; do
  timeout 60 "$FP" doctor --python "$PY" --gpu $cc > "$W/r/doctor-pkgs-gpu-$cc.txt" 2>&1; echo "doctor (with packages) --gpu $cc exit $?"
done
# What the packages do when really imported and run on the GPU (the ground truth).
timeout 300 "$PY" - > "$W/r/live-truth.txt" 2>&1 <<'EOP'
import traceback
for name, code in [
    ("bitsandbytes", "import bitsandbytes as bnb, torch\nfrom bitsandbytes.functional import quantize_4bit\nx=torch.randn(64,64,device='cuda',dtype=torch.float16)\nq,s=quantize_4bit(x)\ntorch.cuda.synchronize()\nprint('bnb', bnb.__version__, 'quantize_4bit ok', q.shape, bnb.cextension.lib)"),
    ("xformers", "import xformers, xformers.ops as xops, torch\nq=torch.randn(1,16,2,64,device='cuda',dtype=torch.float16)\nprint('xformers', xformers.__version__)\nprint(xops.memory_efficient_attention(q,q,q).shape)"),
    ("xformers._C", "import xformers._C"),
]:
    print("==", name)
    try:
        exec(code, {})
    except BaseException:
        traceback.print_exc(limit=3)
EOP
cat "$W/r/live-truth.txt"
timeout 120 "$PY" -m pip uninstall -y bitsandbytes xformers > "$W/r/pip-uninstall.txt" 2>&1; echo "pip uninstall exit $?"

step "done"
cp "$LOG" "$W/r/" 2>/dev/null
tar -czf "$OUT/packages.tar.gz" -C "$W" r
ls -la "$OUT"
