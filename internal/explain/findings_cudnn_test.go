package explain

import "testing"

// TestCudnnVersion reads the versions torch prints in its cuDNN check:
// the tuple since torch 1.12 and the CUDNN_VERSION integer of torch
// 1.0-1.4 (MAJOR*1000+MINOR*100+PATCHLEVEL before cuDNN 9,
// MAJOR*10000+MINOR*100+PATCHLEVEL from cuDNN 9: cudnn_version.h).
func TestCudnnVersion(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"8, 7, 0", "8.7.0"},
		{"9, 19, 0", "9.19.0"},
		{"7102", "7.1.2"},
		{"7605", "7.6.5"},
		{"8907", "8.9.7"},
		{"90100", "9.1.0"},
		{"91002", "9.10.2"},
		{"8", "8"},
	} {
		if got := cudnnVersion(c.in); got != c.want {
			t.Errorf("cudnnVersion(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
