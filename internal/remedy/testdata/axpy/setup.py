# A tiny torch CUDA extension: what TestPipCompilerBuildsTorchExtensionNetwork
# builds with NVIDIA's CUDA 13 pip compiler (compile and link; no GPU needed).
from setuptools import setup
from torch.utils.cpp_extension import BuildExtension, CUDAExtension

setup(
    name="fastpath_axpy",
    ext_modules=[CUDAExtension("fastpath_axpy", ["axpy.cu"], extra_compile_args={"nvcc": ["-gencode", "arch=compute_90,code=sm_90"]})],
    cmdclass={"build_ext": BuildExtension},
)
