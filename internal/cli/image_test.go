package cli

import (
	"bytes"
	"encoding/json"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"

	"github.com/fastpath-dev/fastpath/internal/fixture"
)

// seedOCILayout writes the seed tree as a one-layer image in an OCI layout
// folder, its environment in the image config.
func seedOCILayout(t *testing.T, root string) string {
	t.Helper()
	b, err := fixture.TarTree(root)
	if err != nil {
		t.Fatal(err)
	}
	l, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b)), nil })
	if err != nil {
		t.Fatal(err)
	}
	img, err := mutate.AppendLayers(empty.Image, l)
	if err != nil {
		t.Fatal(err)
	}
	cf, _ := img.ConfigFile()
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture, cf.Config.Env = "linux", "amd64", fixture.SeedEnv
	if img, err = mutate.ConfigFile(img, cf); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "oci")
	p, err := layout.Write(dir, empty.Index)
	if err == nil {
		err = p.AppendImage(img)
	}
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// doctor --image judges an image as doctor --root judges the same tree.
func TestDoctorImageEqualsRoot(t *testing.T) {
	root := t.TempDir()
	if err := fixture.Seed(root); err != nil {
		t.Fatal(err)
	}
	oci := seedOCILayout(t, root)
	run := func(args ...string) map[string]json.RawMessage {
		t.Helper()
		var out, errb bytes.Buffer
		if code := Main(args, strings.NewReader(""), &out, &errb); code != ExitFindings {
			t.Fatalf("fastpath %v: exit %d\n%s", args, code, errb.String())
		}
		var doc map[string]json.RawMessage
		if err := json.Unmarshal(out.Bytes(), &doc); err != nil {
			t.Fatal(err)
		}
		return doc
	}
	envFlags := []string{}
	for _, e := range fixture.SeedEnv {
		envFlags = append(envFlags, "--env", e)
	}
	want := run(append([]string{"doctor", "--json", "--gpu", "12.0", "--root", root}, envFlags...)...)
	got := run("doctor", "--json", "--gpu", "12.0", "--image", oci)
	if diff := cmp.Diff(string(want["findings"]), string(got["findings"])); diff != "" {
		t.Errorf("findings differ (-root +image):\n%s", diff)
	}
	var src struct {
		Source map[string]any `json:"source"`
	}
	json.Unmarshal(got["facts"], &src)
	if src.Source["kind"] != "image" || src.Source["image"] != oci || src.Source["platform"] != "linux/amd64" {
		t.Errorf("facts.source = %v", src.Source)
	}
	var out, errb bytes.Buffer
	if code := Main([]string{"packages", "--image", oci}, strings.NewReader(""), &out, &errb); code != ExitOK || !strings.Contains(out.String(), "torch") {
		t.Errorf("packages --image: exit %d\n%s%s", code, out.String(), errb.String())
	}
}

func TestImageFlagUsage(t *testing.T) {
	for _, tc := range []struct {
		args []string
		out  string
	}{
		{[]string{"doctor", "--image", "x.tar", "--root", "/"}, "give one"},
		{[]string{"doctor", "--platform", "linux/arm64"}, "--platform needs --image"},
		{[]string{"doctor", "--facts", "f.json", "--image", "x"}, "cannot be combined"},
		{[]string{"facts", "--image", t.TempDir()}, "not an OCI layout folder"},
		{[]string{"doctor", "--image", "x", "--platform", "arm64"}, "want OS/ARCH"},
	} {
		var out, errb bytes.Buffer
		if code := Main(tc.args, strings.NewReader(""), &out, &errb); code != ExitFailure || !strings.Contains(errb.String()+out.String(), tc.out) {
			t.Errorf("fastpath %v: exit %d, output %q; want %q", tc.args, code, errb.String(), tc.out)
		}
	}
}

// Issue 19: --image prints "warnings": [] (never null) when the image has
// no problems, and the text header names the image and its digest.
func TestImageWarningsEmptyListAndHeaderNamesImage(t *testing.T) {
	root := t.TempDir()
	if err := fixture.Seed(root); err != nil {
		t.Fatal(err)
	}
	oci := seedOCILayout(t, root)
	var out, errb bytes.Buffer
	if code := Main([]string{"facts", "--image", oci}, strings.NewReader(""), &out, &errb); code != ExitOK {
		t.Fatalf("facts --image: exit %d\n%s", code, errb.String())
	}
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(out.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if w := strings.TrimSpace(string(doc["warnings"])); w == "null" || !strings.HasPrefix(w, "[") {
		t.Errorf(`"warnings": %s; want a list`, w)
	}
	var src map[string]string
	json.Unmarshal(doc["source"], &src)
	if !strings.HasPrefix(src["digest"], "sha256:") || !strings.HasPrefix(src["image_id"], "sha256:") {
		t.Errorf("source = %v; want the manifest digest and the image ID", src)
	}
	out.Reset()
	Main([]string{"doctor", "--image", oci}, strings.NewReader(""), &out, &errb)
	// The heading is the text up to the first blank line: it wraps to
	// the width (internal/render), never inside the path or the digest.
	header, _, _ := strings.Cut(out.String(), "\n\n")
	if !strings.Contains(header, oci) || !strings.Contains(header, src["digest"]) {
		t.Errorf("header %q does not name the image %s and its digest %s", header, oci, src["digest"])
	}
}

// Issue 11: a mistyped --image path fails here, with exit status 2,
// without a registry being asked.
func TestImageMistypedPathFailsLocally(t *testing.T) {
	var out, errb bytes.Buffer
	code := Main([]string{"doctor", "--image", "./missing.tar"}, strings.NewReader(""), &out, &errb)
	if code != ExitFailure || !strings.Contains(errb.String(), "no such file or folder") {
		t.Errorf("exit %d, %q", code, errb.String())
	}
}
