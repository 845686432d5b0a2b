package diagnose

import (
	"slices"
	"strings"
	"testing"

	"github.com/fastpath-dev/fastpath/internal/facts"
	"github.com/fastpath-dev/fastpath/internal/finding"
)

// withArchs gives the healthy machine's torch the targets read from its
// libtorch_cuda.so (reference: get_arch_list() of torch 2.11.0+cu130).
func withArchs(f *facts.Facts) {
	f.Torch.Lib = f.Torch.Location + "/lib"
	f.Torch.Archs = []string{"sm_75", "sm_80", "sm_86", "sm_90", "sm_100", "sm_120"}
	f.Torch.ArchLibs = []string{f.Torch.Lib + "/libtorch_cuda.so", f.Torch.Lib + "/libtorch_cuda_linalg.so"}
}

// cu124 makes the installed torch 2.6.0+cu124 (sm_50 ... sm_90 SASS).
func cu124(f *facts.Facts) {
	f.Torch.Version, f.Torch.CUDA = "2.6.0+cu124", "12.4"
	f.Torch.Archs = []string{"sm_50", "sm_60", "sm_70", "sm_75", "sm_80", "sm_86", "sm_90"}
}

func TestTorchArch(t *testing.T) {
	const py = "/opt/torch/.venv/bin/python3"
	cases := []struct {
		name     string
		mutate   func(f *facts.Facts)
		sev      []finding.Severity // one per torch-arch-unsupported finding, in order
		title    string             // of the first
		command  string             // the first fix's first command ("" when it has none)
		evidence []string           // substrings of the first's evidence
	}{
		{name: "healthy H200 with torch cu130's targets", mutate: func(f *facts.Facts) {}},
		{name: "sm_120 GPU, torch up to sm_90 without PTX", mutate: func(f *facts.Facts) {
			cu124(f)
			f.GPU.Devices = []facts.Device{{Name: "NVIDIA RTX PRO 6000 Blackwell Server Edition", Capability: "12.0"}, {Name: "NVIDIA RTX PRO 6000 Blackwell Server Edition", Capability: "12.0"}}
		}, sev: []finding.Severity{finding.Error},
			title:   "torch 2.6.0+cu124 has no code for sm_120 (compute capability 12.0)",
			command: py + " -m pip install --force-reinstall torch==2.11.0 --index-url https://download.pytorch.org/whl/cu130",
			evidence: []string{"torch 2.6.0+cu124 at", "get_arch_list() reports it): sm_50 sm_60 sm_70 sm_75 sm_80 sm_86 sm_90", "torch's PTX: none",
				"read: /opt/torch/.venv/lib/python3.12/site-packages/torch/lib/libtorch_cuda.so, ", "GPUs: 2 × NVIDIA RTX PRO 6000 Blackwell Server Edition (compute capability 12.0)"}},
		{name: "sm_120 GPU, driver 570 runs CUDA 12.8 at most: the cu128 build", mutate: func(f *facts.Facts) {
			cu124(f)
			f.GPU.Driver.Version = "570.172.08"
			f.GPU.Devices[0].Capability = "12.0"
		}, sev: []finding.Severity{finding.Error},
			command: py + " -m pip install --force-reinstall torch==2.11.0 --index-url https://download.pytorch.org/whl/cu128"},
		{name: "sm_120 GPU, compute_90 PTX: JIT only, a warning", mutate: func(f *facts.Facts) {
			cu124(f)
			f.Torch.PTX = []string{"compute_90"}
			f.GPU.Devices[0].Capability = "12.0"
		}, sev: []finding.Severity{finding.Warning},
			title:    "torch 2.6.0+cu124 runs on sm_120 (compute capability 12.0) only through PTX JIT (compute_90)",
			evidence: []string{"torch's PTX: compute_90"}},
		{name: "compute_90a PTX does not JIT on 12.0", mutate: func(f *facts.Facts) {
			cu124(f)
			f.Torch.PTX = []string{"compute_90a"}
			f.GPU.Devices[0].Capability = "12.0"
		}, sev: []finding.Severity{finding.Error}},
		{name: "sm_86 GPU with sm_80 SASS: same major, newer minor", mutate: func(f *facts.Facts) {
			f.Torch.Archs = []string{"sm_80"}
			f.GPU.Devices[0].Capability = "8.6"
		}},
		{name: "sm_80 SASS does not run on 9.0", mutate: func(f *facts.Facts) {
			f.Torch.Archs = []string{"sm_80"}
		}, sev: []finding.Severity{finding.Error}, title: "torch 2.11.0+cu130 has no code for sm_90 (compute capability 9.0)"},
		{name: "sm_90a runs on 9.0", mutate: func(f *facts.Facts) { f.Torch.Archs = []string{"sm_90a"} }},
		{name: "sm_90a does not run on 10.0", mutate: func(f *facts.Facts) {
			f.Torch.Archs = []string{"sm_90a"}
			f.GPU.Devices[0].Capability = "10.0"
		}, sev: []finding.Severity{finding.Error},
			command: py + " -m pip install --force-reinstall torch==2.11.0 --index-url https://download.pytorch.org/whl/cu130"},
		{name: "sm_120 runs on 12.1 (DGX Spark)", mutate: func(f *facts.Facts) { f.GPU.Devices[0].Capability = "12.1" }},
		{name: "sm_100 runs on 10.3 (B300)", mutate: func(f *facts.Facts) { f.GPU.Devices[0].Capability = "10.3" }},
		{name: "V100 with torch 2.11 cu130: the cu126 build still has sm_70", mutate: func(f *facts.Facts) {
			f.GPU.Devices[0] = facts.Device{Name: "Tesla V100-SXM2-32GB", Capability: "7.0"}
		}, sev: []finding.Severity{finding.Error},
			title:   "torch 2.11.0+cu130 has no code for sm_70 (compute capability 7.0)",
			command: py + " -m pip install --force-reinstall torch==2.11.0 --index-url https://download.pytorch.org/whl/cu126"},
		{name: "P100 keeps the installed 2.11 patch release", mutate: func(f *facts.Facts) {
			f.Torch.Version = "2.11.1+cu130"
			f.GPU.Devices[0].Capability = "6.0"
		}, sev: []finding.Severity{finding.Error},
			command: py + " -m pip install --force-reinstall torch==2.11.1 --index-url https://download.pytorch.org/whl/cu126"},
		{name: "Kepler: no 2.11 wheel has code, no command", mutate: func(f *facts.Facts) {
			f.GPU.Devices[0].Capability = "3.7"
		}, sev: []finding.Severity{finding.Error}},
		{name: "one finding per capability, in device order", mutate: func(f *facts.Facts) {
			f.GPU.Devices = []facts.Device{{Capability: "7.0"}, {Capability: "9.0"}, {Capability: "6.1"}, {Capability: "7.0"}}
		}, sev: []finding.Severity{finding.Error, finding.Error},
			title: "torch 2.11.0+cu130 has no code for sm_70 (compute capability 7.0)", evidence: []string{"GPUs: 2 × GPU (compute capability 7.0)"}},
		{name: "targets unknown: no guess", mutate: func(f *facts.Facts) {
			cu124(f)
			f.Torch.Archs, f.Torch.ArchLibs = nil, nil
			f.GPU.Devices[0].Capability = "12.0"
		}},
		{name: "CPU torch: torch-cpu-only's business", mutate: func(f *facts.Facts) {
			f.Torch.CUDA, f.Torch.Version = "", "2.11.0+cpu"
			f.GPU.Devices[0].Capability = "12.0"
			f.Torch.Archs = []string{"sm_80"}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := healthy()
			withArchs(f)
			tc.mutate(f)
			var got []finding.Finding
			for _, fd := range Run(f) {
				if fd.ID == finding.TorchArchUnsupported {
					got = append(got, fd)
				}
			}
			var sevs []finding.Severity
			for _, fd := range got {
				sevs = append(sevs, fd.Severity)
			}
			if !slices.Equal(sevs, tc.sev) {
				t.Fatalf("severities %v, want %v (%v)", sevs, tc.sev, got)
			}
			if len(got) == 0 {
				return
			}
			first := got[0]
			if tc.title != "" && first.Title != tc.title {
				t.Errorf("title %q, want %q", first.Title, tc.title)
			}
			if len(first.Fixes) != 1 {
				t.Fatalf("fixes %v", first.Fixes)
			}
			cmds := first.Fixes[0].Commands
			switch {
			case tc.command != "" && (len(cmds) != 1 || cmds[0] != tc.command):
				t.Errorf("commands %q, want %q", cmds, tc.command)
			case tc.name == "Kepler: no 2.11 wheel has code, no command" && len(cmds) != 0:
				t.Errorf("commands %q for a GPU no wheel supports", cmds)
			}
			ev := strings.Join(first.Evidence, "\n")
			for _, want := range tc.evidence {
				if !strings.Contains(ev, want) {
					t.Errorf("evidence lacks %q:\n%s", want, ev)
				}
			}
		})
	}
}

// TestTorchWheelArchsParse: every CUDA build the fixes may name has targets
// that parse.
func TestTorchWheelArchsParse(t *testing.T) {
	c := newJudgement(healthy())
	if len(c.torchWheelCUDAs()) == 0 {
		t.Fatal("no torch wheel builds in the knowledge base")
	}
	for _, cu := range c.torchWheelCUDAs() {
		archs := c.cuda.TorchWheelArchs(cu)
		if len(archs) == 0 || len(parseTargets(archs)) != len(archs) {
			t.Errorf("cu%s: targets %v", cu, archs)
		}
	}
}
