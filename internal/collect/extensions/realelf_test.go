package extensions_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fastpath-dev/fastpath/internal/collect"
	"github.com/fastpath-dev/fastpath/internal/diagnose"
	"github.com/fastpath-dev/fastpath/internal/finding"
	"github.com/fastpath-dev/fastpath/internal/fixture"
	"github.com/fastpath-dev/fastpath/internal/source"
)

// A small "torch" and an extension compiled by the system's C++ compiler,
// as torch extensions are: the extension is built against a libtorch_cpu.so
// that has at::Tensor::print() const, and then runs with one that lacks it.
var realSources = map[string]string{
	"c10.h": `#pragma once
#include <string>
namespace c10 {
struct Error {
  Error(const std::string& msg, const char* file, int line);
  std::string what;
};
void warn(const char* msg);
}
`,
	"at.h": `#pragma once
namespace at {
struct Tensor {
  long n;
  long dim() const;
  void print() const;
};
Tensor ones(long n);
}
`,
	"c10.cpp": `#include "c10.h"
namespace c10 {
Error::Error(const std::string& msg, const char* file, int line) : what(msg + file + std::to_string(line)) {}
void warn(const char* msg) { (void)msg; }
}
`,
	"torch_cpu_new.cpp": `#include "at.h"
#include "c10.h"
#include <cstdio>
namespace at {
long Tensor::dim() const { return 1; }
void Tensor::print() const { std::printf("tensor(%ld)\n", n); }
Tensor ones(long n) { if (n < 0) c10::warn("negative"); return Tensor{n}; }
}
`,
	// The torch actually installed: print() is gone.
	"torch_cpu_old.cpp": `#include "at.h"
#include "c10.h"
namespace at {
long Tensor::dim() const { return 1; }
Tensor ones(long n) { if (n < 0) c10::warn("negative"); return Tensor{n}; }
}
`,
	"ext.cpp": `#include "at.h"
#include "c10.h"
extern "C" int PyInit__C() {
  at::Tensor t = at::ones(3);
  if (t.dim() != 1) throw c10::Error("bad dim", __FILE__, __LINE__);
  t.print();
  return 0;
}
`,
}

func compile(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("g++", append([]string{"-shared", "-fPIC", "-O1"}, args...)...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("g++ %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

func TestRealELFABIMismatch(t *testing.T) {
	if testing.Short() {
		t.Skip("compiles four C++ libraries with g++: not under -short")
	}
	if _, err := exec.LookPath("g++"); err != nil {
		t.Skip("g++ not installed: the real-ELF ABI test needs a C++ compiler")
	}
	build := t.TempDir()
	for name, src := range realSources {
		if err := os.WriteFile(filepath.Join(build, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, d := range []string{"new", "old"} {
		if err := os.Mkdir(filepath.Join(build, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	compile(t, build, "-o", "libc10.so", "-Wl,-soname,libc10.so", "c10.cpp")
	compile(t, build, "-o", "new/libtorch_cpu.so", "-Wl,-soname,libtorch_cpu.so", "torch_cpu_new.cpp", "-L.", "-lc10")
	compile(t, build, "-o", "old/libtorch_cpu.so", "-Wl,-soname,libtorch_cpu.so", "torch_cpu_old.cpp", "-L.", "-lc10")
	compile(t, build, "-o", "_C.so", "ext.cpp", "-Lnew", "-L.", "-ltorch_cpu", "-lc10")
	read := func(name string) []byte {
		b, err := os.ReadFile(filepath.Join(build, name))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	extPath := site + "/fake_kernels/_C.cpython-312-x86_64-linux-gnu.so"
	_, root := machine(t, func(tr *fixture.Tree) {
		tr.File(torchLib+"/libc10.so", string(read("libc10.so")))
		tr.File(torchLib+"/libtorch_cpu.so", string(read("old/libtorch_cpu.so")))
		tr.ExtensionDist(site, fixture.Dist{Name: "fake-kernels", Version: "0.3.0+cu12torch2.6cxx11abiTRUE", Tag: "cp312-cp312-linux_x86_64"},
			map[string][]byte{"fake_kernels/_C.cpython-312-x86_64-linux-gnu.so": read("_C.so")})
	})
	src, err := source.Root(root, nil)
	if err != nil {
		t.Fatal(err)
	}
	f := collect.Collect(context.Background(), src, collect.Options{Python: venvPrefix + "/bin/python3", GPUs: []string{"9.0"}})
	if len(f.Extensions) != 1 {
		t.Fatalf("extensions: %+v (warnings %q)", f.Extensions, f.Warnings)
	}
	e := f.Extensions[0]
	if e.Path != extPath || !e.LinksTorch || !slices.Contains(e.Needed, "libtorch_cpu.so") || !slices.Contains(e.Needed, "libc10.so") {
		t.Errorf("extension: %+v", e)
	}
	if e.MissingCount != 1 || !slices.Equal(e.MissingSymbols, []string{"at::Tensor::print() const"}) {
		t.Fatalf("missing %d: %q", e.MissingCount, e.MissingSymbols)
	}
	var fd *finding.Finding
	for _, x := range diagnose.Run(f) {
		if x.ID == finding.ExtensionABIMismatch {
			fd = &x
		}
	}
	if fd == nil {
		t.Fatal("extension-abi-mismatch did not fire")
	}
	ev := strings.Join(fd.Evidence, "\n")
	for _, want := range []string{"missing: at::Tensor::print() const", extPath, "built for torch 2.6; torch 2.11.0+cu128 is installed"} {
		if !strings.Contains(ev, want) {
			t.Errorf("evidence lacks %q:\n%s", want, ev)
		}
	}
	if fd.Severity != finding.Error || !strings.Contains(fd.Title, "fake-kernels 0.3.0+cu12torch2.6cxx11abiTRUE") {
		t.Errorf("%s: %s", fd.Severity, fd.Title)
	}

	// With the torch it was built against, nothing is missing.
	tr := fixture.New(root)
	tr.File(torchLib+"/libtorch_cpu.so", string(read("new/libtorch_cpu.so")))
	f = collect.Collect(context.Background(), src, collect.Options{Python: venvPrefix + "/bin/python3", GPUs: []string{"9.0"}})
	if len(f.Extensions) != 1 || f.Extensions[0].MissingCount != 0 {
		t.Fatalf("with the matching torch: %+v", f.Extensions)
	}
	for _, x := range diagnose.Run(f) {
		if x.ID == finding.ExtensionABIMismatch {
			t.Errorf("fired with the matching torch: %s", x.Title)
		}
	}
}
