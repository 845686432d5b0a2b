package imagesource_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/static"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/fastpath-dev/fastpath/internal/imagesource"
	"github.com/fastpath-dev/fastpath/internal/source"
)

func rawTar(t *testing.T, fill func(tw *tar.Writer)) []byte {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	fill(tw)
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// hugePAXHeader is a PAX extended header entry whose records take n bytes.
func hugePAXHeader(t *testing.T, n int) []byte {
	t.Helper()
	rec := " comment=" + strings.Repeat("x", n) + "\n"
	rec = strconv.Itoa(len(rec)+8) + rec // the length field counts itself (8 digits here)
	var hdr bytes.Buffer
	tw := tar.NewWriter(&hdr)
	if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: "PaxHeaders/huge", Size: int64(len(rec)), Mode: 0o644, Format: tar.FormatUSTAR}); err != nil {
		t.Fatal(err)
	}
	b := hdr.Bytes()[:512]
	b[156] = tar.TypeXHeader
	copy(b[148:156], "        ")
	sum := 0
	for _, c := range b {
		sum += int(c)
	}
	copy(b[148:156], fmt.Sprintf("%06o\x00 ", sum))
	out := append(append([]byte(nil), b...), rec...)
	if pad := len(rec) % 512; pad != 0 {
		out = append(out, make([]byte, 512-pad)...)
	}
	return out
}

func hardLink(t *testing.T, tw *tar.Writer, name, target string) {
	t.Helper()
	if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeLink, Name: name, Linkname: target, ModTime: epoch}); err != nil {
		t.Fatal(err)
	}
}

// Each hostile entry is refused on its own, with a warning naming it; the
// rest of the image stays readable, nothing is written anywhere, and
// collecting facts over it neither fails nor panics.
func TestHostileArchivesRejectedPerFile(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)

	hostile := rawTar(t, func(tw *tar.Writer) {
		addFile(t, tw, "etc/os-release", "ID=ubuntu\nVERSION_ID=\"24.04\"\n")
		addFile(t, tw, "../../evil", "escaped")
		addFile(t, tw, "usr/../../evil2", "escaped")
		addFile(t, tw, "/abs/ok.txt", "absolute names are rooted")
		addDir(t, tw, "usr/lib")
		addLink(t, tw, "usr/lib/up", "../../../etc/shadow")
		addLink(t, tw, "etc/alt", "/etc/os-release")
		hardLink(t, tw, "h1", "../outside")
		hardLink(t, tw, "h2", "not/in/this/layer")
		hardLink(t, tw, "h3", "etc/os-release")
		addLink(t, tw, "lnk", "/tmp")
		addFile(t, tw, "lnk/payload", "written through a link")
		addFile(t, tw, strings.Repeat("d/", 2600)+"deep", "long")
	})
	// archive/tar refuses to write a PAX header over 1 MiB, so it is built by hand.
	hostile = append(hostile[:len(hostile)-1024], hugePAXHeader(t, 2<<20)...)
	hostile = append(hostile, rawTar(t, func(tw *tar.Writer) { addFile(t, tw, "after/huge", "never reached") })...)
	truncated := rawTar(t, func(tw *tar.Writer) {
		addFile(t, tw, "trunc/first", "whole")
		addFile(t, tw, "trunc/second", strings.Repeat("y", 100<<10))
		addFile(t, tw, "trunc/third", "lost")
	})
	truncated = truncated[:1536+50<<10]
	noise := make([]byte, 8192)
	for i := range noise {
		noise[i] = byte(rand.IntN(256))
	}
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(rawTar(t, func(tw *tar.Writer) {
		addFile(t, tw, "gz/a", strings.Repeat("z", 200<<10))
		addFile(t, tw, "gz/b", "lost")
	}))
	zw.Close()
	cutGzip := gz.Bytes()[:gz.Len()/2]

	rs := newRegistry(t)
	img := image(t, "linux/amd64", nil,
		static.NewLayer(hostile, types.OCIUncompressedLayer),
		static.NewLayer(truncated, types.OCIUncompressedLayer),
		static.NewLayer(noise, types.OCIUncompressedLayer),
		static.NewLayer(cutGzip, types.OCILayer),
	)
	src := open(t, push(t, rs, "hostile/x:v1", img), imagesource.Options{})
	warnings := strings.Join(src.Warnings(), "\n")
	t.Logf("warnings:\n%s", warnings)
	for _, want := range []string{
		`layer 1 (sha256:`,
		`entry "../../evil" refused: the path climbs out of the image with ".."`,
		`entry "usr/../../evil2" refused`,
		`symlink /usr/lib/up -> ../../../etc/shadow refused: the target climbs above the image root`,
		`hard link /h1 -> ../outside refused`,
		`hard link /h2 -> not/in/this/layer refused: its target is not a regular file earlier in this layer`,
		`entry /lnk/payload refused: /lnk is not a directory in this layer`,
		`refused: name longer than 4096 bytes`,
		`unreadable after entry`,
		`layer 2 (sha256:`,
		`layer 3 (sha256:`,
		`not a tar archive`,
		`layer 4 (sha256:`,
	} {
		if !strings.Contains(warnings, want) {
			t.Errorf("no warning containing %q", want)
		}
	}
	for p, want := range map[string]string{
		"/etc/os-release": "ID=ubuntu\nVERSION_ID=\"24.04\"\n",
		"/abs/ok.txt":     "absolute names are rooted",
		"/h3":             "ID=ubuntu\nVERSION_ID=\"24.04\"\n",
		"/etc/alt":        "ID=ubuntu\nVERSION_ID=\"24.04\"\n",
		"/trunc/first":    "whole",
	} {
		if got, err := source.ReadFile(src, p, 1<<20); err != nil || string(got) != want {
			t.Errorf("%s: %q, %v; want %q", p, got, err, want)
		}
	}
	for _, p := range []string{"/evil", "/evil2", "/usr/lib/up", "/h1", "/h2", "/lnk/payload", "/tmp/payload", "/after/huge", "/trunc/third", "/gz/b"} {
		if _, err := src.Lstat(p); err == nil {
			t.Errorf("%s is in the image", p)
		}
	}
	if _, err := source.ReadFile(src, "/trunc/second", 1<<20); err == nil {
		t.Error("a file cut short read without an error")
	}
	if _, err := source.ReadFile(src, "/gz/a", 1<<20); err == nil {
		t.Error("a file in a cut gzip stream read without an error")
	}
	f := collectFacts(t, src)
	if f.OS.VersionID != "24.04" {
		t.Errorf("facts over the hostile image: OS %+v", f.OS)
	}
	if ents, _ := os.ReadDir(tmp); len(ents) > 0 {
		t.Errorf("files written to TMPDIR: %v", ents)
	}
}

// A whiteout names one entry of its own folder. ".wh.." in /etc and
// ".wh..." in /usr/lib would otherwise hide /etc and /usr (path.Join
// cleans the "..") from the layers below: an image could make fastpath
// judge a tree that no runtime builds from it. They are refused with a
// warning and hide nothing; an ordinary whiteout beside them still hides.
func TestWhiteoutOfDotOrDotDotRefused(t *testing.T) {
	lower := layer(t, true, func(tw *tar.Writer) {
		addFile(t, tw, "usr/lib/keep", "kept")
		addFile(t, tw, "usr/bin/tool", "tool")
		addFile(t, tw, "etc/os-release", "ID=ubuntu\n")
		addFile(t, tw, "etc/gone", "whited out")
	})
	upper := layer(t, true, func(tw *tar.Writer) {
		addFile(t, tw, "usr/lib/.wh...", "")
		addFile(t, tw, "usr/bin/.wh..", "")
		addFile(t, tw, "etc/.wh.", "")
		addWhiteout(t, tw, "etc/gone")
	})
	dir := writeLayout(t, map[string]v1.Image{"noble": image(t, "linux/amd64", nil, lower, upper)})
	src, err := imagesource.Open(context.Background(), dir+":noble", imagesource.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"/usr/lib/keep", "/usr/bin/tool", "/etc/os-release"} {
		if _, err := src.Lstat(p); err != nil {
			t.Errorf("%s hidden by a whiteout of . or ..: %v", p, err)
		}
	}
	if _, err := src.Lstat("/etc/gone"); err == nil {
		t.Error("/etc/gone survived its whiteout")
	}
	w := strings.Join(src.Warnings(), "\n")
	for _, want := range []string{"whiteout /usr/lib/.wh... refused", "whiteout /usr/bin/.wh.. refused", "whiteout /etc/.wh. refused"} {
		if !strings.Contains(w, want) {
			t.Errorf("no warning %q in %q", want, w)
		}
	}
}
