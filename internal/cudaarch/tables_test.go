package cudaarch

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

func v(s string) Version {
	x, err := ParseVersion(s)
	if err != nil {
		panic(err)
	}
	return x
}

func TestCanTarget(t *testing.T) {
	tests := []struct {
		cuda, target string
		want         bool
	}{
		{"11.8", "sm_89", true},
		{"11.8", "sm_90", true},
		{"11.7", "sm_90", false},
		{"11.8", "sm_90a", false},
		{"12.0", "sm_90a", true},
		{"12.0", "sm_35", false},
		{"11.8", "sm_35", true},
		{"12.4", "sm_120", false}, // the nvcc-cannot-target-gpu example of DESIGN.md
		{"12.6", "sm_100", false},
		{"12.8", "sm_100", true},
		{"12.8", "sm_100a", true},
		{"12.8", "sm_120", true},
		{"12.8", "sm_120a", true},
		{"12.8", "sm_101", true},
		{"12.8", "sm_103", false},
		{"12.8", "sm_120f", false}, // family targets start with 12.9
		{"12.9", "sm_103a", true},
		{"12.9", "sm_121", true},
		{"12.9", "sm_120f", true},
		{"12.9", "sm_100f", true},
		{"12.9", "sm_110", false},
		{"13.0", "sm_110", true},
		{"13.0", "sm_110f", true},
		{"13.0", "sm_101", false}, // renamed sm_110
		{"13.0", "sm_70", false},
		{"13.0", "sm_72", false},
		{"13.0", "sm_75", true},
		{"13.0", "sm_88", true},
		{"13.0", "sm_121a", true},
		{"13.0.88", "sm_90a", true},
		{"13.1", "sm_120", true}, // later minors inherit the newest row
		{"10.2", "sm_75", false}, // before the table
		{"12.8", "compute_120", true},
		{"11.8", "compute_100", false},
	}
	for _, tt := range tests {
		if got := CanTarget(v(tt.cuda), MustTarget(tt.target)); got != tt.want {
			t.Errorf("CanTarget(%s, %s) = %v, want %v", tt.cuda, tt.target, got, tt.want)
		}
	}
}

// TestNVCC130ListGPUCode checks the table against `nvcc --list-gpu-code` of 13.0.88 read on
// the project's H200 (testdata/h200-nvcc-13.0.88-list-gpu-code.txt): exactly these plain targets.
func TestNVCC130ListGPUCode(t *testing.T) {
	reading, err := os.ReadFile(filepath.Join("testdata", "h200-nvcc-13.0.88-list-gpu-code.txt"))
	if err != nil {
		t.Fatal(err)
	}
	want := map[int]bool{}
	section := ""
	for _, line := range strings.Split(string(reading), "\n") {
		if strings.HasPrefix(line, "# ") {
			section = line
			continue
		}
		if sm, ok := strings.CutPrefix(line, "sm_"); ok && strings.Contains(section, "--list-gpu-code") {
			n, err := strconv.Atoi(sm)
			if err != nil {
				t.Fatalf("reading: %q", line)
			}
			want[n] = true
		}
	}
	if len(want) != 12 {
		t.Fatalf("read %d targets from the H200 reading, want its 12", len(want))
	}
	got := map[int]bool{}
	for tg := range targetsOf(v("13.0")) {
		if tg.Variant == VariantPlain {
			got[tg.SM] = true
		}
	}
	if len(got) != len(want) {
		t.Errorf("13.0 plain targets = %v, want %v", got, want)
	}
	for sm := range want {
		if !got[sm] {
			t.Errorf("13.0 lacks sm_%d", sm)
		}
	}
}

func TestNewestTarget(t *testing.T) {
	tests := map[string]string{"11.0": "sm_80", "11.4": "sm_87", "11.8": "sm_90", "12.4": "sm_90", "12.8": "sm_120", "12.9": "sm_121", "13.0": "sm_121"}
	for cuda, want := range tests {
		got, ok := NewestTarget(v(cuda))
		if !ok || got.String() != want {
			t.Errorf("NewestTarget(%s) = %v, %v; want %s", cuda, got, ok, want)
		}
	}
	if got, ok := NewestTarget(v("10.2")); ok {
		t.Errorf("NewestTarget(10.2) = %v, want none", got)
	}
}

func TestPTXISAToCUDA(t *testing.T) {
	tests := []struct {
		isa, cuda string
		ok        bool
	}{
		{"7.8", "11.8", true},
		{"8.0", "12.0", true},
		{"8.5", "12.5", true},
		{"8.7", "12.8", true},
		{"8.8", "12.9", true},
		{"9.0", "13.0", true},
		{"8.6", "", false},
		{"6.4", "", false},
	}
	for _, tt := range tests {
		got, ok := PTXISAToCUDA(v(tt.isa))
		if ok != tt.ok || (ok && got != v(tt.cuda)) {
			t.Errorf("PTXISAToCUDA(%s) = %v, %v; want %s, %v", tt.isa, got, ok, tt.cuda, tt.ok)
		}
	}
}

func TestDriverCanJIT(t *testing.T) {
	tests := []struct {
		isa, driver string
		ok, known   bool
	}{
		{"9.0", "13.0", true, true},  // the H200: driver 580 reports CUDA 13.0
		{"9.0", "12.9", false, true}, // CUDA 13 PTX on a 575 driver
		{"8.7", "13.0", true, true},
		{"8.0", "12.0", true, true},
		{"8.6", "13.0", false, false},
	}
	for _, tt := range tests {
		ok, known := DriverCanJIT(v(tt.isa), v(tt.driver))
		if ok != tt.ok || known != tt.known {
			t.Errorf("DriverCanJIT(%s, %s) = %v, %v; want %v, %v", tt.isa, tt.driver, ok, known, tt.ok, tt.known)
		}
	}
}

func TestParseVersion(t *testing.T) {
	for in, want := range map[string]Version{"12.8": {12, 8}, "13.0.88": {13, 0}, "V12.4.131": {12, 4}, "12.10": {12, 10}} {
		if got, err := ParseVersion(in); err != nil || got != want {
			t.Errorf("ParseVersion(%q) = %v, %v", in, got, err)
		}
	}
	for _, bad := range []string{"", "12", "a.b", "12.-1", "1000.0"} {
		if _, err := ParseVersion(bad); err == nil {
			t.Errorf("ParseVersion(%q): want error", bad)
		}
	}
	if !v("12.9").Less(v("12.10")) || v("13.0").Less(v("12.9")) {
		t.Error("Less")
	}
}

// TestTablesCiteSources keeps every embedded row tied to where it was checked.
func TestTablesCiteSources(t *testing.T) {
	if len(TargetReleases()) < 8 || len(PTXISAReleases()) < 10 {
		t.Fatalf("tables too short: %d, %d", len(TargetReleases()), len(PTXISAReleases()))
	}
	for _, r := range TargetReleases() {
		if r.Source == "" || len(r.Add)+len(r.Remove) == 0 {
			t.Errorf("release %v: empty row or no source", r.CUDA)
		}
	}
	prev := Version{}
	for _, r := range PTXISAReleases() {
		if r.Source == "" {
			t.Errorf("PTX %v: no source", r.PTX)
		}
		if r.CUDA.Less(prev) {
			t.Errorf("PTX %v maps to %v, older than the previous ISA's %v", r.PTX, r.CUDA, prev)
		}
		prev = r.CUDA
	}
}
