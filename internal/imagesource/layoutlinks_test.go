package imagesource_test

import (
	"archive/tar"
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/fastpath-dev/fastpath/internal/imagesource"
	"github.com/fastpath-dev/fastpath/internal/source"
)

// F12: an OCI layout is untrusted input, and so are the links in it. A
// layer blob that is a link to a tarball on the host (here one whose
// os-release carries a canary) must not make the host's files the image's;
// an index.json, manifest or config blob linked to a host file must not be
// read either. Each is refused with the os.Root error; a link that stays
// inside the layout still works.
func TestF12LayoutBlobLinksToHostRefused(t *testing.T) {
	img := image(t, "linux/amd64", nil, layer(t, true, func(tw *tar.Writer) {
		addDir(t, tw, "etc")
		addFile(t, tw, "etc/os-release", "ID=ubuntu\nVERSION_ID=\"24.04\"\n")
	}))
	md, _ := img.Digest()
	cd, _ := img.ConfigName()
	ls, _ := img.Layers()
	ld, _ := ls[0].Digest()
	blob := func(d fmt.Stringer) string {
		alg, hexd, _ := strings.Cut(d.String(), ":")
		return filepath.Join("blobs", alg, hexd)
	}
	hostDir := t.TempDir()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	addDir(t, tw, "etc")
	addFile(t, tw, "etc/os-release", "ID=HOSTCANARY\n")
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	for _, planted := range []string{"index.json", blob(md), blob(cd), blob(ld)} {
		for _, how := range []string{"absolute", "climbing"} {
			t.Run(how+" "+planted, func(t *testing.T) {
				dir := writeLayout(t, map[string]v1.Image{"noble": img})
				p := filepath.Join(dir, planted)
				// The host file holds exactly the blob's bytes (so a digest
				// check cannot tell), or the canary tarball for a layer.
				hostFile := filepath.Join(hostDir, how+filepath.Base(planted))
				content, err := os.ReadFile(p)
				if err != nil {
					t.Fatal(err)
				}
				if planted == blob(ld) {
					content = buf.Bytes()
				}
				if err := os.WriteFile(hostFile, content, 0o644); err != nil {
					t.Fatal(err)
				}
				target := hostFile
				if how == "climbing" {
					if target, err = filepath.Rel(filepath.Dir(p), hostFile); err != nil {
						t.Fatal(err)
					}
				}
				if err := os.Remove(p); err != nil {
					t.Fatal(err)
				}
				if err := os.Symlink(target, p); err != nil {
					t.Fatal(err)
				}
				src, err := imagesource.Open(context.Background(), dir+":noble", imagesource.Options{})
				var got []byte
				if err == nil {
					got, err = source.ReadFile(src, "/etc/os-release", 1024)
				}
				if bytes.Contains(got, []byte("HOSTCANARY")) {
					t.Fatalf("a layer linked to a host tarball was read as the image: %q", got)
				}
				if err == nil || !strings.Contains(err.Error(), "escapes") {
					t.Errorf("%s linked out of the layout: %q, %v; want it refused", planted, got, err)
				}
			})
		}
	}
	// A link inside the layout is followed.
	dir := writeLayout(t, map[string]v1.Image{"noble": img})
	p := filepath.Join(dir, blob(ld))
	if err := os.Rename(p, filepath.Join(dir, "moved")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../../moved", p); err != nil {
		t.Fatal(err)
	}
	src, err := imagesource.Open(context.Background(), dir+":noble", imagesource.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got, err := source.ReadFile(src, "/etc/os-release", 1024); err != nil || !bytes.Contains(got, []byte("24.04")) {
		t.Errorf("a layer linked inside the layout: %q, %v", got, err)
	}
}
