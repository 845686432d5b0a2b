package plan

import (
	"context"
	"strings"
	"testing"

	"github.com/fastpath-dev/fastpath/internal/diagnose"
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
	models := []*model.Report{}
	for _, m := range in.Models {
		models = append(models, m)
	}
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
	if !strings.Contains(best[1].Cost.Basis, "1 target with nvcc 13.0, about 6 min on 16 cores") {
		t.Errorf("estimate: %s", best[1].Cost.Basis)
	}
	t.Logf("%s\n%s\n%s", best[1].Title, best[1].Cost.Basis, best[1].RankReason)
}
