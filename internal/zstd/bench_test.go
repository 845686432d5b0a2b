package zstd

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"

	kzstd "github.com/klauspost/compress/zstd"

	"github.com/fastpath-dev/fastpath/internal/testenv"
)

// The benchmark corpus: about 64 MB of this machine's shared libraries
// (machine code) and /usr/share/doc text, built once in the test cache
// (never in git) and compressed by the zstd CLI at a level.
const corpusSize = 64_000_000

func benchCorpus(b testing.TB) string {
	dir := filepath.Join(testenv.CacheDir(b), "zstd")
	path := filepath.Join(dir, "corpus")
	if st, err := os.Stat(path); err == nil && st.Size() == corpusSize {
		return path
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		b.Fatal(err)
	}
	script := `ls /usr/lib/x86_64-linux-gnu/*.so* | head -200 | xargs cat 2>/dev/null | head -c 48000000 > "$1";
find /usr/share/doc -type f ! -name '*.gz' | head -3000 | xargs cat 2>/dev/null | head -c 16000000 >> "$1"`
	if out, err := exec.Command("sh", "-c", script, "sh", path+".tmp").CombinedOutput(); err != nil {
		b.Fatalf("building the corpus: %v\n%s", err, out)
	}
	if st, err := os.Stat(path + ".tmp"); err != nil || st.Size() != corpusSize {
		b.Skipf("this machine has too few libraries and docs for a %d-byte corpus", corpusSize)
	}
	if err := os.Rename(path+".tmp", path); err != nil {
		b.Fatal(err)
	}
	return path
}

// cliCompressed returns the corpus compressed by `zstd -<level>`.
func cliCompressed(b testing.TB, level int) ([]byte, int64) {
	path := benchCorpus(b)
	zpath := path + "." + strconv.Itoa(level) + ".zst"
	if _, err := os.Stat(zpath); err != nil {
		zstdCLI(b)
		if out, err := exec.Command("zstd", "-q", "-f", "-T0", "-"+strconv.Itoa(level), path, "-o", zpath).CombinedOutput(); err != nil {
			b.Fatalf("zstd -%d: %v\n%s", level, err, out)
		}
	}
	data, err := os.ReadFile(zpath)
	if err != nil {
		b.Fatal(err)
	}
	return data, corpusSize
}

func zstdCLI(t testing.TB) {
	t.Helper()
	if _, err := exec.LookPath("zstd"); err != nil {
		t.Skip("no zstd CLI on PATH (apt-get install zstd)")
	}
}

func benchDecoders(b *testing.B, level int) {
	comp, size := cliCompressed(b, level)
	b.Run("fastpath", func(b *testing.B) {
		b.SetBytes(size)
		for b.Loop() {
			r, _ := NewReader(bytes.NewReader(comp), 64<<20)
			n, err := io.Copy(io.Discard, r)
			if err != nil || n != size {
				b.Fatal(n, err)
			}
		}
	})
	for _, conc := range []int{1, 2} {
		b.Run("klauspost-concurrency"+strconv.Itoa(conc), func(b *testing.B) {
			b.SetBytes(size)
			for b.Loop() {
				r, _ := kzstd.NewReader(bytes.NewReader(comp), kzstd.WithDecoderMaxWindow(64<<20), kzstd.WithDecoderConcurrency(conc))
				n, err := io.Copy(io.Discard, r)
				r.Close()
				if err != nil || n != size {
					b.Fatal(n, err)
				}
			}
		})
	}
}

// BenchmarkDecodeLevel3 and BenchmarkDecodeLevel19 compare this decoder with
// klauspost/compress/zstd, run the way internal/imagesource ran it
// (concurrency 2) and synchronously.
func BenchmarkDecodeLevel3(b *testing.B)  { benchDecoders(b, 3) }
func BenchmarkDecodeLevel19(b *testing.B) { benchDecoders(b, 19) }
