package envvars

import (
	"testing"

	"github.com/fastpath-dev/fastpath/internal/facts"
	"github.com/fastpath-dev/fastpath/internal/source"
	"github.com/google/go-cmp/cmp"
)

func TestCollect(t *testing.T) {
	// The H200 reference machine's relevant variables, plus the noise of a
	// login shell and some secrets.
	env := source.Env{
		"PATH":                        "/opt/torch/.venv/bin:/usr/local/cuda/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
		"CUDA_HOME":                   "/usr/local/cuda",
		"TORCH_CUDA_ARCH_LIST":        "9.0a",
		"VIRTUAL_ENV":                 "/opt/torch/.venv",
		"HOME":                        "/root",
		"LD_LIBRARY_PATH":             "/usr/local/nvidia/lib:/usr/local/nvidia/lib64",
		"NVIDIA_VISIBLE_DEVICES":      "all",
		"NCCL_DEBUG":                  "INFO",
		"MAX_JOBS":                    "4",
		"FLASH_ATTENTION_FORCE_BUILD": "TRUE",
		"CAUSAL_CONV1D_FORCE_BUILD":   "TRUE",
		"MAMBA_FORCE_BUILD":           "TRUE",
		"FLASH_ATTN_CUDA_ARCHS":       "90",
		"UV_LINK_MODE":                "copy",
		"PIP_INDEX_URL":               "https://deploy:s3cr3t@pypi.internal.example/simple",
		"PIP_EXTRA_INDEX_URL":         "https://download.pytorch.org/whl/cu130 https://__token__@gitlab.example/api/v4/projects/1/packages/pypi/simple",
		"UV_INDEX":                    "internal=https://u:p@idx.example/simple",
		"PIP_TRUSTED_HOST":            "pypi.internal.example",
		"UV_PUBLISH_TOKEN":            "pypi-AgEIcHlwaS5vcmc",
		"NCCL_IB_AUTH_KEY":            "abc",
		"TORCH_HOME":                  "/data/torch",
		"HF_HOME":                     "/data/hf",
		// Dropped: not build or run settings, or secrets of no concern.
		"HF_TOKEN":              "hf_abcdef",
		"AWS_SECRET_ACCESS_KEY": "x",
		"SHELL":                 "/bin/bash",
		"TERM":                  "xterm-256color",
		"LS_COLORS":             "rs=0:di=01;34",
		"PYTORCH_ENABLE":        "1",
		"CUDA":                  "1",
		"MAMBA":                 "x",
		"cuda_home":             "/usr/local/cuda",
	}
	want := []facts.EnvVar{
		{Name: "CAUSAL_CONV1D_FORCE_BUILD", Value: "TRUE"},
		{Name: "CUDA_HOME", Value: "/usr/local/cuda"},
		{Name: "FLASH_ATTENTION_FORCE_BUILD", Value: "TRUE"},
		{Name: "FLASH_ATTN_CUDA_ARCHS", Value: "90"},
		{Name: "HF_HOME", Value: "/data/hf"},
		{Name: "HOME", Value: "/root"},
		{Name: "LD_LIBRARY_PATH", Value: "/usr/local/nvidia/lib:/usr/local/nvidia/lib64"},
		{Name: "MAMBA_FORCE_BUILD", Value: "TRUE"},
		{Name: "MAX_JOBS", Value: "4"},
		{Name: "NCCL_DEBUG", Value: "INFO"},
		{Name: "NCCL_IB_AUTH_KEY", Value: "<redacted>", Redacted: true},
		{Name: "NVIDIA_VISIBLE_DEVICES", Value: "all"},
		{Name: "PATH", Value: "/opt/torch/.venv/bin:/usr/local/cuda/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"},
		{Name: "PIP_EXTRA_INDEX_URL", Value: "https://download.pytorch.org/whl/cu130 https://<redacted>@gitlab.example/api/v4/projects/1/packages/pypi/simple", Redacted: true},
		{Name: "PIP_INDEX_URL", Value: "https://deploy:<redacted>@pypi.internal.example/simple", Redacted: true},
		{Name: "PIP_TRUSTED_HOST", Value: "pypi.internal.example"},
		{Name: "TORCH_CUDA_ARCH_LIST", Value: "9.0a"},
		{Name: "TORCH_HOME", Value: "/data/torch"},
		{Name: "UV_INDEX", Value: "internal=https://u:<redacted>@idx.example/simple", Redacted: true},
		{Name: "UV_LINK_MODE", Value: "copy"},
		{Name: "UV_PUBLISH_TOKEN", Value: "<redacted>", Redacted: true},
		{Name: "VIRTUAL_ENV", Value: "/opt/torch/.venv"},
	}
	if diff := cmp.Diff(want, Collect(env)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestCollectEmpty(t *testing.T) {
	got := Collect(nil)
	if got == nil || len(got) != 0 {
		t.Errorf("Collect(nil) = %#v, want an empty list", got)
	}
}

func TestRedact(t *testing.T) {
	tests := []struct {
		name, value string
		want        facts.EnvVar
	}{
		{"PIP_INDEX_URL", "https://pypi.org/simple", facts.EnvVar{Name: "PIP_INDEX_URL", Value: "https://pypi.org/simple"}},
		{"PIP_INDEX_URL", "https://user:pa:ss@host/simple", facts.EnvVar{Name: "PIP_INDEX_URL", Value: "https://user:<redacted>@host/simple", Redacted: true}},
		{"PIP_INDEX_URL", "https://user:@host/simple", facts.EnvVar{Name: "PIP_INDEX_URL", Value: "https://user:<redacted>@host/simple", Redacted: true}},
		{"PIP_FIND_LINKS", "file:///wheels", facts.EnvVar{Name: "PIP_FIND_LINKS", Value: "file:///wheels"}},
		{"PIP_INDEX_URL", "https://host/simple?x=a@b", facts.EnvVar{Name: "PIP_INDEX_URL", Value: "https://host/simple?x=a@b"}},
		{"UV_INDEX_URL", "git+ssh://git@github.com/org/repo", facts.EnvVar{Name: "UV_INDEX_URL", Value: "git+ssh://<redacted>@github.com/org/repo", Redacted: true}},
		{"PIP_CLIENT_CERT", "/etc/pki/client.pem", facts.EnvVar{Name: "PIP_CLIENT_CERT", Value: "/etc/pki/client.pem"}},
		{"UV_KEYRING_PROVIDER", "subprocess", facts.EnvVar{Name: "UV_KEYRING_PROVIDER", Value: "<redacted>", Redacted: true}},
		{"PIP_PASSWORD", "", facts.EnvVar{Name: "PIP_PASSWORD", Value: "<redacted>", Redacted: true}},
		{"TORCH_auth_header", "Bearer x", facts.EnvVar{Name: "TORCH_auth_header", Value: "<redacted>", Redacted: true}},
		{"UV_HTTP_CREDENTIALS", "x", facts.EnvVar{Name: "UV_HTTP_CREDENTIALS", Value: "<redacted>", Redacted: true}},
		{"PIP_PASSWD", "x", facts.EnvVar{Name: "PIP_PASSWD", Value: "<redacted>", Redacted: true}},
		{"NCCL_SECRET", "x", facts.EnvVar{Name: "NCCL_SECRET", Value: "<redacted>", Redacted: true}},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, Redact(tt.name, tt.value)); diff != "" {
			t.Errorf("Redact(%q, %q) (-want +got):\n%s", tt.name, tt.value, diff)
		}
	}
}
