package kb

import (
	"slices"
	"testing"
)

// ForVersion: the latest run for "" and for releases from the newest
// run's start on; an older run's sdist and targets inside it; unknown
// targets below every run read.
func TestBuildProfileForVersion(t *testing.T) {
	p := Builds().Packages["causal-conv1d"]
	for _, tc := range []struct {
		v, sdist string
		known    bool
		sms124   []int
	}{
		{"", "causal_conv1d-1.7.0.tar.gz", true, []int{75, 80, 87, 90}},
		{"1.7.0", "causal_conv1d-1.7.0.tar.gz", true, []int{75, 80, 87, 90}},
		{"1.6.2.post1", "causal_conv1d-1.7.0.tar.gz", true, []int{75, 80, 87, 90}},
		{"1.6.1", "causal_conv1d-1.6.1.tar.gz", true, []int{62, 70, 72, 75, 80, 87, 90}},
		{"1.5.3.post1", "causal_conv1d-1.6.1.tar.gz", true, []int{62, 70, 72, 75, 80, 87, 90}},
		{"1.4.0", "causal_conv1d-1.7.0.tar.gz", false, nil},
	} {
		got, known := p.ForVersion(tc.v)
		if got.Sdist != tc.sdist || known != tc.known || !slices.Equal(got.TargetsFor("12.4"), tc.sms124) {
			t.Errorf("ForVersion(%q) = %s %v known %v, want %s %v known %v", tc.v, got.Sdist, got.TargetsFor("12.4"), known, tc.sdist, tc.sms124, tc.known)
		}
		if !known && got.Narrowable {
			t.Errorf("ForVersion(%q): unknown targets cannot be narrowed", tc.v)
		}
	}
	// With nvcc 13.0 the older run builds what 1.7.0 does (<= 12.9 only).
	old, _ := p.ForVersion("1.6.1")
	if !slices.Equal(old.TargetsFor("13.0"), p.TargetsFor("13.0")) {
		t.Errorf("nvcc 13.0: 1.6.1 %v, 1.7.0 %v", old.TargetsFor("13.0"), p.TargetsFor("13.0"))
	}
	// The V100's sm_70 with nvcc 12.4: only the older run has it.
	has70 := func(sms []int) bool { return slices.Contains(sms, 70) }
	if o, ok := p.OlderFor("12.4", has70); !ok || o.Version != "1.6.1" {
		t.Errorf("OlderFor(12.4, sm_70) = %+v %v", o, ok)
	}
	if _, ok := p.OlderFor("13.0", has70); ok {
		t.Error("no release builds sm_70 with nvcc 13.0")
	}
}
