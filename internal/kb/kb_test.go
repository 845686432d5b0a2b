package kb

import "testing"

func TestCUDAData(t *testing.T) {
	d := CUDA()
	for _, tc := range []struct{ cuda, full, floor string }{
		{"12.8", "570.26", "525.60.13"},
		{"12.8.93", "570.26", "525.60.13"},
		{"13.0", "580.65.06", "580.65.06"},
		{"12.7", "560.28.03", "525.60.13"}, // no 12.7 release: the 12.6 row applies
		{"11.8", "520.61.05", "450.80.02"},
	} {
		full, floor, ok := d.DriverMinimum(tc.cuda)
		if !ok || full != tc.full || floor != tc.floor {
			t.Errorf("DriverMinimum(%s) = %s, %s, %v; want %s, %s", tc.cuda, full, floor, ok, tc.full, tc.floor)
		}
	}
	if _, _, ok := d.DriverMinimum("junk"); ok {
		t.Error("DriverMinimum(junk) should fail")
	}
	for cuda, want := range map[string]int{"11.8": 11, "12.2": 12, "12.4": 13, "12.6.3": 13, "12.8": 14, "12.9.86": 14, "13.0": 15} {
		if got, ok := d.GCCMaxFor(cuda); !ok || got != want {
			t.Errorf("GCCMaxFor(%s) = %d, %v; want %d", cuda, got, ok, want)
		}
	}
	if _, ok := d.GCCMaxFor("10.2"); ok {
		t.Error("GCCMaxFor(10.2): no row, want !ok")
	}
	if p, ok := d.PipCompilerFor(12); !ok || p.HasNVCC {
		t.Errorf("cu12 pip compiler: %+v %v (the cu12 wheels ship no nvcc)", p, ok)
	}
	if p, ok := d.PipCompilerFor(13); !ok || !p.HasNVCC || p.Home != "nvidia/cu13" {
		t.Errorf("cu13 pip compiler: %+v %v", p, ok)
	}
	if got := Expand("cuda-nvcc-{M}-{m}", "12.8"); got != "cuda-nvcc-12-8" {
		t.Errorf("Expand = %q", got)
	}
	if v, ok := d.ToolkitFull("12.8"); !ok || v != "12.8.1" {
		t.Errorf("ToolkitFull(12.8) = %q, %v", v, ok)
	}
	for _, mm := range []string{"14.1", "12.7", "13.9", ""} {
		if v, ok := d.ToolkitFull(mm); ok || v != "" {
			t.Errorf("ToolkitFull(%q) = %q, %v; an unknown minor must not invent a release", mm, v, ok)
		}
	}
	for _, r := range d.DriverMinimums.Rows {
		if CompareDotted(r.CUDA, "11.8") < 0 {
			continue // toolkit_full_versions starts at 11.8
		}
		if _, ok := d.ToolkitFull(r.CUDA); !ok {
			t.Errorf("CUDA %s has a driver minimum but no full toolkit version", r.CUDA)
		}
	}
	for _, s := range []string{d.DriverMinimums.Source, d.MinorVersionCompat.Source, d.GCCMax.Source, d.PipCompilers.Source, d.Apt.Source, d.Conda.Source, d.DevelImages.Source, d.ToolkitFullVersions.Source} {
		if s == "" {
			t.Error("every table needs its source")
		}
	}
}

func TestCompareDotted(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want int
	}{{"570.26", "580.159.04", -1}, {"12.10", "12.8", 1}, {"12.8", "12.8.0", 0}, {"580.65.06", "580.65.06", 0}} {
		if got := CompareDotted(tc.a, tc.b); got != tc.want {
			t.Errorf("CompareDotted(%s, %s) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
}

func TestWheelNames(t *testing.T) {
	d := Wheels()
	env := WheelEnv{CUDAMajor: 12, TorchMM: "2.11", CXX11ABI: true, PyTag: "cp312", Machine: "aarch64"}
	tests := []struct{ pkg, version, want string }{
		// causal-conv1d hardcodes linux_x86_64 even on ARM.
		{"causal-conv1d", "1.6.0", "causal_conv1d-1.6.0+cu12torch2.11cxx11abiTRUE-cp312-cp312-linux_x86_64.whl"},
		{"flash-attn", "2.8.3", "flash_attn-2.8.3+cu12torch2.11cxx11abiTRUE-cp312-cp312-linux_aarch64.whl"},
		{"mamba-ssm", "2.2.6", "mamba_ssm-2.2.6+cu12torch2.11cxx11abiTRUE-cp312-cp312-linux_aarch64.whl"},
	}
	for _, tt := range tests {
		s, ok := d.Packages[tt.pkg]
		if !ok {
			t.Fatalf("no wheel scheme for %s", tt.pkg)
		}
		if got := d.WheelName(s, tt.version, env); got != tt.want {
			t.Errorf("%s: %s, want %s", tt.pkg, got, tt.want)
		}
		if s.KnownVersion == "" || s.Repo == "" || s.ForceBuildEnv == "" {
			t.Errorf("%s: incomplete scheme %+v", tt.pkg, s)
		}
		if _, ok := Families().Packages[tt.pkg]; !ok {
			t.Errorf("%s is not a package of families.json", tt.pkg)
		}
	}
	u := d.WheelURL(d.Packages["causal-conv1d"], "1.6.0", "x.whl")
	if u != "https://github.com/Dao-AILab/causal-conv1d/releases/download/v1.6.0/x.whl" {
		t.Errorf("url %s", u)
	}
	if d.BuildGiBPerJob <= 0 || d.GitHubAPI == "" {
		t.Errorf("wheels.json: %+v", d)
	}
}
