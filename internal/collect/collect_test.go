package collect

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/fastpath-dev/fastpath/internal/fixture"
	"github.com/fastpath-dev/fastpath/internal/source"
)

// The collectors run side by side and read through one shared cache: the
// facts must come out the same, byte for byte, however they interleave.
// The tree is the seed container plus native libraries of every kind, so
// that the extension pool, the ABI check and the cache all race.
func TestCollectDeterministic(t *testing.T) {
	root := t.TempDir()
	if err := fixture.Seed(root); err != nil {
		t.Fatal(err)
	}
	tr := fixture.New(root)
	sp := fixture.SeedVenv + "/lib/python3.12/site-packages"
	for i := range 12 {
		sos := map[string][]byte{}
		for k := range 6 {
			so := fixture.SharedObject{Needed: []string{"libc10.so", "libtorch_cpu.so"}, Undefined: []string{"_ZNK2at6Tensor5printEv"}}
			if k%2 == 1 {
				so = fixture.SharedObject{Needed: []string{"libcudart.so.12"}, Sections: []fixture.NamedSection{{Name: ".nv_fatbin", Data: fixture.FatbinSection([]string{"sm_80"})}}}
			}
			sos[fmt.Sprintf("kern%02d/_k%d.so", i, k)] = so.Bytes()
		}
		tr.ExtensionDist(sp, fixture.Dist{Name: fmt.Sprintf("kern%02d", i), Version: "1.0", Tag: "cp312-cp312-linux_x86_64"}, sos)
	}
	if err := tr.Err(); err != nil {
		t.Fatal(err)
	}
	env, err := source.ParseEnv(fixture.SeedEnv)
	if err != nil {
		t.Fatal(err)
	}
	var first []byte
	for i := range 20 {
		src, err := source.Root(root, env)
		if err != nil {
			t.Fatal(err)
		}
		f := Collect(context.Background(), src, Options{GPUs: []string{"12.0"}, ToolVersion: "test"})
		if len(f.Extensions) != 72 {
			t.Fatalf("%d extensions, want 72", len(f.Extensions))
		}
		b, err := json.Marshal(f)
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			first = b
		} else if !bytes.Equal(b, first) {
			t.Fatalf("run %d gave other facts than run 0:\n%s\n%s", i, b, first)
		}
	}
}

// With Timings, every collector reports, and what they read adds up.
func TestTimings(t *testing.T) {
	root := t.TempDir()
	if err := fixture.Seed(root); err != nil {
		t.Fatal(err)
	}
	env, _ := source.ParseEnv(fixture.SeedEnv)
	src, err := source.Root(root, env)
	if err != nil {
		t.Fatal(err)
	}
	f := Collect(context.Background(), src, Options{GPUs: []string{"12.0"}, Timings: true})
	if f.Timings == nil {
		t.Fatal("no timings")
	}
	names := map[string]bool{}
	var bytesRead int64
	for _, c := range f.Timings.Collectors {
		names[c.Name] = true
		bytesRead += c.Bytes
	}
	for _, n := range []string{"os", "env", "gpu", "python", "torch", "nvcc", "extensions", "toolchain"} {
		if !names[n] {
			t.Errorf("no timing for %s", n)
		}
	}
	if f.Timings.Files < 50 || bytesRead != f.Timings.Bytes || f.Timings.TotalMS <= 0 {
		t.Errorf("files %d, bytes %d (collectors %d), total %.1f ms", f.Timings.Files, f.Timings.Bytes, bytesRead, f.Timings.TotalMS)
	}
	// Without the option the facts carry none.
	if g := Collect(context.Background(), src, Options{GPUs: []string{"12.0"}}); g.Timings != nil {
		t.Error("timings without --timings")
	}
}
