#!/usr/bin/env bash
# Holds `fastpath inspect --gpu 9.0` to the CUDA driver on the H200: each fatbin
# container staged in .device/sweep/containers/ (cut out of real PyPI wheels'
# .nv_fatbin by the sweep: faiss-gpu-cu12 1.14.1.post1, torchao 0.18.0, ctranslate2
# 4.8.5, cumm-cu126 0.8.2, spconv-cu126 2.3.8, fbgemm-gpu-genai 1.9.0, catboost
# 1.2.10, cupy-cuda13x 14.2.0, xgboost 3.4.1, torchaudio 2.11.1) is judged by
# fastpath for the GPU it runs on and loaded by cuModuleLoadData (eager loading, no
# JIT cache): a verdict of native/family/ptx-jit must load (CUDA_SUCCESS), and
# no-kernel-image must fail with CUDA_ERROR_NO_BINARY_FOR_GPU (209).
# Run from the repo root: bash .device/sweep/run.sh   Writes $OUT/sweep.log.
set -u
D=.device/sweep
OUT=${OUT:-/tmp/sweep-out}
mkdir -p "$OUT"
exec > "$OUT/sweep.log" 2>&1
set -x
FP=$D/fastpath
chmod +x "$FP" 2>/dev/null
nvidia-smi --query-gpu=name,compute_cap,driver_version --format=csv,noheader
cc=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -1 | tr -d ' ')
cc=${cc:-9.0}
"$FP" --version
cat > /tmp/sweep-load.py <<'EOF'
import ctypes, sys, time
cuda = ctypes.CDLL("libcuda.so.1")
def ck(r, what):
    if r != 0:
        print("SETUP-FAIL", what, r); sys.exit(3)
ck(cuda.cuInit(0), "cuInit")
dev = ctypes.c_int(); ck(cuda.cuDeviceGet(ctypes.byref(dev), 0), "cuDeviceGet")
ctx = ctypes.c_void_p(); ck(cuda.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev), "retain")
ck(cuda.cuCtxSetCurrent(ctx), "setcurrent")
data = open(sys.argv[1], "rb").read()
buf = ctypes.create_string_buffer(data, len(data))
mod = ctypes.c_void_p()
t = time.time()
r = cuda.cuModuleLoadData(ctypes.byref(mod), buf)
ms = (time.time() - t) * 1000
if r == 0:
    cuda.cuModuleUnload(mod)
print(r, "%.0f" % ms)
EOF
set +x
agree=0; disagree=0; n=0
printf "%-58s %-16s %-6s %s\n" CONTAINER FASTPATH CUDA LOAD_MS
for f in "$D"/containers/*.fatbin; do
  n=$((n+1))
  v=$(timeout 30 "$FP" inspect --gpu "$cc" --json "$f" | python3 -c 'import json,sys; print(json.load(sys.stdin)["files"][0]["verdicts"][0]["verdict"])' 2>/dev/null)
  res=$(CUDA_MODULE_LOADING=EAGER CUDA_CACHE_DISABLE=1 timeout 120 python3 /tmp/sweep-load.py "$f" 2>&1 | tail -1)
  rc=${res%% *}; ms=${res#* }
  case "$v:$rc" in
    native:0|family:0|ptx-jit:0|no-kernel-image:209) ok=agree; agree=$((agree+1)) ;;
    *) ok=DISAGREE; disagree=$((disagree+1)) ;;
  esac
  printf "%-58s %-16s %-6s %-8s %s\n" "$(basename "$f")" "$v" "$rc" "$ms" "$ok"
done
echo "fastpath inspect --gpu $cc vs cuModuleLoadData: $agree of $n agree, $disagree disagree"
