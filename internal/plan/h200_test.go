package plan

import (
	"context"
	"strings"
	"testing"

	"github.com/fastpath-dev/fastpath/internal/diagnose"
	"github.com/fastpath-dev/fastpath/internal/facts"
	"github.com/fastpath-dev/fastpath/internal/model"
)

// h200Input is the seed container as the H200 end-to-end run starts it
// (scripts/device/remedy.sh): torch 2.11.0+cu130, one H200 (9.0), 16 cores,
// 128 GiB, nvcc hidden.
func h200Input(t *testing.T) Input {
	in := seedInput(t)
	f := in.Facts
	f.Torch.Version, f.Torch.CUDA = "2.11.0+cu130", "13.0"
	for i := range f.GPU.Devices {
		f.GPU.Devices[i].Capability, f.GPU.Devices[i].Name = "9.0", "NVIDIA H200"
	}
	f.GPU.Devices = f.GPU.Devices[:1]
	f.OS.CPUs, f.OS.MemTotal, f.OS.MemAvail = 16, 128<<30, 120<<30
	models := append([]*model.Report{}, in.Models...)
	in.Findings = diagnose.RunWithModels(f, models)
	return in
}

// TestH200SeedApply: what fix --apply runs on the H200 with no nvcc: NVIDIA's
// CUDA 13.0 compiler wheels (with cccl and the two links), then
// causal-conv1d 1.6.1's own sdist narrowed to sm_90, from the find-links
// folder only.
func TestH200SeedApply(t *testing.T) {
	in := h200Input(t)
	pl := Build(context.Background(), in, Options{NoIndex: true, FindLinks: []string{t.TempDir()}})
	best := pl.Best()
	var got []string
	for _, s := range best {
		got = append(got, s.ID)
	}
	if len(best) < 2 || best[0].ID != "no-cuda-compiler/pip" || best[1].ID != "causal-conv1d/build-narrowed-pip" {
		t.Fatalf("fix --apply would run %v\n%s", got, ids(pl))
	}
	cmds := strings.Join(best[0].Commands, "\n")
	for _, want := range []string{"--no-index --find-links", "nvidia-cuda-nvcc==13.0.*", "nvidia-cuda-cccl==13.0.*", "nvidia-nvvm==13.0.*",
		"ln -sfn lib \"$CUDA_HOME/lib64\"", "libcudart.so.13"} {
		if !strings.Contains(cmds, want) {
			t.Errorf("compiler step lacks %q:\n%s", want, cmds)
		}
	}
	b := strings.Join(best[1].Commands, "\n")
	for _, want := range []string{"setup.py 90", "MAX_JOBS=4 CAUSAL_CONV1D_FORCE_BUILD=TRUE", "--no-index --find-links"} {
		if !strings.Contains(b, want) {
			t.Errorf("build step lacks %q:\n%s", want, b)
		}
	}
	if !strings.Contains(best[1].Cost.Basis, "1 target with nvcc 13.0, about 6 min on 16 cores, from 358 s measured (causal-conv1d 1.7.0") {
		t.Errorf("estimate: %s", best[1].Cost.Basis)
	}
	t.Logf("%s\n%s\n%s", best[1].Title, best[1].Cost.Basis, best[1].RankReason)
}

// TestRankByGain: with both kernel packages missing, flash-linear-attention
// (+479 ms per forward at 2048 tokens, measured) comes before
// causal-conv1d (+8.3 ms), and each step says its gain against its effort.
func TestRankByGain(t *testing.T) {
	in := h200Input(t)
	py := in.Facts.Python.Selected
	var keep []facts.Distribution
	for _, d := range py.Distributions {
		if !strings.Contains(d.Name, "fla") && !strings.Contains(d.Name, "flash") {
			keep = append(keep, d)
		}
	}
	py.Distributions = keep
	var h200 world
	for _, w := range worlds(t) {
		if strings.HasPrefix(w.name, "H200") {
			h200 = w
		}
	}
	h200.f = in.Facts
	in2 := h200.input()
	pl := Build(context.Background(), in2, Options{Offline: true})
	var order []string
	for _, s := range pl.Steps {
		if s.Package != "" && (len(order) == 0 || order[len(order)-1] != s.Package) {
			order = append(order, s.Package)
		}
	}
	if len(order) < 2 || order[0] != "flash-linear-attention" || order[1] != "causal-conv1d" {
		t.Fatalf("package order %v", order)
	}
	for _, s := range pl.Steps {
		if s.Package == "flash-linear-attention" && !strings.Contains(s.RankReason, "gain: 479 ms per forward at 2048 tokens (measured on NVIDIA H200") {
			t.Errorf("%s: %s", s.ID, s.RankReason)
		}
		if s.ID == "causal-conv1d/build-narrowed-pip" && !strings.Contains(s.RankReason, "gain: 8.3 ms per forward") || s.ID == "causal-conv1d/build-narrowed-pip" && !strings.Contains(s.RankReason, "effort: about") {
			t.Errorf("%s: %s", s.ID, s.RankReason)
		}
	}
}
