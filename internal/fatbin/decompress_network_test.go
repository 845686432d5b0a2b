package fatbin

import (
	"archive/zip"
	"bytes"
	"debug/elf"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/fastpath-dev/fastpath/internal/cudaarch"
	"github.com/fastpath-dev/fastpath/internal/testenv"
)

// TestNetworkDecompressRealWheels decompresses every compressed entry of real
// libraries (https://pypi.org/project/<project>/<version>/#files): each must come out
// at exactly its declared size, a cubin as an ELF file of EM_CUDA whose symbol table
// reads, a PTX as text with a .version line. LZ4 from CUDA 12.9's fatbinary (cuDNN,
// cuBLAS: every cubin), zstd from CUDA 12.9 and 13 (cuBLAS, vllm 0.33.0).
func TestNetworkDecompressRealWheels(t *testing.T) {
	tests := []struct {
		project, file, sha, member string
		lz4, zstd                  int // compressed entries expected
	}{
		{"nvidia-cudnn-cu12", "nvidia_cudnn_cu12-9.28.0.42-py3-none-manylinux_2_27_x86_64.whl",
			"9ff58b7f36dacd0a93e89f8f2957b52466889217963701daa15e577317cfa375", "nvidia/cudnn/lib/libcudnn_cnn.so.9", 72, 0},
		{"nvidia-cublas-cu12", "nvidia_cublas_cu12-12.9.3.13-py3-none-manylinux_2_27_x86_64.whl",
			"d7d51055f161b317c7105ddaae90e71eda059026074ffef93cf7cde2886bfe72", "nvidia/cublas/lib/libcublas.so.12", 1203, 577},
		{"vllm", "vllm-0.33.0-cp38-abi3-manylinux_2_28_x86_64.whl",
			"4b6bdec4ab269990bf70d45a3c1e94c3760a27064513760193b26d6f0da883aa", "vllm/_moe_C_stable_libtorch.abi3.so", 0, 118},
	}
	for _, tc := range tests {
		t.Run(tc.project, func(t *testing.T) {
			whl := testenv.Sdist(t, tc.project, tc.file, tc.sha)
			lib := filepath.Join(t.TempDir(), filepath.Base(tc.member))
			extractMember(t, whl, tc.member, lib)
			f, err := Open(lib)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			r, err := os.Open(lib)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			got := map[Compression]int{}
			for i, e := range f.Entries {
				if e.Compression == CompressionNone {
					continue
				}
				got[e.Compression]++
				p, err := e.payload(r)
				if err != nil {
					t.Fatalf("entry %d (%v, %v, %d -> %d bytes): %v", i, e.Target(), e.Compression, e.CompressedSize, e.UncompressedSize, err)
				}
				b, _ := io.ReadAll(p)
				switch e.Kind {
				case cudaarch.SASS:
					ef, err := elf.NewFile(cubinVersionFix(bytes.NewReader(b)))
					if err != nil || ef.Machine != elf.EM_CUDA {
						t.Fatalf("entry %d (%v): not a cubin: %v", i, e.Target(), err)
					}
					if _, err := ef.Symbols(); err != nil && err != elf.ErrNoSymbols {
						t.Fatalf("entry %d (%v): symbols: %v", i, e.Target(), err)
					}
				case cudaarch.PTX:
					if !bytes.Contains(b, []byte(".version ")) {
						t.Fatalf("entry %d (%v): PTX without .version: %.60q", i, e.Target(), b)
					}
				}
			}
			if got[CompressionLZ4] != tc.lz4 || got[CompressionZstd] != tc.zstd {
				t.Errorf("compressed entries %v, want %d lz4 and %d zstd", got, tc.lz4, tc.zstd)
			}
		})
	}
}

func extractMember(t *testing.T, whl, member, to string) {
	t.Helper()
	zr, err := zip.OpenReader(whl)
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	for _, zf := range zr.File {
		if zf.Name != member {
			continue
		}
		rc, err := zf.Open()
		if err != nil {
			t.Fatal(err)
		}
		defer rc.Close()
		w, err := os.Create(to)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.Copy(w, rc); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Fatalf("%s has no %s", whl, member)
}
