#include <torch/extension.h>
#include <cuda_fp16.h>
__global__ void axpy(float a, const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] += a * x[i];
}
void run(double a, torch::Tensor x, torch::Tensor y) {
  int n = x.numel();
  axpy<<<(n + 255) / 256, 256>>>((float)a, x.data_ptr<float>(), y.data_ptr<float>(), n);
}
PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def("run", &run); }
