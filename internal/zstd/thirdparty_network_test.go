package zstd

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"os/exec"
	"testing"

	kzstd "github.com/klauspost/compress/zstd"

	"github.com/fastpath-dev/fastpath/internal/testenv"
)

// TestThirdPartyFrameNetwork decodes a zstd file nobody here wrote: the
// test fixture another decoder's authors ship, test_fixtures/abc.txt.zst in
// the crate ruzstd 0.7.3 from crates.io. Ours must give what klauspost's
// decoder and, when present, the zstd CLI give.
func TestThirdPartyFrameNetwork(t *testing.T) {
	testenv.Network(t)
	crate := testenv.Download(t, "https://static.crates.io/crates/ruzstd/ruzstd-0.7.3.crate", "ruzstd-0.7.3.crate",
		"fad02996bfc73da3e301efe90b1837be9ed8f4a462b6ed410aa35d00381de89f")
	comp := tarMember(t, crate, "ruzstd-0.7.3/test_fixtures/abc.txt.zst")
	got, err := decodeAll(t, comp, 64<<20)
	if err != nil {
		t.Fatal(err)
	}
	kr, err := kzstd.NewReader(bytes.NewReader(comp))
	if err != nil {
		t.Fatal(err)
	}
	defer kr.Close()
	want, err := io.ReadAll(kr)
	if err != nil {
		t.Fatal(err)
	}
	if len(want) == 0 {
		t.Fatal("klauspost decoded nothing: not the fixture this test expects")
	}
	mustEqual(t, "abc.txt.zst against klauspost", got, want)
	if _, err := exec.LookPath("zstd"); err == nil {
		cmd := exec.Command("zstd", "-dc")
		cmd.Stdin = bytes.NewReader(comp)
		cli, err := cmd.Output()
		if err != nil {
			t.Fatal(err)
		}
		mustEqual(t, "abc.txt.zst against zstd -dc", got, cli)
	}
}

// tarMember returns the file name from the gzipped tar at path.
func tarMember(t *testing.T, path, name string) []byte {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if err != nil {
			t.Fatalf("%s: no %s (%v)", path, name, err)
		}
		if h.Name == name {
			b, err := io.ReadAll(io.LimitReader(tr, 1<<20))
			if err != nil {
				t.Fatal(err)
			}
			return b
		}
	}
}
