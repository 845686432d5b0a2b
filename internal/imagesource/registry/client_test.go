package registry_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	ggcrregistry "github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/fastpath-dev/fastpath/internal/imagesource/registry"
)

// fixture is go-containerregistry's in-memory registry (the oracle) holding
// one random image, behind a front that asks for authorization the way a
// test says; pushes go to the registry directly.
type fixture struct {
	host  string // the front's host:port
	img   v1.Image
	ref   registry.Reference
	inner http.Handler
}

func newFixture(t *testing.T, front func(inner http.Handler) http.Handler) *fixture {
	t.Helper()
	inner := ggcrregistry.New(ggcrregistry.Logger(log.New(io.Discard, "", 0)))
	direct := httptest.NewServer(inner)
	t.Cleanup(direct.Close)
	img, err := random.Image(2048, 2)
	if err != nil {
		t.Fatal(err)
	}
	r, err := name.ParseReference(strings.TrimPrefix(direct.URL, "http://") + "/team/model:v1")
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.Write(r, img); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(front(inner))
	t.Cleanup(srv.Close)
	f := &fixture{host: strings.TrimPrefix(srv.URL, "http://"), img: img, inner: inner}
	if f.ref, err = registry.ParseReference(f.host + "/team/model:v1"); err != nil {
		t.Fatal(err)
	}
	return f
}

// pull fetches the manifest by tag, the config and every layer through c,
// and checks each against what the image is.
func (f *fixture) pull(t *testing.T, c *registry.Client) error {
	t.Helper()
	ctx := context.Background()
	m, err := c.Manifest(ctx, f.ref.Identifier(), 4<<20)
	if err != nil {
		return err
	}
	want, _ := f.img.Digest()
	if m.Digest != want.String() {
		t.Errorf("manifest digest %s, want %s", m.Digest, want)
	}
	cn, _ := f.img.ConfigName()
	cfg, err := c.Blob(ctx, cn.String(), 1<<20)
	if err != nil {
		return err
	}
	raw, _ := f.img.RawConfigFile()
	if string(cfg) != string(raw) {
		t.Error("config differs")
	}
	layers, _ := f.img.Layers()
	for _, l := range layers {
		d, _ := l.Digest()
		n, _ := l.Size()
		rc, err := c.OpenBlob(ctx, d.String(), n)
		if err != nil {
			return err
		}
		b, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			return err
		}
		if int64(len(b)) != n {
			t.Errorf("layer %s: %d bytes, want %d", d, len(b), n)
		}
	}
	return nil
}

// tokenServer is a token endpoint (Docker's token authentication spec):
// it hands token to whoever check approves, and counts its requests.
type tokenServer struct {
	*httptest.Server
	hits atomic.Int32
}

func newTokenServer(t *testing.T, token string, check func(r *http.Request) bool, answer string) *tokenServer {
	ts := &tokenServer{}
	ts.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ts.hits.Add(1)
		if !check(r) {
			http.Error(w, `{"errors":[{"code":"UNAUTHORIZED","message":"bad credentials"}]}`, http.StatusUnauthorized)
			return
		}
		fmt.Fprintf(w, `{%q: %q}`, answer, token)
	}))
	t.Cleanup(ts.Close)
	return ts
}

// bearerFront lets through requests carrying "Bearer token" and answers
// the rest with a challenge naming realm; it records whether the first
// request came without credentials.
func bearerFront(realm, token string, anonymousFirst *atomic.Int32) func(http.Handler) http.Handler {
	return func(inner http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Header.Get("Authorization") == "" {
				anonymousFirst.Add(1)
			}
			if r.Header.Get("Authorization") != "Bearer "+token {
				w.Header().Set("WWW-Authenticate", fmt.Sprintf(`Bearer realm="%s",service="test-registry",scope="repository:team/model:pull"`, realm))
				http.Error(w, `{"errors":[{"code":"UNAUTHORIZED","message":"authentication required"}]}`, http.StatusUnauthorized)
				return
			}
			inner.ServeHTTP(w, r)
		})
	}
}

// dockerConfig writes config.json into a new DOCKER_CONFIG folder.
func dockerConfig(t *testing.T, cfg map[string]any) {
	t.Helper()
	dir := t.TempDir()
	b, _ := json.Marshal(cfg)
	if err := os.WriteFile(filepath.Join(dir, "config.json"), b, 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("DOCKER_CONFIG", dir)
}

func scopeOK(r *http.Request) bool {
	q := r.URL.Query()
	if r.Method == http.MethodPost {
		r.ParseForm()
		q = r.PostForm
	}
	return q.Get("scope") == "repository:team/model:pull" && q.Get("service") == "test-registry"
}

func TestBearerTokenWithAuthsCredentials(t *testing.T) {
	for _, answer := range []string{"token", "access_token"} {
		t.Run(answer, func(t *testing.T) {
			ts := newTokenServer(t, "T0K3N", func(r *http.Request) bool {
				u, p, ok := r.BasicAuth()
				return ok && u == "alice" && p == "s3cret:with:colons" && r.Method == http.MethodGet && scopeOK(r)
			}, answer)
			var anon atomic.Int32
			f := newFixture(t, bearerFront(ts.URL+"/token", "T0K3N", &anon))
			dockerConfig(t, map[string]any{"auths": map[string]any{
				f.host: map[string]string{"auth": base64.StdEncoding.EncodeToString([]byte("alice:s3cret:with:colons"))},
			}})
			c := registry.New(f.ref, registry.Options{Keychain: registry.DockerConfig{}, Timeout: 5 * time.Second})
			if err := f.pull(t, c); err != nil {
				t.Fatal(err)
			}
			if ts.hits.Load() != 1 {
				t.Errorf("%d token requests, want 1 (the token is reused)", ts.hits.Load())
			}
			if anon.Load() != 1 {
				t.Errorf("%d requests without credentials, want 1 (anonymous first, then the token)", anon.Load())
			}
		})
	}
}

func TestBearerTokenWithIdentityToken(t *testing.T) {
	ts := newTokenServer(t, "ACCESS", func(r *http.Request) bool {
		r.ParseForm()
		return r.Method == http.MethodPost && r.PostForm.Get("grant_type") == "refresh_token" &&
			r.PostForm.Get("refresh_token") == "REFRESH-ME" && scopeOK(r)
	}, "access_token")
	var anon atomic.Int32
	f := newFixture(t, bearerFront(ts.URL+"/token", "ACCESS", &anon))
	dockerConfig(t, map[string]any{"auths": map[string]any{
		"https://" + f.host + "/v1/": map[string]string{"identitytoken": "REFRESH-ME"},
	}})
	c := registry.New(f.ref, registry.Options{Keychain: registry.DockerConfig{}, Timeout: 5 * time.Second})
	if err := f.pull(t, c); err != nil {
		t.Fatal(err)
	}
}

func TestAnonymousBearerToken(t *testing.T) {
	ts := newTokenServer(t, "ANON", func(r *http.Request) bool {
		return r.Header.Get("Authorization") == "" && scopeOK(r)
	}, "token")
	var anon atomic.Int32
	f := newFixture(t, bearerFront(ts.URL+"/token", "ANON", &anon))
	t.Setenv("DOCKER_CONFIG", t.TempDir()) // no config.json: anonymous
	c := registry.New(f.ref, registry.Options{Keychain: registry.DockerConfig{}, Timeout: 5 * time.Second})
	if err := f.pull(t, c); err != nil {
		t.Fatal(err)
	}
}

func TestBasicAuth(t *testing.T) {
	f := newFixture(t, func(inner http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if u, p, ok := r.BasicAuth(); !ok || u != "bob" || p != "pw" {
				w.Header().Set("WWW-Authenticate", `Basic realm="test"`)
				w.WriteHeader(http.StatusUnauthorized)
				return
			}
			inner.ServeHTTP(w, r)
		})
	})
	dockerConfig(t, map[string]any{"auths": map[string]any{f.host: map[string]string{"username": "bob", "password": "pw"}}})
	c := registry.New(f.ref, registry.Options{Keychain: registry.DockerConfig{}, Timeout: 5 * time.Second})
	if err := f.pull(t, c); err != nil {
		t.Fatal(err)
	}
	// Without credentials the refusal says what is missing.
	t.Setenv("DOCKER_CONFIG", t.TempDir())
	c = registry.New(f.ref, registry.Options{Keychain: registry.DockerConfig{}, Timeout: 5 * time.Second})
	err := f.pull(t, c)
	if err == nil || !strings.Contains(err.Error(), "asks for a user name and password") {
		t.Errorf("pull without credentials: %v", err)
	}
}

// helper writes docker-credential-NAME, a shell script, into a new folder
// put first in PATH.
func helper(t *testing.T, name, script string) string {
	t.Helper()
	dir := t.TempDir()
	p := filepath.Join(dir, "docker-credential-"+name)
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	return filepath.Join(dir, "stdin")
}

func TestCredentialHelpers(t *testing.T) {
	if _, err := os.Stat("/bin/sh"); err != nil {
		t.Skip("no /bin/sh")
	}
	ts := newTokenServer(t, "HT", func(r *http.Request) bool {
		u, p, ok := r.BasicAuth()
		return ok && u == "carol" && p == "from-helper" && scopeOK(r)
	}, "token")
	var anon atomic.Int32
	f := newFixture(t, bearerFront(ts.URL+"/token", "HT", &anon))
	for _, cfg := range []map[string]any{
		{"credHelpers": map[string]string{f.host: "fptest"}, "auths": map[string]any{f.host: map[string]string{"auth": base64.StdEncoding.EncodeToString([]byte("wrong:wrong"))}}},
		{"credsStore": "fptest"},
	} {
		t.Run(fmt.Sprint(len(cfg)), func(t *testing.T) {
			stdin := helper(t, "fptest", `cat > "$(dirname "$0")/stdin"
[ "$1" = get ] || exit 3
printf '{"ServerURL":"%s","Username":"carol","Secret":"from-helper"}' "$(cat "$(dirname "$0")/stdin")"
`)
			dockerConfig(t, cfg)
			c := registry.New(f.ref, registry.Options{Keychain: registry.DockerConfig{}, Timeout: 5 * time.Second})
			if err := f.pull(t, c); err != nil {
				t.Fatal(err)
			}
			if b, _ := os.ReadFile(stdin); string(b) != f.host {
				t.Errorf("the helper was asked for %q, want %q", b, f.host)
			}
		})
	}

	t.Run("not found", func(t *testing.T) {
		helper(t, "fptest", "echo 'credentials not found in native keychain'; exit 1\n")
		dockerConfig(t, map[string]any{"credsStore": "fptest"})
		c := registry.New(f.ref, registry.Options{Keychain: registry.DockerConfig{}, Timeout: 5 * time.Second})
		err := f.pull(t, c)
		if err == nil || !strings.Contains(err.Error(), "401") || !strings.Contains(err.Error(), "bad credentials") {
			t.Errorf("anonymous pull from a registry that wants credentials: %v", err)
		}
	})
	t.Run("hangs", func(t *testing.T) {
		helper(t, "fptest", "sleep 30\n")
		dockerConfig(t, map[string]any{"credsStore": "fptest"})
		c := registry.New(f.ref, registry.Options{Keychain: registry.DockerConfig{Timeout: 300 * time.Millisecond}, Timeout: 5 * time.Second})
		start := time.Now()
		err := f.pull(t, c)
		if err == nil || !strings.Contains(err.Error(), "no answer") || time.Since(start) > 5*time.Second {
			t.Errorf("a helper that never answers: %v after %v", err, time.Since(start))
		}
	})
	t.Run("floods", func(t *testing.T) {
		helper(t, "fptest", "head -c 10000000 /dev/zero\n")
		dockerConfig(t, map[string]any{"credsStore": "fptest"})
		c := registry.New(f.ref, registry.Options{Keychain: registry.DockerConfig{}, Timeout: 5 * time.Second})
		if err := f.pull(t, c); err == nil || !strings.Contains(err.Error(), "more than") {
			t.Errorf("a helper printing 10 MB: %v", err)
		}
	})
	t.Run("name with a path", func(t *testing.T) {
		dockerConfig(t, map[string]any{"credsStore": "../../bin/sh"})
		c := registry.New(f.ref, registry.Options{Keychain: registry.DockerConfig{}, Timeout: 5 * time.Second})
		if err := f.pull(t, c); err == nil || !strings.Contains(err.Error(), "refused") {
			t.Errorf("credsStore naming a path: %v", err)
		}
	})
}

// Docker Hub's credentials are stored under its historical URL.
func TestDockerHubConfigKey(t *testing.T) {
	dockerConfig(t, map[string]any{"auths": map[string]any{
		"https://index.docker.io/v1/": map[string]string{"auth": base64.StdEncoding.EncodeToString([]byte("hub:pw"))},
		"ghcr.io":                     map[string]string{"auth": base64.StdEncoding.EncodeToString([]byte("gh:pw"))},
	}})
	for reg, want := range map[string]string{"docker.io": "hub", "ghcr.io": "gh", "quay.io": ""} {
		c, err := registry.DockerConfig{}.Resolve(context.Background(), reg)
		if err != nil || c.Username != want {
			t.Errorf("%s: %+v, %v; want user %q", reg, c, err, want)
		}
	}
}

// A FIFO or a device in config.json's place is refused at once: reading
// it would block the pull forever (the open is non-blocking and the type
// is checked on the open file).
func TestDockerConfigNotARegularFile(t *testing.T) {
	dir := t.TempDir()
	if err := syscall.Mkfifo(filepath.Join(dir, "config.json"), 0o600); err != nil {
		t.Skip("mkfifo:", err)
	}
	t.Setenv("DOCKER_CONFIG", dir)
	done := make(chan error, 1)
	go func() {
		_, err := registry.DockerConfig{Timeout: time.Second}.Resolve(context.Background(), "ghcr.io")
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "not a regular file") {
			t.Errorf("err = %v; want a refusal", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("reading a FIFO as the docker config blocked")
	}
}
