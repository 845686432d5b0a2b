package diagnose

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fastpath-dev/fastpath/internal/facts"
	"github.com/fastpath-dev/fastpath/internal/finding"
	"github.com/fastpath-dev/fastpath/internal/live"
	"github.com/fastpath-dev/fastpath/internal/model"
)

var h200Archs = []string{"sm_75", "sm_80", "sm_86", "sm_90", "sm_100", "sm_120"}

// liveH200 is the healthy H200 with its static torch targets and ABI read,
// joined to the probe recorded from (or written after) that machine.
func liveH200(t *testing.T, probeFile string) *facts.Facts {
	t.Helper()
	b, err := os.ReadFile(probeFile)
	if err != nil {
		t.Fatal(err)
	}
	lf, err := live.ParseProbe(b)
	if err != nil {
		t.Fatal(err)
	}
	f := healthy()
	abi := true
	f.Torch.Archs = append([]string(nil), h200Archs...)
	f.Torch.ArchLibs = []string{"torch/lib/libtorch_cuda.so"}
	f.Torch.CXX11ABI, f.Torch.CXX11ABIFrom = &abi, "torch/_C/_GLIBCXX_USE_CXX11_ABI"
	f.Live = lf
	return f
}

func liveFindings(fs []finding.Finding) []finding.Finding {
	var out []finding.Finding
	for _, f := range fs {
		if f.ID == finding.StaticLiveDisagree {
			out = append(out, f)
		}
	}
	return out
}

// TestRecordedH200ProbesAgree: on the reference machine the static reading
// and every probe recorded there agree.
func TestRecordedH200ProbesAgree(t *testing.T) {
	paths, _ := filepath.Glob("../live/testdata/recorded/*probe*h200*.json")
	if len(paths) == 0 {
		t.Fatal("no H200 probe recordings")
	}
	for _, p := range paths {
		f := liveH200(t, p)
		if fs := liveFindings(Run(f)); len(fs) > 0 {
			t.Errorf("%s: static and live disagree on the reference machine: %+v", filepath.Base(p), fs)
		}
	}
}

func TestStaticLiveDisagree(t *testing.T) {
	const probe = "../live/testdata/recorded/probe-h200.json"
	qwen := &model.Report{Model: "Qwen/Qwen3.5-27B", ModelType: "qwen3_5", Transformers: "5.17.0", Kernels: []model.Kernel{
		{Function: "chunk_gated_delta_rule", Resolves: "package", Reason: "fla-core 0.4.1"},
		{Function: "causal_conv1d_fn", Resolves: "torch", Reason: "causal-conv1d is not installed"},
	}}
	cases := []struct {
		name   string
		edit   func(f *facts.Facts)
		models []*model.Report
		want   []string // one finding per entry: words in its title+detail+evidence
	}{
		{"agree", func(f *facts.Facts) {}, nil, nil},
		{"probe not run", func(f *facts.Facts) { f.Live = &facts.LiveFacts{Error: "no Python interpreter"}; f.Torch.Version = "x" }, nil, nil},
		{"torch version", func(f *facts.Facts) { f.Live.Torch.Version = "2.10.0+cu130" }, nil, []string{"version differs"}},
		{"torch cuda", func(f *facts.Facts) { f.Live.Torch.CUDA = "12.8" }, nil, []string{"CUDA version differs"}},
		{"arch list", func(f *facts.Facts) { f.Torch.Archs = f.Torch.Archs[:5] }, nil, []string{"get_arch_list() sm_75 sm_80 sm_86 sm_90 sm_100 sm_120"}},
		{"arch list with ptx", func(f *facts.Facts) { f.Live.Torch.ArchList = append(f.Live.Torch.ArchList, "compute_120") }, nil, []string{"GPU targets differ"}},
		{"ptx agrees", func(f *facts.Facts) {
			f.Live.Torch.ArchList = append(f.Live.Torch.ArchList, "compute_120")
			f.Torch.PTX = []string{"sm_120"}
		}, nil, nil},
		{"abi", func(f *facts.Facts) { v := false; f.Live.Torch.CXX11ABI = &v }, nil, []string{"C++ ABI differs"}},
		{"torch does not import", func(f *facts.Facts) {
			f.Live.Torch = facts.LiveTorch{Error: "ImportError: libcudnn.so.9: cannot open shared object file: No such file or directory"}
		}, nil, []string{"ImportError: libcudnn.so.9: cannot open shared object file"}},
		{"torch only live", func(f *facts.Facts) { f.Torch = nil }, nil, []string{"static scan found none"}},
		{"cuda unavailable", func(f *facts.Facts) {
			f.Live.Torch.CUDAAvailable, f.Live.Torch.Devices = false, nil
		}, nil, []string{"torch.cuda.is_available() False"}},
		{"gpus overridden", func(f *facts.Facts) { f.Live.Torch.CUDAAvailable = false; f.GPU.Overridden = true }, nil, nil},
		{"capability", func(f *facts.Facts) { f.Live.Torch.Devices[0].Capability = "10.0" }, nil, []string{"live: 10.0"}},
		{"installed but fails to import", func(f *facts.Facts) {
			f.Python.Selected.Distributions = []facts.Distribution{{Name: "causal_conv1d", Version: "1.6.0", MetadataDir: "/x/causal_conv1d-1.6.0.dist-info"}}
			f.Live.Packages[0].Error = "ImportError: /x/causal_conv1d_cuda.cpython-312-x86_64-linux-gnu.so: undefined symbol: _ZN3c104cuda9SetDeviceEa"
		}, nil, []string{"undefined symbol: _ZN3c104cuda9SetDeviceEa"}},
		{"imports but not found", func(f *facts.Facts) { f.Live.Packages[3].OK, f.Live.Packages[3].File = true, "/src/fla/__init__.py" }, nil,
			[]string{"flash-linear-attention imports, but the static scan found no distribution"}},
		{"model function", func(f *facts.Facts) {}, []*model.Report{qwen}, []string{"chunk_gated_delta_rule resolves to torch, not package"}},
		{"model not probed", func(f *facts.Facts) { delete(f.Live.Models, "qwen3_5") }, []*model.Report{qwen}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := liveH200(t, probe)
			if f.Live.Packages[3].Import != "fla" {
				t.Fatalf("fixture order changed: %+v", f.Live.Packages[3])
			}
			tc.edit(f)
			got := liveFindings(RunWithModels(f, tc.models))
			if len(got) != len(tc.want) {
				t.Fatalf("%d findings, want %d: %+v", len(got), len(tc.want), got)
			}
			for i, w := range tc.want {
				text := got[i].Title + " " + got[i].Detail + " " + strings.Join(got[i].Evidence, " | ")
				if !strings.Contains(text, w) {
					t.Errorf("finding %d lacks %q: %s", i, w, text)
				}
				if got[i].Severity != finding.Warning {
					t.Errorf("severity %s", got[i].Severity)
				}
			}
		})
	}
}
