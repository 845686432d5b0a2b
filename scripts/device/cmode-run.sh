#!/usr/bin/env bash
# Does a --compress-mode=size build whose only code for the GPU is PTX really
# run there, as `fastpath inspect --gpu` now says (docs/inspect.md,
# "Compressed cubins")? On the H200 (9.0), from the repo root:
#   bash scripts/device/cmode-run.sh NEW_BIN BASE_BIN OUTDIR
# Builds internal/fatbin/testdata/real/src/axpy.cu and a host main of its own
# with build.sh's cmode_size flags: SASS for sm_80 only, PTX for compute_90;
# the fatbins that hold no kernels have sm_80 only. Runs it (the driver JITs
# the PTX), then asks both fastpath builds and cuobjdump about it.
set -uo pipefail
new=$1 base=$2 out=$3
mkdir -p "$out"
w=$(mktemp -d)
cat > "$w/main.cu" <<'CU'
#include <cstdio>
#include <cuda_runtime.h>
extern "C" __global__ void axpy(float a, const float *x, float *y, int n);
int main() {
  const int n = 1 << 20;
  float *x, *y;
  cudaMallocManaged(&x, n * sizeof(float));
  cudaMallocManaged(&y, n * sizeof(float));
  for (int i = 0; i < n; i++) { x[i] = 1.0f; y[i] = 2.0f; }
  axpy<<<(n + 255) / 256, 256>>>(3.0f, x, y, n);
  cudaError_t e = cudaDeviceSynchronize();
  if (e == cudaSuccess) e = cudaGetLastError();
  int bad = 0;
  for (int i = 0; i < n; i++) if (y[i] != 5.0f) bad++;
  printf("launch: %s; wrong results: %d of %d\n", cudaGetErrorString(e), bad, n);
  return e != cudaSuccess || bad != 0;
}
CU
flags="--compress-mode=size -gencode arch=compute_80,code=sm_80 -gencode arch=compute_90,code=compute_90"
{
  echo "== $(hostname) $(date -u +%FT%TZ)"
  nvcc --version | tail -2
  nvidia-smi --query-gpu=name,compute_cap,driver_version --format=csv,noheader
  echo "== nvcc $flags main.cu axpy.cu"
  nvcc $flags -o "$w/cmode_run" "$w/main.cu" internal/fatbin/testdata/real/src/axpy.cu 2>&1
  echo "== run on the GPU"
  "$w/cmode_run"; echo "exit $?"
  echo "== cuobjdump --list-elf --list-ptx"
  cuobjdump --list-elf --list-ptx "$w/cmode_run" 2>&1
  echo "== this build: fastpath inspect --gpu 9.0"
  "$new" inspect --gpu 9.0 --width 200 "$w/cmode_run"; echo "exit $?"
  echo "== base build: fastpath inspect --gpu 9.0"
  "$base" inspect --gpu 9.0 --width 200 "$w/cmode_run"; echo "exit $?"
} > "$out/cmode-run.log" 2>&1
cat "$out/cmode-run.log"
