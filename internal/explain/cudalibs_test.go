package explain

import "testing"

// TestWheelFor: a pip wheel is named only for a library whose soname major
// is its CUDA major (cuFFT 11 belongs to CUDA 12, NCCL's .so.2 to none).
func TestWheelFor(t *testing.T) {
	for lib, want := range map[string]string{
		"libnvJitLink.so.12": "nvidia-nvjitlink-cu12",
		"libnvJitLink.so.13": "",
		"libcublasLt.so.11":  "nvidia-cublas-cu11",
		"libcusparse.so.12":  "nvidia-cusparse-cu12",
		"libcufft.so.11":     "",
		"libnccl.so.2":       "",
		"libcudnn.so.9":      "",
	} {
		if got, _ := wheelFor(lib); got != want {
			t.Errorf("wheelFor(%q) = %q, want %q", lib, got, want)
		}
	}
}

// TestSitePackagesOf: a fix names a site-packages folder only from a whole
// absolute path of the log, never from a temporary build environment's.
func TestSitePackagesOf(t *testing.T) {
	for p, want := range map[string]string{
		"/env/lib/python3.11/site-packages/torch/lib/../../nvidia/cusparse/lib/libcusparse.so.12":              "/env/lib/python3.11/site-packages",
		"/dev/shm/pip-build-env-v0/overlay/lib/python3.12/site-packages/nvidia/cusparse/lib/libcusparse.so.12": "",
		"/data/conda_envs/.../lib/python3.10/site-packages/causal_conv1d_cuda.cpython-310-x86_64-linux-gnu.so": "",
		"lib/python3.9/site-packages/torch/lib/../../nvidia/cusparse/lib/libcusparse.so.12":                    "",
	} {
		if got := sitePackagesOf(p); got != want {
			t.Errorf("sitePackagesOf(%q) = %q, want %q", p, got, want)
		}
	}
}
