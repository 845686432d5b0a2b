package nvcc

import (
	"testing"
)

func TestVersionParsers(t *testing.T) {
	tests := []struct {
		name  string
		parse func([]byte) (string, error)
		in    string
		want  string // "" means an error is expected
	}{
		{"version.json 12.8", ParseVersionJSON, `{"cuda":{"name":"CUDA SDK","version":"12.8.1"},"cuda_nvcc":{"name":"CUDA NVCC","version":"12.8.93"}}`, "12.8.93"},
		{"version.json without nvcc", ParseVersionJSON, `{"cuda":{"name":"CUDA SDK","version":"11.8.0"}}`, "11.8.0"},
		{"version.json junk version", ParseVersionJSON, `{"cuda_nvcc":{"version":"../../etc"}}`, ""},
		{"version.json wrong types", ParseVersionJSON, `{"cuda_nvcc":[1,2],"cuda":{"version":12}}`, ""},
		{"version.json truncated", ParseVersionJSON, `{"cuda_nvcc":{"version":"12.`, ""},
		{"version.txt 11.0", ParseVersionTxt, "CUDA Version 11.0.228\n", "11.0.228"},
		{"version.txt 10.2", ParseVersionTxt, "CUDA Version 10.2.89", "10.2.89"},
		{"version.txt junk", ParseVersionTxt, "\x7fELF\x00CUDA Version x", ""},
		{"nvcc 12.8", ParseNvccVersion, "nvcc: NVIDIA (R) Cuda compiler driver\nCopyright (c) 2005-2025 NVIDIA Corporation\nBuilt on Fri_Feb_21_20:23:50_PST_2025\nCuda compilation tools, release 12.8, V12.8.93\nBuild cuda_12.8.r12.8/compiler.35583870_0\n", "12.8.93"},
		{"nvcc 13.0", ParseNvccVersion, "Cuda compilation tools, release 13.0, V13.0.88\n", "13.0.88"},
		{"nvcc release only", ParseNvccVersion, "Cuda compilation tools, release 9.2\n", "9.2"},
		{"nvcc nothing", ParseNvccVersion, "bash: nvcc: command not found\n", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.parse([]byte(tc.in))
			if tc.want == "" {
				if err == nil {
					t.Errorf("got %q, want an error", got)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Errorf("got %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}

func TestPythonPathHelpers(t *testing.T) {
	for _, tc := range []struct{ in, dir2 string }{
		{"/usr/local/cuda/bin/nvcc", "/usr/local/cuda"},
		{"/usr/local/cuda/bin//nvcc", "/usr/local/cuda"},
		{"/opt/x/bin/./nvcc", "/opt/x/bin"},
		{"/bin/nvcc", "/"},
		{"nvcc", ""},
	} {
		if got := pyDirname(pyDirname(tc.in)); got != tc.dir2 {
			t.Errorf("dirname(dirname(%q)) = %q, want %q", tc.in, got, tc.dir2)
		}
	}
	if got := pyJoin("/usr/local/cuda/", "bin", "nvcc"); got != "/usr/local/cuda/bin/nvcc" {
		t.Errorf("pyJoin = %q", got)
	}
	if got := pyJoin("/a", "/b", "c"); got != "/b/c" {
		t.Errorf("pyJoin restart = %q", got)
	}
}

// Every parser: no panic, and a version is always a short dotted number.
func checkVersion(t *testing.T, v string, err error) {
	if err == nil && !versionRE.MatchString(v) {
		t.Fatalf("accepted %q, not a dotted version", v)
	}
}

func FuzzVersionJSON(f *testing.F) {
	f.Add([]byte(`{"cuda":{"name":"CUDA SDK","version":"12.8.1"},"cuda_nvcc":{"name":"CUDA NVCC","version":"12.8.93"}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := ParseVersionJSON(data)
		checkVersion(t, v, err)
	})
}

func FuzzVersionTxt(f *testing.F) {
	f.Add([]byte("CUDA Version 11.0.228\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := ParseVersionTxt(data)
		checkVersion(t, v, err)
	})
}

func FuzzNvccVersion(f *testing.F) {
	f.Add([]byte("Cuda compilation tools, release 12.8, V12.8.93\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := ParseNvccVersion(data)
		checkVersion(t, v, err)
	})
}
