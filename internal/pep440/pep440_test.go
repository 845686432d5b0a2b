package pep440

import "testing"

func TestNormalizeAndCompare(t *testing.T) {
	for in, want := range map[string]string{"1.0-post1": "1.0.post1", "2.11.0+cu128": "2.11.0+cu128", "1.0.0RC1": "1.0.0rc1", "not a version": "not a version"} {
		if got := Normalize(in); got != want {
			t.Errorf("Normalize(%q) = %q, want %q", in, got, want)
		}
	}
	a, _ := Parse("12.8.93")
	b, _ := Parse("12.10")
	if a.Compare(b) >= 0 {
		t.Errorf("12.8.93 should sort before 12.10")
	}
}

func TestLess(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want bool
	}{
		{"4.57.6", "5.0.0", true},
		{"5.0.0rc1", "5.0.0", true}, // a pre-release is older (PEP 440)
		{"5.0.0", "5.0.0rc1", false},
		{"2.11.0+cu128", "2.11.0", false}, // a local label is newer, not older
		{"0.4.1", "0.4.1", false},
		{"1.2.x", "1.3", true}, // does not parse: dotted numbers
		{"1.3", "1.2.x", false},
	} {
		if got := Less(tc.a, tc.b); got != tc.want {
			t.Errorf("Less(%q, %q) = %v, want %v", tc.a, tc.b, got, tc.want)
		}
	}
}
