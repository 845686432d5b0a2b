package explain

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

// What pasting puts around a program's words is stripped; the words stay.
// The prefixes are the corpus's own (testdata/corpus).
func TestNormalizeLine(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"> RuntimeError: Ninja is required to load C++ extensions", "RuntimeError: Ninja is required to load C++ extensions"},
		{">>   File \"x.py\", line 3", "File \"x.py\", line 3"},
		{"Oct 04 13:19:39 llm sd-webui-forge-start[394]: NVIDIA GeForce RTX 5090 with CUDA capability sm_120 is not compatible", "NVIDIA GeForce RTX 5090 with CUDA capability sm_120 is not compatible"},
		{"ERROR 01-11 13:09:40 engine.py:366] RuntimeError: boom", "RuntimeError: boom"},
		{"(VllmWorker rank=3 pid=1090) ERROR 06-05 06:18:13 [multiproc_executor.py:470] RuntimeError: CUDA error: out of memory", "RuntimeError: CUDA error: out of memory"},
		{"[rank0]: ImportError: x.so: undefined symbol: _ZN3c104cuda9SetDeviceEi", "ImportError: x.so: undefined symbol: _ZN3c104cuda9SetDeviceEi"},
		{"2024-04-26T02:20:01.5211732Z FAILED: a.o", "FAILED: a.o"},
		{"[2024-09-27 23:42:23,326] [INFO] [real_accelerator.py:203:get_accelerator] Setting ds_accelerator", "[INFO] [real_accelerator.py:203:get_accelerator] Setting ds_accelerator"},
		{"[I 2024-01-05 10:00:00.123 ServerApp] Kernel started", "Kernel started"},
		{"#12 34.56 error: subprocess-exited-with-error", "error: subprocess-exited-with-error"},
		{"\x1b[31mImportError\x1b[0m: libcudart.so.12: cannot open shared object file", "ImportError: libcudart.so.12: cannot open shared object file"},
		{"[0;31mImportError[0m: libcudart.so.12: cannot open", "ImportError: libcudart.so.12: cannot open"},
		{"**ImportError: a.so: undefined symbol: _ZN3c10**", "ImportError: a.so: undefined symbol: _ZN3c10"},
		{"Downloading 10%\rDownloading 100%\r\n", "Downloading 100%"},
		{"plain line\r\n", "plain line"},
		// Not prefixes: left alone.
		{"[1/85] /usr/local/cuda/bin/nvcc -c a.cu", "[1/85] /usr/local/cuda/bin/nvcc -c a.cu"},
		{"2.1.0+cu121 with CUDA 1201", "2.1.0+cu121 with CUDA 1201"},
		{"Device 0: NVIDIA H200", "Device 0: NVIDIA H200"},
	} {
		var n normalizer
		if got := string(n.line([]byte(tc.in))); strings.TrimSpace(got) != tc.want {
			t.Errorf("%q:\n got %q\nwant %q", tc.in, got, tc.want)
		}
	}
}

// A mangled symbol a terminal broke over three lines is read whole.
func TestWrappedSymbol(t *testing.T) {
	log := "ImportError: /venv/lib/python3.12/site-packages/selective_scan_cuda.cpython-312-x86_64-linux-gnu.so: undefined symbol: _ZN3c107WarningC1ESt7variantIJNS0_11User\n" +
		"WarningENS0_18DeprecationWarningEEERKNS_14SourceLocationENSt7__cxx1112basic_stringIcSt11char_\n" +
		"traitsIcESaIcEEEb\n" +
		"Aborted (core dumped)\n"
	s, err := Default().Scan(strings.NewReader(log))
	if err != nil {
		t.Fatal(err)
	}
	fs := Findings(s, nil)
	if len(fs) != 1 {
		t.Fatalf("findings %v", ids(fs))
	}
	if want := "c10::Warning::Warning(std::variant<c10::Warning::UserWarning, c10::Warning::DeprecationWarning>, c10::SourceLocation const&, std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> >, bool)"; !strings.Contains(fs[0].Title, want) {
		t.Errorf("title %q\nwant it to name %q", fs[0].Title, want)
	}
	if !strings.Contains(fs[0].Title, "mamba-ssm") {
		t.Errorf("title %q does not name mamba-ssm", fs[0].Title)
	}
}

// The facts a log states about its environment, each with its line.
func TestLogFacts(t *testing.T) {
	read := func(name string) *LogFacts {
		t.Helper()
		fh, err := os.Open(filepath.Join("testdata/corpus", name))
		if err != nil {
			t.Fatal(err)
		}
		defer fh.Close()
		s, err := Default().Scan(fh)
		if err != nil {
			t.Fatal(err)
		}
		return &s.Facts
	}
	val := func(f *LogFact) string {
		if f == nil {
			return ""
		}
		return f.Value
	}
	lf := read("apex-1748-cuda-version-check.log")
	if val(lf.Torch) != "2.1.0+cu121" || val(lf.TorchCUDA) != "12.1" || val(lf.NVCC) != "12.3" || lf.NVCC.Line != 7 || val(lf.BuildSystem) != "setuptools" {
		t.Errorf("apex: %+v", lf.Describe())
	}
	lf = read("mamba-704-symbol-with-versions.log")
	if val(lf.Torch) != "2.6.0+cu126" || val(lf.NVCC) != "12.6" || val(lf.Driver) != "560.35.03" || val(lf.DriverCUDA) != "12.6" || val(lf.Python) != "3.10" {
		t.Errorf("mamba-704: %+v", lf.Describe())
	}
	if lf := read("mamba-chat-3-macos-bare-metal.log"); val(lf.Platform) != "macos" {
		t.Errorf("macOS log: %+v", lf.Describe())
	}
	if lf := read("comfyui-trellis-40-fa-ampere-windows.log"); val(lf.Platform) != "windows" {
		t.Errorf("Windows log: %+v", lf.Describe())
	}
	if lf := read("vixtts-demo-12-deepspeed-missing-cuda.log"); val(lf.Platform) != "wsl" {
		t.Errorf("WSL log: %+v", lf.Describe())
	}
	if lf := read("tkdnn-134-gcc-cmake.log"); val(lf.BuildSystem) != "cmake" {
		t.Errorf("CMake log: %+v", lf.Describe())
	}
	if lf := read("llama-cpp-11841-gpu-busy.log"); val(lf.GPU) != "GRID A100D-16C" || val(lf.Capability) != "8.0" {
		t.Errorf("ggml log: %+v", lf.Describe())
	}
	if lf := read("flymyai-47-sm120-first-char.log"); val(lf.Capability) != "12.0" {
		t.Errorf("sm_120 log: %+v", lf.Describe())
	}
	if lf := read("graphwriter-6-driver-too-old.log"); val(lf.DriverCUDA) != "6.5" {
		t.Errorf("driver log: %+v", lf.Describe())
	}
}

// FuzzNormalize: any line normalizes without panicking, to a suffix-ish
// part of itself that never grows, and stays valid where it was valid.
func FuzzNormalize(f *testing.F) {
	for _, c := range corpusSeeds(f) {
		for _, l := range strings.SplitN(string(c), "\n", 8) {
			f.Add([]byte(l))
		}
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		var n normalizer
		got := n.line(line)
		if len(got) > len(line) {
			t.Fatalf("normalized %q grew to %q", line, got)
		}
		if utf8.Valid(line) && !utf8.Valid(got) {
			t.Fatalf("normalized %q is not UTF-8: %q", line, got)
		}
	})
}

// FuzzLogFacts: any log's facts are read without panicking, each within
// the lines read and capped in length.
func FuzzLogFacts(f *testing.F) {
	for _, c := range corpusSeeds(f) {
		f.Add(c)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := Default().Scan(strings.NewReader(string(data)))
		if err != nil {
			t.Fatal(err)
		}
		for _, nf := range s.Facts.list() {
			if nf.f.Line < 1 || nf.f.Line > s.Lines || len(nf.f.Value) > 200 || nf.f.Value == "" {
				t.Fatalf("fact %s %+v of %d lines", nf.name, nf.f, s.Lines)
			}
		}
		same, _ := s.Facts.SameEnvironment(nil)
		if same {
			t.Fatal("no machine facts cannot be the same environment")
		}
	})
}

// corpusSeeds are the real logs of the corpus, for the fuzzers' seeds.
func corpusSeeds(f *testing.F) [][]byte {
	entries, err := os.ReadDir("testdata/corpus")
	if err != nil {
		f.Fatal(err)
	}
	var out [][]byte
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".log") {
			b, err := os.ReadFile(filepath.Join("testdata/corpus", e.Name()))
			if err != nil {
				f.Fatal(err)
			}
			out = append(out, b)
		}
	}
	return out
}
