// Package envvars keeps the environment variables that matter to GPU builds
// and runs, with secrets redacted.
package envvars

import (
	"regexp"
	"sort"
	"strings"

	"github.com/fastpath-dev/fastpath/internal/facts"
	"github.com/fastpath-dev/fastpath/internal/source"
)

// Redacted is the value stored in place of a secret.
const Redacted = "<redacted>"

// kept are the variables read by CUDA, torch's extension builder, pip, uv,
// Python and the Hugging Face libraries when they find compilers, pick GPUs
// and build or load kernels.
var kept = map[string]bool{}

func init() {
	for _, n := range strings.Fields(`
		CUDA_HOME CUDA_PATH CUDA_ROOT CUDACXX CUDAHOSTCXX CUDA_VISIBLE_DEVICES CUDA_MODULE_LOADING
		NVIDIA_VISIBLE_DEVICES NVIDIA_DRIVER_CAPABILITIES
		TORCH_CUDA_ARCH_LIST MAX_JOBS NVCC_THREADS NVCC_APPEND_FLAGS NVCC_PREPEND_FLAGS PYTORCH_CUDA_ALLOC_CONF
		CC CXX LD_LIBRARY_PATH LIBRARY_PATH CPATH PATH
		PYTHONPATH PYTHONHOME PYTHONNOUSERSITE VIRTUAL_ENV CONDA_PREFIX CONDA_DEFAULT_ENV PYENV_VERSION PYENV_ROOT HOME
		HF_HOME HF_HUB_CACHE HF_HUB_OFFLINE TRANSFORMERS_CACHE USE_HUB_KERNELS
		FLASH_ATTN_CUDA_ARCHS`) {
		kept[n] = true
	}
}

// keptPrefixes are families kept whole: NCCL's and torch's settings, pip's
// and uv's configuration, and the build knobs of the kernel packages
// (causal-conv1d, flash-attn, mamba-ssm).
var keptPrefixes = []string{"NCCL_", "TORCH_", "PIP_", "UV_", "CAUSAL_CONV1D_", "FLASH_ATTENTION_", "MAMBA_"}

// secretWords in a name mark its value as a secret.
var secretWords = []string{"TOKEN", "KEY", "SECRET", "PASSWORD", "PASSWD", "AUTH", "CREDENTIAL"}

// urlUserinfo matches the userinfo of a URL (https://user:pass@host,
// https://token@host): group 1 is scheme://, 2 the user, 3 ":password".
var urlUserinfo = regexp.MustCompile(`([A-Za-z][A-Za-z0-9+.-]*://)([^/@\s:]*)(:[^/@\s]*)?@`)

// Collect returns the variables of env that matter, sorted by name.
func Collect(env source.Env) []facts.EnvVar {
	out := []facts.EnvVar{}
	for name, value := range env {
		if !Matters(name) {
			continue
		}
		out = append(out, Redact(name, value))
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Matters reports whether a variable is one fastpath keeps.
func Matters(name string) bool {
	if kept[name] {
		return true
	}
	for _, p := range keptPrefixes {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

// Redact returns the variable with any secret removed: a name that says it
// holds one loses its value; credentials inside URLs (PIP_INDEX_URL=
// https://user:pass@host/simple) lose the password, or the user where it
// stands alone (a token).
func Redact(name, value string) facts.EnvVar {
	upper := strings.ToUpper(name)
	for _, w := range secretWords {
		if strings.Contains(upper, w) {
			return facts.EnvVar{Name: name, Value: Redacted, Redacted: true}
		}
	}
	redacted := false
	value = urlUserinfo.ReplaceAllStringFunc(value, func(m string) string {
		g := urlUserinfo.FindStringSubmatch(m)
		redacted = true
		if g[3] == "" {
			return g[1] + Redacted + "@"
		}
		return g[1] + g[2] + ":" + Redacted + "@"
	})
	return facts.EnvVar{Name: name, Value: value, Redacted: redacted}
}
