package imagesource_test

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fastpath-dev/fastpath/internal/imagesource"
	"github.com/fastpath-dev/fastpath/internal/source"
)

func tinyLayerTar(t *testing.T) []byte {
	t.Helper()
	var b bytes.Buffer
	tw := tar.NewWriter(&b)
	addFile(t, tw, "etc/os-release", "ID=ubuntu\nVERSION_ID=\"24.04\"\n")
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// dockerArchive writes a docker-save archive whose manifest.json names the
// config and layer members given, holding members (name -> body).
func dockerArchive(t *testing.T, config string, layers []string, members map[string]string) string {
	t.Helper()
	mj, err := json.Marshal([]map[string]any{{"Config": config, "RepoTags": []string{"x:1"}, "Layers": layers}})
	if err != nil {
		t.Fatal(err)
	}
	var ab bytes.Buffer
	aw := tar.NewWriter(&ab)
	addFile(t, aw, "manifest.json", string(mj))
	for name, body := range members {
		addFile(t, aw, name, body)
	}
	if err := aw.Close(); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "x.tar")
	if err := os.WriteFile(p, ab.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// layoutWithLayers writes an OCI layout by hand (go-containerregistry's
// writer is quadratic in the layer count) whose one image lists the same
// small layer n times.
func layoutWithLayers(t *testing.T, n int) string {
	t.Helper()
	dir := t.TempDir()
	put := func(b []byte) string {
		s := sha256.Sum256(b)
		h := hex.EncodeToString(s[:])
		if err := os.MkdirAll(filepath.Join(dir, "blobs", "sha256"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "blobs", "sha256", h), b, 0o644); err != nil {
			t.Fatal(err)
		}
		return "sha256:" + h
	}
	type desc struct {
		MediaType string `json:"mediaType"`
		Digest    string `json:"digest"`
		Size      int64  `json:"size"`
	}
	lt := tinyLayerTar(t)
	ld := desc{"application/vnd.oci.image.layer.v1.tar", put(lt), int64(len(lt))}
	cfg := []byte(`{"os":"linux","architecture":"amd64","config":{}}`)
	layers := make([]desc, n)
	for i := range layers {
		layers[i] = ld
	}
	m, _ := json.Marshal(map[string]any{"schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json",
		"config": desc{"application/vnd.oci.image.config.v1+json", put(cfg), int64(len(cfg))}, "layers": layers})
	idx, _ := json.Marshal(map[string]any{"schemaVersion": 2, "manifests": []desc{{"application/vnd.oci.image.manifest.v1+json", put(m), int64(len(m))}}})
	if err := os.WriteFile(filepath.Join(dir, "index.json"), idx, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// F2: an image may have at most 1000 layers. Each layer costs a pass and
// its bookkeeping, and a 4 MB manifest.json naming one tiny member a
// million times took about a minute and 2.4 GB of allocation before (200,000
// layers: 10 s, 476 MB). Past the cap the image is refused at once, in a
// docker-save archive and in an OCI layout (the registry's manifests go
// through the same check); at the cap it is read.
func TestF2LayerCountCapped(t *testing.T) {
	lt := string(tinyLayerTar(t))
	cfg := `{"os":"linux","architecture":"amd64","config":{}}`
	many := func(n int) []string {
		s := make([]string, n)
		for i := range s {
			s[i] = "a"
		}
		return s
	}
	for _, c := range []struct {
		name string
		ref  string
	}{
		{"archive", dockerArchive(t, "c.json", many(1001), map[string]string{"c.json": cfg, "a": lt})},
		{"layout", layoutWithLayers(t, 1001)},
	} {
		_, err := imagesource.Open(context.Background(), c.ref, imagesource.Options{})
		if err == nil || !strings.Contains(err.Error(), "more than the 1000") {
			t.Errorf("%s with 1001 layers: %v; want it refused", c.name, err)
		}
	}
	src, err := imagesource.Open(context.Background(), dockerArchive(t, "c.json", many(1000), map[string]string{"c.json": cfg, "a": lt}), imagesource.Options{})
	if err != nil {
		t.Fatalf("1000 layers: %v", err)
	}
	if got, err := source.ReadFile(src, "/etc/os-release", 1024); err != nil || !strings.Contains(string(got), "24.04") {
		t.Errorf("1000 layers: %q, %v", got, err)
	}
}

// A docker-save archive's manifest.json names members of the archive, never
// host paths: a config or layer named "../../etc/passwd" or "/etc/passwd"
// is looked up among the members and not found.
func TestDockerArchiveManifestNamesStayInArchive(t *testing.T) {
	lt := string(tinyLayerTar(t))
	cfg := `{"os":"linux","architecture":"amd64","config":{}}`
	for _, c := range []struct{ config, layer string }{
		{"../../../../../../etc/passwd", "a"},
		{"/etc/passwd", "a"},
		{"c.json", "../../../../../../etc/passwd"},
		{"c.json", "/etc/passwd"},
	} {
		p := dockerArchive(t, c.config, []string{c.layer}, map[string]string{"c.json": cfg, "a": lt})
		_, err := imagesource.Open(context.Background(), p, imagesource.Options{})
		if err == nil || !strings.Contains(err.Error(), "not in the archive") {
			t.Errorf("config %q, layer %q: %v; want \"not in the archive\"", c.config, c.layer, err)
		}
	}
}
