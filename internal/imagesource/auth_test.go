package imagesource_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/static"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/fastpath-dev/fastpath/internal/fixture"
	"github.com/fastpath-dev/fastpath/internal/imagesource"
	"github.com/fastpath-dev/fastpath/internal/source"
)

// front serves go-containerregistry's registry (rs) through wrap on a new
// loopback port: the image is pushed to rs directly, and read through the
// front.
func front(t *testing.T, rs *registryServer, wrap func(w http.ResponseWriter, r *http.Request, next http.Handler)) string {
	t.Helper()
	proxyTo := "http://" + rs.host
	next := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		req, _ := http.NewRequestWithContext(r.Context(), r.Method, proxyTo+r.URL.RequestURI(), nil)
		req.Header = r.Header.Clone()
		req.Header.Del("Authorization")
		resp, err := http.DefaultTransport.RoundTrip(req)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		for k, v := range resp.Header {
			w.Header()[k] = v
		}
		w.WriteHeader(resp.StatusCode)
		buf := new(bytes.Buffer)
		buf.ReadFrom(resp.Body)
		w.Write(buf.Bytes())
	})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { wrap(w, r, next) }))
	t.Cleanup(srv.Close)
	return strings.TrimPrefix(srv.URL, "http://")
}

// The seed image behind a registry that wants a bearer token, the user's
// credentials coming from a credential helper named in DOCKER_CONFIG:
// diagnosed as the flattened tree is, and the token endpoint was asked
// with the helper's credentials.
func TestRegistryBearerAuthFromCredentialHelper(t *testing.T) {
	if _, err := os.Stat("/bin/sh"); err != nil {
		t.Skip("no /bin/sh")
	}
	flat, lower, top := seedLayers(t)
	want := rootFacts(t, flat, fixture.SeedEnv)
	rs := newRegistry(t)
	push(t, rs, "train/seed:v1", image(t, "linux/amd64", fixture.SeedEnv, append(lower, top...)...))

	var tokenHits atomic.Int32
	tokens := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tokenHits.Add(1)
		if u, p, ok := r.BasicAuth(); !ok || u != "trainer" || p != "helper-secret" || r.URL.Query().Get("scope") != "repository:train/seed:pull" {
			http.Error(w, "no", http.StatusUnauthorized)
			return
		}
		w.Write([]byte(`{"access_token":"seed-token"}`))
	}))
	defer tokens.Close()
	host := front(t, rs, func(w http.ResponseWriter, r *http.Request, next http.Handler) {
		if r.Header.Get("Authorization") != "Bearer seed-token" {
			w.Header().Set("WWW-Authenticate", `Bearer realm="`+tokens.URL+`/token",service="seed"`)
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		next.ServeHTTP(w, r)
	})

	bin := t.TempDir()
	script := "#!/bin/sh\nread server\n[ \"$server\" = \"" + host + "\" ] || exit 1\necho '{\"Username\":\"trainer\",\"Secret\":\"helper-secret\"}'\n"
	if err := os.WriteFile(filepath.Join(bin, "docker-credential-seedtest"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	cfgDir := t.TempDir()
	cfg, _ := json.Marshal(map[string]any{"credHelpers": map[string]string{host: "seedtest"}})
	if err := os.WriteFile(filepath.Join(cfgDir, "config.json"), cfg, 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("DOCKER_CONFIG", cfgDir)

	src := open(t, host+"/train/seed:v1", imagesource.Options{})
	sameDiagnosis(t, want, src)
	if n := tokenHits.Load(); n != 1 {
		t.Errorf("%d token requests, want 1", n)
	}
	if src.Stats().RangeReads == 0 {
		t.Error("the raw layer was not read by range through the token")
	}
}

// A layer blob whose bytes after its gzip stream were changed: neither
// gzip nor tar reads that far, so only the digest check of the one pass
// (the blob is read to its end) can notice; Open must fail.
func TestRegistryLayerNotMatchingItsDigestRefused(t *testing.T) {
	var tarBuf bytes.Buffer
	tw := tar.NewWriter(&tarBuf)
	addFile(t, tw, "etc/os-release", "ID=ubuntu\nVERSION_ID=\"24.04\"\n")
	tw.Close()
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(tarBuf.Bytes())
	zw.Close()
	blob := append(gz.Bytes(), make([]byte, 600)...) // trailing bytes nothing decodes
	l := static.NewLayer(blob, types.OCILayer)
	d, _ := l.Digest()
	rs := newRegistry(t)
	push(t, rs, "tamper/x:v1", image(t, "linux/amd64", nil, l))

	var tampered atomic.Int32
	host := front(t, rs, func(w http.ResponseWriter, r *http.Request, next http.Handler) {
		if !strings.HasSuffix(r.URL.Path, "/blobs/"+d.String()) || r.Header.Get("Range") != "" {
			next.ServeHTTP(w, r)
			return
		}
		tampered.Add(1)
		changed := append([]byte(nil), blob...)
		changed[len(changed)-1] = 'x'
		w.Header().Set("Content-Length", fmt.Sprint(len(changed)))
		w.Write(changed)
	})
	// The untampered image opens: the check is not what fails.
	open(t, rs.host+"/tamper/x:v1", imagesource.Options{})
	_, err := imagesource.Open(context.Background(), host+"/tamper/x:v1", imagesource.Options{Timeout: 5 * time.Second})
	if tampered.Load() == 0 {
		t.Fatal("the layer was never fetched whole")
	}
	if err == nil || !strings.Contains(err.Error(), "hash to") || !strings.Contains(err.Error(), "layer 1") {
		t.Errorf("a layer not matching its digest: %v", err)
	}
}

// A registry index as buildx pushes them, and deeper: an attestation
// manifest (platform unknown/unknown) first, a nested index holding amd64
// and arm64, and an image listed without a platform (its config says
// linux/riscv64). Each platform finds its image; the attestation is never
// a candidate, nor named in the error.
func TestRegistryNestedIndexAttestationAndNoPlatform(t *testing.T) {
	rs := newRegistry(t)
	osImage := func(plat, version string) v1.Image {
		dir := t.TempDir()
		fixture.New(dir).OSRelease("ubuntu", version, "Ubuntu "+version)
		return image(t, plat, nil, layer(t, false, func(tw *tar.Writer) { tarDir(t, tw, dir, all) }))
	}
	var nested v1.ImageIndex = empty.Index
	for _, p := range []struct{ plat, version string }{{"linux/amd64", "24.04"}, {"linux/arm64", "22.04"}} {
		pl, _ := v1.ParsePlatform(p.plat)
		nested = mutate.AppendManifests(nested, mutate.IndexAddendum{Add: osImage(p.plat, p.version), Descriptor: v1.Descriptor{Platform: pl}})
	}
	attestation := osImage("unknown/unknown", "0.0")
	top := mutate.AppendManifests(empty.Index,
		mutate.IndexAddendum{Add: attestation, Descriptor: v1.Descriptor{Platform: &v1.Platform{OS: "unknown", Architecture: "unknown"}}},
		mutate.IndexAddendum{Add: nested},
		mutate.IndexAddendum{Add: osImage("linux/riscv64", "25.10")},
	)
	r, _ := name.ParseReference(rs.host + "/nested/os:v1")
	if err := remote.WriteIndex(r, top); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ platform, wantVersion, wantPlatform string }{
		{"", "24.04", "linux/amd64"},
		{"linux/arm64/v8", "22.04", "linux/arm64"},
		{"linux/riscv64", "25.10", "linux/riscv64"},
	} {
		src := open(t, r.String(), imagesource.Options{Platform: tc.platform})
		b, err := source.ReadFile(src, "/etc/os-release", 4096)
		if err != nil || !strings.Contains(string(b), `VERSION_ID="`+tc.wantVersion+`"`) || src.Info().Platform != tc.wantPlatform {
			t.Errorf("--platform %q: %s, os-release %q, %v", tc.platform, src.Info().Platform, b, err)
		}
		if d, _ := top.Digest(); tc.platform == "" && src.Info().Digest == d.String() {
			t.Error("Info.Digest is the index's, not the image manifest's")
		}
	}
	_, err := imagesource.Open(context.Background(), r.String(), imagesource.Options{Platform: "linux/s390x"})
	if err == nil || !strings.Contains(err.Error(), "linux/amd64, linux/arm64, linux/riscv64") || strings.Contains(err.Error(), "unknown") {
		t.Errorf("--platform linux/s390x: %v", err)
	}
}
