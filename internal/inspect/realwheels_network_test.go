package inspect

import (
	"archive/zip"
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/fastpath-dev/fastpath/internal/testenv"
)

// realWheels are the real packages `inspect --cuobjdump` is held to cuobjdump on:
// torch's CUDA wheel (its libraries, never installed), the kernel packages of the
// issue, an old bitsandbytes with CUDA 11 libraries, and a package of bare cubins.
var realWheels = []string{
	"torch==2.15.0",
	"bitsandbytes==0.50.2",
	"bitsandbytes==0.41.1",
	"xformers==0.0.35",
	"sgl-kernel==0.3.21",
	"vllm==0.33.0",
	"cupy-cuda12x==14.2.0",
	"flashinfer-cubin==0.6.13",
	// compute_120f PTX in every library, which cuobjdump lists as sm_120f.ptx (session 11).
	"nvidia-cudnn-cu12==9.28.0.42",
}

// cuobjdumpOracle is NVIDIA's pip cuobjdump (cli's oracle test uses the same).
const cuobjdumpOracle = "nvidia-cuda-cuobjdump==13.5.37"

// cubinSampleEvery: flashinfer-cubin holds 15970 bare cubins; every e_flags value is
// compared, plus one cubin in this many (FASTPATH_ALL_CUBINS=1 compares them all,
// about 15 minutes on two cores).
const cubinSampleEvery = 40

// TestNetworkRealWheelsCuobjdump unpacks the native files of each wheel and compares
// `fastpath inspect --cuobjdump` with cuobjdump --list-elf then --list-ptx on every
// one that has CUDA code, printing "N of M identical". Files cuobjdump itself
// rejects ("Invalid ELF" part way) are named apart, with what fastpath lists there.
func TestNetworkRealWheelsCuobjdump(t *testing.T) {
	if testing.Short() {
		t.Skip("downloads about 2 GB of wheels once into the test cache")
	}
	cuobjdump := oracleCuobjdump(t)
	dir := testenv.Wheels(t, realWheels...)
	tmp := t.TempDir()
	var files []string
	s := &cubinSampler{all: os.Getenv("FASTPATH_ALL_CUBINS") == "1", seen: map[string]bool{}}
	for _, req := range realWheels {
		name, version, _ := strings.Cut(req, "==")
		whl := glob1(t, dir, strings.ReplaceAll(name, "-", "_")+"-"+version+"-*.whl")
		files = append(files, unzipNative(t, whl, filepath.Join(tmp, name+"-"+version), s)...)
	}
	t.Logf("bare cubins: %d, compared %d (every e_flags class, and one in %d; FASTPATH_ALL_CUBINS=1 for all)", s.n, s.kept, cubinSampleEvery)

	type result struct {
		path, verdict, diff string
	}
	results := make([]result, len(files))
	var wg sync.WaitGroup
	next := make(chan int)
	for range runtime.NumCPU() {
		wg.Go(func() {
			for i := range next {
				f := files[i]
				wantOut, wantErr := runCuobjdump(cuobjdump, f)
				want := wantOut + wantErr
				switch {
				case strings.Contains(want, "does not contain device code"):
					results[i] = result{f, "nocode", ""}
					continue
				case strings.Contains(wantErr, "cuobjdump fatal   : Invalid ELF"):
					results[i] = result{f, "rejected", strings.TrimSpace(wantErr)}
					continue
				}
				var gotOut, gotErr bytes.Buffer
				if err := Cuobjdump(&gotOut, &gotErr, Read(f), "/", false); err != nil {
					t.Errorf("%s: %v", f, err)
				}
				if gotOut.String() == wantOut && gotErr.String() == wantErr {
					results[i] = result{f, "same", ""}
				} else {
					results[i] = result{f, "diff", fmt.Sprintf("fastpath:\n%.1500s%.500s\ncuobjdump:\n%.1500s%.500s", gotOut.String(), gotErr.String(), wantOut, wantErr)}
				}
			}
		})
	}
	for i := range files {
		next <- i
	}
	close(next)
	wg.Wait()

	same, compared := 0, 0
	var rejected []string
	for _, r := range results {
		rel := strings.TrimPrefix(r.path, tmp+"/")
		switch r.verdict {
		case "same":
			same++
			compared++
		case "diff":
			compared++
			t.Errorf("%s differs:\n%s", rel, r.diff)
		case "rejected":
			got := Read(r.path)
			rejected = append(rejected, fmt.Sprintf("%s (cuobjdump: %q; fastpath lists %d entries from the headers)", rel, lastLine(r.diff), got.Entries))
		}
	}
	t.Logf("inspect --cuobjdump vs cuobjdump %s: %d of %d identical (%d native files read, %d without CUDA code)", cuobjdumpOracle, same, compared, len(files), len(files)-compared-len(rejected))
	for _, r := range rejected {
		t.Logf("rejected by cuobjdump itself: %s", r)
	}
	if compared < 50 {
		t.Errorf("only %d files with CUDA code compared", compared)
	}
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}

func runCuobjdump(cuobjdump, path string) (stdout, stderr string) {
	var o, e bytes.Buffer
	for _, flag := range []string{"--list-elf", "--list-ptx"} {
		cmd := exec.Command(cuobjdump, flag, path)
		cmd.Stdout, cmd.Stderr = &o, &e
		_ = cmd.Run()
	}
	return o.String(), e.String()
}

func glob1(t *testing.T, dir, pattern string) string {
	t.Helper()
	m, _ := filepath.Glob(filepath.Join(dir, pattern))
	if len(m) == 0 {
		t.Fatalf("no %s in %s", pattern, dir)
	}
	return m[0]
}

func unzipMember(t *testing.T, whl, member, to string) error {
	t.Helper()
	zr, err := zip.OpenReader(whl)
	if err != nil {
		return err
	}
	defer zr.Close()
	for _, f := range zr.File {
		if f.Name == member {
			return extract(f, to, 0o755)
		}
	}
	return fmt.Errorf("%s has no %s", whl, member)
}

func extract(f *zip.File, to string, mode os.FileMode) error {
	rc, err := f.Open()
	if err != nil {
		return err
	}
	defer rc.Close()
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		return err
	}
	w, err := os.OpenFile(to, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, mode)
	if err != nil {
		return err
	}
	if _, err := io.Copy(w, rc); err != nil {
		w.Close()
		return err
	}
	return w.Close()
}

// unzipNative extracts the wheel's shared objects, fatbins and the sampled cubins
// (the files that can hold CUDA code) below to, and returns their paths, sorted.
func unzipNative(t *testing.T, whl, to string, s *cubinSampler) []string {
	t.Helper()
	out := unzipWhere(t, whl, to, func(f *zip.File) bool {
		base := filepath.Base(f.Name)
		if !(strings.Contains(base, ".so") || strings.HasSuffix(base, ".cubin") || strings.HasSuffix(base, ".fatbin")) {
			return false
		}
		return !strings.HasSuffix(base, ".cubin") || s.keep(t, f)
	})
	sort.Strings(out)
	return out
}

// unzipWhere extracts the wheel's members that keep accepts below to (never a folder
// or a name with ".."), and returns their paths in the wheel's order.
func unzipWhere(t *testing.T, whl, to string, keep func(*zip.File) bool) []string {
	t.Helper()
	zr, err := zip.OpenReader(whl)
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	var out []string
	for _, f := range zr.File {
		if f.FileInfo().IsDir() || strings.Contains(f.Name, "..") || !keep(f) {
			continue
		}
		p := filepath.Join(to, filepath.FromSlash(f.Name))
		if err := extract(f, p, 0o644); err != nil {
			t.Fatal(err)
		}
		out = append(out, p)
	}
	return out
}

// cubinSampler keeps, of the bare cubins, one per distinct ELF header class (ABI
// version and e_flags: what tells sm_100 from sm_100a) plus one in cubinSampleEvery,
// or all of them.
type cubinSampler struct {
	all     bool
	seen    map[string]bool
	n, kept int
}

func (s *cubinSampler) keep(t *testing.T, f *zip.File) bool {
	s.n++
	var h [64]byte
	if rc, err := f.Open(); err == nil {
		io.ReadFull(rc, h[:])
		rc.Close()
	}
	class := fmt.Sprintf("%d/%#x", h[8], binary.LittleEndian.Uint32(h[48:]))
	if s.all || !s.seen[class] || s.n%cubinSampleEvery == 0 {
		s.seen[class] = true
		s.kept++
		return true
	}
	return false
}
