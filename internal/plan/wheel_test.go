package plan

import (
	"testing"

	"github.com/fastpath-dev/fastpath/internal/kb"
)

func TestWheelFit(t *testing.T) {
	seed := kb.WheelEnv{CUDAMajor: 12, TorchMM: "2.11", CXX11ABI: true, PyTag: "cp312", Machine: "x86_64"}
	tests := []struct {
		file string
		want Fit
		ok   bool
	}{
		{"causal_conv1d-1.7.0+cu12torch2.11cxx11abiTRUE-cp312-cp312-linux_x86_64.whl", Exact, true},
		{"causal_conv1d-1.7.0+cu12torch2.10cxx11abiTRUE-cp312-cp312-linux_x86_64.whl", Neighbour, true},
		{"causal_conv1d-1.7.0+cu12torch2.11cxx11abiFALSE-cp312-cp312-linux_x86_64.whl", Unfit, true},
		{"causal_conv1d-1.7.0+cu13torch2.11cxx11abiTRUE-cp312-cp312-linux_x86_64.whl", Unfit, true},
		{"causal_conv1d-1.7.0+cu12torch2.11cxx11abiTRUE-cp311-cp311-linux_x86_64.whl", Unfit, true},
		{"flash_attn-2.8.3+cu12torch2.11cxx11abiTRUE-cp312-cp312-linux_aarch64.whl", Unfit, true},
		{"causal_conv1d-1.7.0-py3-none-any.whl", Exact, true},
		{"causal_conv1d-1.7.0-1-cp312-cp312-manylinux_2_28_x86_64.whl", Exact, true},
		{"causal_conv1d-1.7.0+cpu-cp312-cp312-linux_x86_64.whl", Unfit, true},
		{"numpy-2.3.5-cp312-cp312-musllinux_1_2_x86_64.whl", Unfit, true},
		{"causal_conv1d-1.7.0.tar.gz", Unfit, false},
		{"a-b-c.whl", Unfit, false},
		{"a--b-c-d.whl", Unfit, false},
	}
	for _, tt := range tests {
		w, ok := ParseWheel(tt.file)
		if ok != tt.ok {
			t.Errorf("ParseWheel(%s) ok=%v, want %v", tt.file, ok, tt.ok)
			continue
		}
		if ok && w.FitFor(seed) != tt.want {
			t.Errorf("%s: fit %d, want %d", tt.file, w.FitFor(seed), tt.want)
		}
	}
	w, _ := ParseWheel("Causal_Conv1D-1.7.0+cu12torch2.10cxx11abiTRUE-cp312-cp312-linux_x86_64.whl")
	if w.Name != "causal-conv1d" || w.TorchMM() != "2.10" || w.Local != "cu12torch2.10cxx11abiTRUE" {
		t.Errorf("parsed %+v", w)
	}
}

func TestPickWheels(t *testing.T) {
	env := kb.WheelEnv{CUDAMajor: 12, TorchMM: "2.11", CXX11ABI: true, PyTag: "cp312"}
	links := []Link{
		{File: "causal_conv1d-1.5.0+cu12torch2.11cxx11abiTRUE-cp312-cp312-linux_x86_64.whl", URL: "u/old"},
		{File: "causal_conv1d-1.10.0+cu12torch2.11cxx11abiTRUE-cp312-cp312-linux_x86_64.whl", URL: "u/new"},
		{File: "causal_conv1d-1.9.0+cu12torch2.10cxx11abiTRUE-cp312-cp312-linux_x86_64.whl", URL: "u/near"},
		{File: "causal_conv1d-1.10.0.tar.gz", URL: "u/sdist"},
		{File: "other-1.0-py3-none-any.whl", URL: "u/other"},
	}
	best, near, n := pickWheels(links, "causal-conv1d", env)
	// 1.10.0 is newer than 1.5.0 by PEP 440, not by string order.
	if best == nil || best.URL != "u/new" || near == nil || near.URL != "u/near" || n != 4 {
		t.Errorf("best %v near %v n %d", best, near, n)
	}
}
