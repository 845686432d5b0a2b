package cudaarch

import (
	"slices"
	"strings"
	"testing"
)

func TestParseTarget(t *testing.T) {
	tests := []struct {
		in   string
		want Target
		str  string
	}{
		{"sm_90", Target{SASS, 90, VariantPlain}, "sm_90"},
		{"sm_90a", Target{SASS, 90, VariantArch}, "sm_90a"},
		{"SM_100A", Target{SASS, 100, VariantArch}, "sm_100a"},
		{"sm_120f", Target{SASS, 120, VariantFamily}, "sm_120f"},
		{"compute_90", Target{PTX, 90, VariantPlain}, "compute_90"},
		{"compute_120a", Target{PTX, 120, VariantArch}, "compute_120a"},
		{"compute_100f", Target{PTX, 100, VariantFamily}, "compute_100f"},
		{" sm_75 ", Target{SASS, 75, VariantPlain}, "sm_75"},
	}
	for _, tt := range tests {
		got, err := ParseTarget(tt.in)
		if err != nil || got != tt.want {
			t.Errorf("ParseTarget(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
			continue
		}
		if got.String() != tt.str {
			t.Errorf("%q.String() = %q, want %q", tt.in, got.String(), tt.str)
		}
	}
	for _, bad := range []string{"", "sm_", "sm_9", "sm_1000", "sm_x0", "sm_90b", "sm_90af", "compute_", "90", "sm_-90", "sm_+90", "sm_090", "9.0", "sm_90 a"} {
		if got, err := ParseTarget(bad); err == nil {
			t.Errorf("ParseTarget(%q) = %v, want error", bad, got)
		}
	}
}

func TestParseCapability(t *testing.T) {
	for in, want := range map[string]Capability{"9.0": {9, 0}, "12.1": {12, 1}, " 8.6": {8, 6}} {
		if got, err := ParseCapability(in); err != nil || got != want {
			t.Errorf("ParseCapability(%q) = %v, %v", in, got, err)
		}
	}
	for _, bad := range []string{"", "9", "9.", ".0", "9.10", "sm_90", "-1.0", "0.5"} {
		if _, err := ParseCapability(bad); err == nil {
			t.Errorf("ParseCapability(%q): want error", bad)
		}
	}
	if c := CapabilityOfSM(121); c != (Capability{12, 1}) || c.SM() != 121 || c.String() != "12.1" {
		t.Errorf("CapabilityOfSM(121) = %v", c)
	}
}

// TestRunsOn is the compatibility table of the CUDA Programming Guide's "Binary Compatibility", one row per rule
// and edge: same-major forward SASS, no SASS across majors, PTX across majors, `a` only
// on the exact capability, `f` within its family only.
func TestRunsOn(t *testing.T) {
	tests := []struct {
		target string
		cc     string
		want   Compat
	}{
		// SASS sm_XY: X.Z with Z >= Y.
		{"sm_80", "8.0", Native},
		{"sm_80", "8.6", Native},
		{"sm_80", "8.9", Native},
		{"sm_86", "8.0", None}, // older minor
		{"sm_80", "9.0", None}, // not across majors
		{"sm_90", "9.0", Native},
		{"sm_90", "10.0", None},
		{"sm_100", "10.3", Native},
		{"sm_103", "10.0", None},
		{"sm_120", "12.1", Native},
		{"sm_100", "12.0", None}, // Blackwell datacenter SASS does not run on consumer Blackwell
		{"sm_75", "8.0", None},
		// PTX compute_XY: any capability >= X.Y, across majors.
		{"compute_75", "7.5", PTXJIT},
		{"compute_75", "8.6", PTXJIT},
		{"compute_90", "12.0", PTXJIT},
		{"compute_90", "10.3", PTXJIT},
		{"compute_90", "8.9", None},
		{"compute_86", "8.0", None},
		{"compute_80", "8.6", PTXJIT},
		// Arch-specific: exactly that capability, SASS and PTX alike.
		{"sm_90a", "9.0", Native},
		{"sm_90a", "10.0", None},
		{"sm_100a", "10.0", Native},
		{"sm_100a", "10.3", None},
		{"sm_103a", "10.3", Native},
		{"sm_103a", "10.0", None},
		{"sm_120a", "12.1", None},
		{"sm_121a", "12.1", Native},
		{"compute_90a", "9.0", PTXJIT},
		{"compute_90a", "10.0", None},
		{"compute_120a", "12.1", None},
		// Family: same major, minor >= target's.
		{"sm_100f", "10.0", Native},
		{"sm_100f", "10.3", Family},
		{"sm_100f", "11.0", None}, // sm_110 is its own family
		{"sm_100f", "12.0", None},
		{"sm_103f", "10.0", None},
		{"sm_103f", "10.3", Native},
		{"sm_110f", "11.0", Native},
		{"sm_110f", "10.0", None},
		{"sm_120f", "12.0", Native},
		{"sm_120f", "12.1", Family},
		{"sm_121f", "12.0", None},
		{"sm_120f", "10.0", None},
		{"compute_120f", "12.1", PTXJIT},
		{"compute_120f", "13.0", None}, // family PTX does not cross majors
		{"compute_100f", "10.3", PTXJIT},
	}
	for _, tt := range tests {
		cc, err := ParseCapability(tt.cc)
		if err != nil {
			t.Fatal(err)
		}
		if got := MustTarget(tt.target).RunsOn(cc); got != tt.want {
			t.Errorf("%s on %s = %v, want %v", tt.target, tt.cc, got, tt.want)
		}
	}
}

func TestBest(t *testing.T) {
	// torch 2.11+cu130's get_arch_list plus the arch-specific extras seen in libtorch_cuda.so.
	var targets []Target
	for _, s := range []string{"sm_75", "sm_80", "sm_86", "sm_90", "sm_100", "sm_120", "sm_90a", "sm_100a", "sm_103a", "compute_75"} {
		targets = append(targets, MustTarget(s))
	}
	tests := []struct {
		cc       string
		target   string
		compat   Compat
		noTarget bool
	}{
		{cc: "9.0", target: "sm_90", compat: Native},
		{cc: "8.9", target: "sm_86", compat: Native},
		{cc: "10.3", target: "sm_103a", compat: Native}, // the exact arch-specific build beats sm_100
		{cc: "12.1", target: "sm_120", compat: Native},
		{cc: "11.0", target: "compute_75", compat: PTXJIT},
		{cc: "7.0", compat: None, noTarget: true},
	}
	for _, tt := range tests {
		got, c := Best(targets, mustCC(t, tt.cc))
		if c != tt.compat || (!tt.noTarget && got.String() != tt.target) || (tt.noTarget && got != (Target{})) {
			t.Errorf("Best on %s = %v %v, want %s %v", tt.cc, got, c, tt.target, tt.compat)
		}
	}
}

func mustCC(t *testing.T, s string) Capability {
	t.Helper()
	c, err := ParseCapability(s)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestStrings(t *testing.T) {
	for v, want := range map[Variant]string{VariantPlain: "", VariantArch: "a", VariantFamily: "f"} {
		if v.Suffix() != want {
			t.Errorf("%v.Suffix() = %q", v, v.Suffix())
		}
	}
	for c, want := range map[Compat]string{None: "none", PTXJIT: "ptx-jit", Family: "family", Native: "native", 9: "compat(9)"} {
		if c.String() != want {
			t.Errorf("Compat %d = %q, want %q", c, c.String(), want)
		}
	}
	if SASS.String() != "sass" || PTX.String() != "ptx" {
		t.Error("Kind strings")
	}
}

// TestForOtherGPUs: which containers without code for a GPU are code for other GPUs
// alone, beside running containers holding `running` (layouts of real libraries:
// cuBLASLt 12.9, cuDNN 9.28, vllm 0.33.0, onnxruntime-gpu 1.31.1).
func TestForOtherGPUs(t *testing.T) {
	tests := []struct {
		gpu, targets, running string
		want                  bool
	}{
		{"9.0", "sm_100 sm_103 sm_120 sm_121", "sm_90", true},   // cuBLASLt: Blackwell only
		{"9.0", "sm_100 compute_120", "sm_90", true},            // newer, PTX too
		{"9.0", "sm_75", "sm_75 sm_80 sm_90 sm_120", true},      // cuDNN, vllm: Turing only
		{"9.0", "sm_89 sm_120f", "sm_80 sm_89 sm_120f", true},   // vllm: FP8 for Ada and Blackwell
		{"8.0", "sm_90a", "sm_80", true},                        // arch-specific, found nowhere else
		{"12.0", "sm_100f", "sm_120", true},                     // family of another major
		{"9.0", "sm_75", "sm_80 sm_90", false},                  // older, and the build has no sm_75: left out
		{"9.0", "sm_80 sm_86", "sm_90 sm_86", false},            // sm_80 found nowhere that runs
		{"9.0", "compute_80", "sm_90", false},                   // cannot happen (PTX 8.0 JITs on 9.0), but older
		{"9.0", "", "sm_90", false},                             // no targets
		{"10.3", "sm_100a sm_103f sm_80", "sm_103 sm_80", true}, // each target one of the kinds
		{"10.3", "sm_100a sm_86", "sm_103 sm_80", false},        // sm_86: older, not running
	}
	for _, tc := range tests {
		cc, err := ParseCapability(tc.gpu)
		if err != nil {
			t.Fatal(err)
		}
		var ts []Target
		for _, s := range strings.Fields(tc.targets) {
			tg, err := ParseTarget(s)
			if err != nil {
				t.Fatal(err)
			}
			ts = append(ts, tg)
		}
		run := strings.Fields(tc.running)
		got := ForOtherGPUs(ts, cc, func(t Target) bool { return slices.Contains(run, t.String()) })
		if got != tc.want {
			t.Errorf("{%s} on %s beside {%s}: %v, want %v", tc.targets, tc.gpu, tc.running, got, tc.want)
		}
	}
}
