// A tiny kernel of fastpath's own, compiled several ways by build.sh so the
// fatbin reader is tested on real nvcc output against real cuobjdump output.
extern "C" __global__ void axpy(float a, const float *x, float *y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}

// A second kernel, so objects hold more than one function.
extern "C" __global__ void scale(float a, float *y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] *= a;
}
