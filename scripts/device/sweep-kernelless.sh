#!/usr/bin/env bash
# Does a fatbin container without kernels (the one nvcc's default static cudart adds,
# holding SASS for the -gencode real targets and no PTX) stop a program on a GPU it
# has no code for? `fastpath inspect --gpu 9.0` counts it: for a build with sm_75 SASS
# and compute_75 PTX it says "no kernel image" on an H200, while the kernels themselves
# JIT from compute_75. This builds three tiny programs with the H200's nvcc and runs
# each under lazy and eager module loading:
#   plain  nvcc default (sm_75 + compute_75)          kernels JIT on 9.0: fastpath says no-kernel-image
#   ptx80  sm_80 SASS + compute_80 PTX                 the same with another target
#   sass80 sm_80 SASS only                             really fails on 9.0 (control)
#   shared plain with -cudart shared                   (also two containers, built on this VM with nvcc 13.0.88)
# Run from the repo root: bash .device/sweep/run.sh   Writes $OUT/sweep.log.
set -u
D=.device/sweep
OUT=${OUT:-/tmp/sweep-out}
mkdir -p "$OUT"
exec > "$OUT/sweep.log" 2>&1
set -x
FP=$D/fastpath
chmod +x "$FP" 2>/dev/null
NVCC=${NVCC:-/usr/local/cuda/bin/nvcc}
nvidia-smi --query-gpu=name,compute_cap,driver_version --format=csv,noheader
"$NVCC" --version | tail -2
T=$(mktemp -d)
cat > "$T/t.cu" <<'EOF'
#include <cstdio>
extern "C" __global__ void axpy(float a, const float *x, float *y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}
int main() {
  const int n = 1024;
  float *x, *y;
  if (cudaMalloc(&x, n * sizeof(float)) != cudaSuccess || cudaMalloc(&y, n * sizeof(float)) != cudaSuccess) { printf("RESULT malloc failed\n"); return 2; }
  cudaMemset(x, 0, n * sizeof(float));
  cudaMemset(y, 0, n * sizeof(float));
  axpy<<<(n + 255) / 256, 256>>>(2.0f, x, y, n);
  cudaError_t e = cudaGetLastError();
  if (e == cudaSuccess) e = cudaDeviceSynchronize();
  printf("RESULT %s\n", e == cudaSuccess ? "ran" : cudaGetErrorString(e));
  return e == cudaSuccess ? 0 : 1;
}
EOF
cd "$T" || exit 1
timeout 300 "$NVCC" -o plain t.cu
timeout 300 "$NVCC" -o ptx80 -gencode arch=compute_80,code=sm_80 -gencode arch=compute_80,code=compute_80 t.cu
timeout 300 "$NVCC" -o sass80 -gencode arch=compute_80,code=sm_80 t.cu
timeout 300 "$NVCC" -o shared -cudart shared t.cu
cd - >/dev/null
set +x
for b in plain ptx80 sass80 shared; do
  echo "== $b"
  [ -x "$T/$b" ] || { echo "not built"; continue; }
  "$FP" inspect --cuobjdump "$T/$b" 2>&1 | sed 's/^/   cuobjdump: /'
  "$FP" inspect --gpu 9.0 "$T/$b" 2>&1 | tail -n +3 | sed 's/^/   fastpath: /'
  [ -x "$D/fastpath-main" ] && "$D/fastpath-main" inspect --gpu 9.0 "$T/$b" 2>&1 | tail -n +4 | sed 's/^/   fastpath (main): /'
  for mode in LAZY EAGER; do
    echo "   $mode: $(LD_LIBRARY_PATH=$(dirname "$NVCC")/../lib64:${LD_LIBRARY_PATH:-} CUDA_MODULE_LOADING=$mode CUDA_CACHE_DISABLE=1 timeout 60 "$T/$b" 2>&1 | tail -1)"
  done
done
rm -rf "$T"
