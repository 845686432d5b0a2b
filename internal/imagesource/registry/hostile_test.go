package registry_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fastpath-dev/fastpath/internal/imagesource/registry"
)

// hostile serves handler as a registry on loopback and returns a client
// for its repository x/y.
func hostile(t *testing.T, timeout time.Duration, kc registry.Keychain, h http.HandlerFunc) (*registry.Client, string) {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	host := strings.TrimPrefix(srv.URL, "http://")
	ref, err := registry.ParseReference(host + "/x/y:v1")
	if err != nil {
		t.Fatal(err)
	}
	return registry.New(ref, registry.Options{Keychain: kc, Timeout: timeout}), host
}

func sha(b []byte) string {
	h := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(h[:])
}

const manifestJSON = `{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json","config":{"mediaType":"application/vnd.oci.image.config.v1+json","digest":"sha256:` +
	"0000000000000000000000000000000000000000000000000000000000000000" + `","size":2},"layers":[]}`

// wantErr runs f, and fails unless it errs within limit with an error
// containing want and allocates less than maxAlloc bytes meanwhile.
func wantErr(t *testing.T, what, want string, limit time.Duration, maxAlloc uint64, f func() error) {
	t.Helper()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	start := time.Now()
	err := f()
	took := time.Since(start)
	runtime.ReadMemStats(&after)
	t.Logf("%s: %v (%v)", what, err, took.Round(time.Millisecond))
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("%s: %v; want an error containing %q", what, err, want)
	}
	if took > limit {
		t.Errorf("%s: took %v", what, took)
	}
	if a := after.TotalAlloc - before.TotalAlloc; a > maxAlloc {
		t.Errorf("%s: allocated %d MB", what, a>>20)
	}
	if len(fmt.Sprint(err)) > 1024 {
		t.Errorf("%s: error of %d bytes", what, len(fmt.Sprint(err)))
	}
}

func TestHostileRegistry(t *testing.T) {
	ctx := context.Background()
	zeros := make([]byte, 1<<20)

	t.Run("huge manifest, no length", func(t *testing.T) {
		c, _ := hostile(t, 5*time.Second, nil, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", registry.MediaOCIManifest)
			for i := 0; i < 100; i++ {
				if _, err := w.Write(zeros); err != nil {
					return
				}
			}
		})
		wantErr(t, "100 MB manifest", "more than the 4194304 bytes", 5*time.Second, 40<<20, func() error {
			_, err := c.Manifest(ctx, "v1", 4<<20)
			return err
		})
	})
	t.Run("huge manifest, declared", func(t *testing.T) {
		c, _ := hostile(t, 5*time.Second, nil, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Length", fmt.Sprint(1<<40))
			w.WriteHeader(http.StatusOK)
			w.Write(zeros)
		})
		wantErr(t, "1 TB manifest", "1099511627776 bytes, more than the 4194304 read", 5*time.Second, 8<<20, func() error {
			_, err := c.Manifest(ctx, "v1", 4<<20)
			return err
		})
	})
	t.Run("manifest not matching its digest", func(t *testing.T) {
		c, _ := hostile(t, 5*time.Second, nil, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", registry.MediaOCIManifest)
			w.Write([]byte(manifestJSON))
		})
		other := sha([]byte("something else"))
		wantErr(t, "manifest by digest", "hash to", 5*time.Second, 8<<20, func() error {
			_, err := c.Manifest(ctx, other, 4<<20)
			return err
		})
	})
	t.Run("tag digest is the bytes' digest", func(t *testing.T) {
		c, _ := hostile(t, 5*time.Second, nil, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", registry.MediaOCIManifest)
			w.Header().Set("Docker-Content-Digest", sha([]byte("a lie")))
			w.Write([]byte(manifestJSON))
		})
		m, err := c.Manifest(ctx, "v1", 4<<20)
		if err != nil || m.Digest != sha([]byte(manifestJSON)) || m.MediaType != registry.MediaOCIManifest {
			t.Errorf("manifest by tag: %+v, %v", m, err)
		}
	})
	t.Run("schema 1", func(t *testing.T) {
		c, _ := hostile(t, 5*time.Second, nil, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/vnd.docker.distribution.manifest.v1+prettyjws")
			w.Write([]byte(`{"schemaVersion":1,"name":"x/y","tag":"v1","fsLayers":[]}`))
		})
		wantErr(t, "schema 1", "schema 1 manifest", 5*time.Second, 8<<20, func() error {
			_, err := c.Manifest(ctx, "v1", 4<<20)
			return err
		})
	})
	t.Run("blobs not matching their digest", func(t *testing.T) {
		body := []byte("the registry's bytes")
		streamed := sha([]byte("sent without a length"))
		c, _ := hostile(t, 5*time.Second, nil, func(w http.ResponseWriter, r *http.Request) {
			if strings.HasSuffix(r.URL.Path, streamed) {
				w.(http.Flusher).Flush() // no Content-Length: the stream itself is checked
			}
			w.Write(body)
		})
		d := sha([]byte("what the manifest names"))
		// readBlob opens a layer blob and reads it to the end, where the
		// digest and the size are checked.
		readBlob := func(dig string, size int64) func() error {
			return func() error {
				rc, err := c.OpenBlob(ctx, dig, size)
				if err != nil {
					return err
				}
				defer rc.Close()
				_, err = readAll(rc)
				return err
			}
		}
		wantErr(t, "config blob", "hash to", 5*time.Second, 8<<20, func() error {
			_, err := c.Blob(ctx, d, 1<<20)
			return err
		})
		wantErr(t, "layer blob", "hash to", 5*time.Second, 8<<20, readBlob(d, int64(len(body))))
		wantErr(t, "layer blob longer than its size", "20 bytes, the manifest says 4", 5*time.Second, 8<<20, readBlob(d, 4))
		wantErr(t, "streamed layer blob longer than its size", "more than the 4 bytes the manifest says", 5*time.Second, 8<<20, readBlob(streamed, 4))
		wantErr(t, "streamed layer blob shorter than its size", "20 bytes, the manifest says 40", 5*time.Second, 8<<20, readBlob(streamed, 40))
		if rc, err := c.OpenBlob(ctx, sha(body), int64(len(body))); err != nil {
			t.Error(err)
		} else if b, err := readAll(rc); err != nil || string(b) != string(body) {
			t.Errorf("a blob matching its digest: %q, %v", b, err)
		}
	})
	t.Run("redirect loop", func(t *testing.T) {
		var hits atomic.Int32
		c, _ := hostile(t, 5*time.Second, nil, func(w http.ResponseWriter, r *http.Request) {
			hits.Add(1)
			http.Redirect(w, r, r.URL.Path, http.StatusTemporaryRedirect)
		})
		wantErr(t, "redirect loop", "more than 10 redirects", 5*time.Second, 8<<20, func() error {
			_, err := c.Blob(ctx, sha([]byte("x")), 1<<20)
			return err
		})
		if hits.Load() > 11 {
			t.Errorf("%d requests", hits.Load())
		}
	})
	t.Run("slow token endpoint", func(t *testing.T) {
		slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			select {
			case <-r.Context().Done():
			case <-time.After(20 * time.Second):
			}
		}))
		defer slow.Close()
		c, _ := hostile(t, 300*time.Millisecond, nil, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("WWW-Authenticate", `Bearer realm="`+slow.URL+`/token",service="s"`)
			w.WriteHeader(http.StatusUnauthorized)
		})
		wantErr(t, "slow token endpoint", "deadline exceeded", 5*time.Second, 8<<20, func() error {
			_, err := c.Manifest(ctx, "v1", 4<<20)
			return err
		})
	})
	t.Run("401 forever", func(t *testing.T) {
		tokens := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Write([]byte(`{"token":"never-enough"}`))
		}))
		defer tokens.Close()
		var hits atomic.Int32
		c, _ := hostile(t, 5*time.Second, nil, func(w http.ResponseWriter, r *http.Request) {
			hits.Add(1)
			w.Header().Set("WWW-Authenticate", `Bearer realm="`+tokens.URL+`/token",service="s"`)
			w.WriteHeader(http.StatusUnauthorized)
		})
		wantErr(t, "401 forever", "401 Unauthorized", 5*time.Second, 8<<20, func() error {
			_, err := c.Manifest(ctx, "v1", 4<<20)
			return err
		})
		if hits.Load() != 2 {
			t.Errorf("%d requests to a registry that always says 401, want 2 (anonymous, then with the token)", hits.Load())
		}
	})
	t.Run("401 without a challenge", func(t *testing.T) {
		c, _ := hostile(t, 5*time.Second, nil, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("WWW-Authenticate", "Bearer "+strings.Repeat("x", 100<<10))
			w.WriteHeader(http.StatusUnauthorized)
		})
		wantErr(t, "no usable challenge", "without a Bearer or Basic challenge", 5*time.Second, 8<<20, func() error {
			_, err := c.Manifest(ctx, "v1", 4<<20)
			return err
		})
	})
	t.Run("huge token", func(t *testing.T) {
		tokens := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Write([]byte(`{"token":"`))
			for i := 0; i < 50; i++ {
				w.Write(zeros)
			}
		}))
		defer tokens.Close()
		c, _ := hostile(t, 5*time.Second, nil, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("WWW-Authenticate", `Bearer realm="`+tokens.URL+`"`)
			w.WriteHeader(http.StatusUnauthorized)
		})
		wantErr(t, "50 MB token", "more than 1048576 bytes", 5*time.Second, 16<<20, func() error {
			_, err := c.Manifest(ctx, "v1", 4<<20)
			return err
		})
	})
	t.Run("credentials never sent to a plain http realm elsewhere", func(t *testing.T) {
		kc := staticKeychain{Username: "u", Password: "p"}
		c, _ := hostile(t, 5*time.Second, kc, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("WWW-Authenticate", `Bearer realm="http://auth.example.invalid/token"`)
			w.WriteHeader(http.StatusUnauthorized)
		})
		wantErr(t, "http realm", "credentials are not sent there", 5*time.Second, 8<<20, func() error {
			_, err := c.Manifest(ctx, "v1", 4<<20)
			return err
		})
	})
}

// A registry on the local link (*.local) is spoken to over plain http,
// anonymously only: its challenge is refused, and a token realm there is
// never sent credentials.
func TestNoCredentialsOverPlainHTTPToAnotherMachine(t *testing.T) {
	var sawAuth atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "" {
			sawAuth.Add(1)
		}
		w.Header().Set("WWW-Authenticate", `Basic realm="nas"`)
		w.WriteHeader(http.StatusUnauthorized)
	}))
	defer srv.Close()
	addr := strings.TrimPrefix(srv.URL, "http://")
	toServer := &http.Transport{DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, network, addr)
	}}
	ref, err := registry.ParseReference("nas.local:5000/x/y:v1")
	if err != nil || ref.Scheme() != "http" {
		t.Fatalf("%+v %s, %v", ref, ref.Scheme(), err)
	}
	c := registry.New(ref, registry.Options{Transport: toServer, Keychain: staticKeychain{Username: "u", Password: "p"}, Timeout: 5 * time.Second})
	wantErr(t, "*.local registry asking for Basic", "not sent over plain http", 5*time.Second, 8<<20, func() error {
		_, err := c.Manifest(context.Background(), "v1", 4<<20)
		return err
	})
	if sawAuth.Load() != 0 {
		t.Error("credentials were sent over plain http to a *.local registry")
	}
}

// A registry outside this network naming a token realm inside it (the
// cloud metadata service, a private or loopback address) is refused
// before anything is sent there.
func TestRealmInsideNetworkRefused(t *testing.T) {
	srv := httptest.NewTLSServer(nil)
	defer srv.Close()
	for _, realm := range []string{"http://169.254.169.254/latest/meta-data/", "https://10.0.0.1/token", "http://127.0.0.1:9/token", "https://[fd00:ec2::254]/token",
		// A link-local IPv6 address with a zone (the interface to dial on)
		// is not an IP literal to net.ParseIP, but is one to the dialer.
		"http://[fe80::a9fe:a9fe%25eth0]/token", "https://[fe80::1%25lo]:8443/token", "http://[::1%25lo]:9/token"} {
		var dialed []string
		srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("WWW-Authenticate", `Bearer realm="`+realm+`",service="s"`)
			w.WriteHeader(http.StatusUnauthorized)
		})
		addr := strings.TrimPrefix(srv.URL, "https://")
		tr := srv.Client().Transport.(*http.Transport).Clone()
		tr.DialContext = func(ctx context.Context, network, a string) (net.Conn, error) {
			dialed = append(dialed, a)
			return (&net.Dialer{}).DialContext(ctx, network, addr)
		}
		ref, _ := registry.ParseReference("registry.example.com/x/y:v1")
		c := registry.New(ref, registry.Options{Transport: tr, Timeout: 5 * time.Second})
		wantErr(t, realm, "inside this network", 5*time.Second, 8<<20, func() error {
			_, err := c.Manifest(context.Background(), "v1", 4<<20)
			return err
		})
		for _, a := range dialed {
			if a != "registry.example.com:443" {
				t.Errorf("dialed %s", a)
			}
		}
	}
}

// The same for a redirect: a blob of a registry outside this network is
// never fetched from an address inside it.
func TestRedirectInsideNetworkRefused(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://169.254.169.254/latest/meta-data/", http.StatusTemporaryRedirect)
	}))
	defer srv.Close()
	var dialed []string
	addr := strings.TrimPrefix(srv.URL, "https://")
	tr := srv.Client().Transport.(*http.Transport).Clone()
	tr.DialContext = func(ctx context.Context, network, a string) (net.Conn, error) {
		dialed = append(dialed, a)
		return (&net.Dialer{}).DialContext(ctx, network, addr)
	}
	ref, _ := registry.ParseReference("registry.example.com/x/y:v1")
	c := registry.New(ref, registry.Options{Transport: tr, Timeout: 5 * time.Second})
	wantErr(t, "redirect to the metadata service", "inside this network", 5*time.Second, 8<<20, func() error {
		_, err := c.OpenBlob(context.Background(), sha([]byte("x")), 1)
		return err
	})
	if len(dialed) != 1 || dialed[0] != "registry.example.com:443" {
		t.Errorf("dialed %v", dialed)
	}
}

// A private registry refusing an anonymous pull: the error says no
// credentials were found.
func TestNoCredentialsExplained(t *testing.T) {
	c, _ := hostile(t, 5*time.Second, staticKeychain{}, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("WWW-Authenticate", `Basic realm="r"`)
		w.WriteHeader(http.StatusUnauthorized)
	})
	wantErr(t, "private registry, no credentials", "asks for a user name and password", 5*time.Second, 8<<20, func() error {
		_, err := c.Manifest(context.Background(), "v1", 4<<20)
		return err
	})
	tokens := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`{"token":"anonymous"}`))
	}))
	defer tokens.Close()
	c, _ = hostile(t, 5*time.Second, staticKeychain{}, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("WWW-Authenticate", `Bearer realm="`+tokens.URL+`"`)
		w.WriteHeader(http.StatusUnauthorized)
	})
	wantErr(t, "private repository, anonymous token", "no credentials for 127.0.0.1", 5*time.Second, 8<<20, func() error {
		_, err := c.Manifest(context.Background(), "v1", 4<<20)
		return err
	})
}

// A blob redirected to another host (a storage bucket) is fetched without
// the registry's Authorization header.
func TestRedirectToStorageDropsAuthorization(t *testing.T) {
	body := []byte("layer bytes")
	var leaked atomic.Value
	storage := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		leaked.Store(r.Header.Get("Authorization"))
		w.Write(body)
	}))
	defer storage.Close()
	c, _ := hostile(t, 5*time.Second, staticKeychain{Username: "u", Password: "p"}, func(w http.ResponseWriter, r *http.Request) {
		if u, p, ok := r.BasicAuth(); !ok || u != "u" || p != "p" {
			w.Header().Set("WWW-Authenticate", `Basic realm="r"`)
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		http.Redirect(w, r, storage.URL+"/bucket/blob", http.StatusTemporaryRedirect)
	})
	rc, err := c.OpenBlob(context.Background(), sha(body), int64(len(body)))
	if err != nil {
		t.Fatal(err)
	}
	b, err := readAll(rc)
	if err != nil || string(b) != string(body) {
		t.Fatalf("%q, %v", b, err)
	}
	if a, _ := leaked.Load().(string); a != "" {
		t.Errorf("the storage host was sent Authorization %q", a)
	}
}

type staticKeychain registry.Credentials

func (k staticKeychain) Resolve(context.Context, string) (registry.Credentials, error) {
	return registry.Credentials(k), nil
}

func readAll(rc interface{ Read([]byte) (int, error) }) ([]byte, error) {
	var out []byte
	buf := make([]byte, 32<<10)
	for {
		n, err := rc.Read(buf)
		out = append(out, buf[:n]...)
		if err != nil {
			if err.Error() == "EOF" {
				return out, nil
			}
			return out, err
		}
	}
}

// A challenge without a service (nvcr.io sends none): the token request
// names only the scope, and the token is then used.
func TestTokenWithoutService(t *testing.T) {
	var query atomic.Value
	tokens := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		query.Store(r.URL.RawQuery)
		w.Write([]byte(`{"token":"ngc","expires_in":300}`))
	}))
	defer tokens.Close()
	c, _ := hostile(t, 5*time.Second, nil, func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer ngc" {
			w.Header().Set("WWW-Authenticate", `Bearer realm="`+tokens.URL+`/proxy_auth",scope="repository:x/y:pull"`)
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		w.Header().Set("Content-Type", registry.MediaOCIManifest)
		w.Write([]byte(manifestJSON))
	})
	if _, err := c.Manifest(context.Background(), "v1", 4<<20); err != nil {
		t.Fatal(err)
	}
	if q, _ := query.Load().(string); q != "scope=repository%3Ax%2Fy%3Apull" {
		t.Errorf("token request query %q", q)
	}
}
