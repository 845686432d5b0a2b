package registry

import (
	"context"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Media types a manifest request accepts: both indexes and both image
// manifests. Docker's schema 1 is not asked for, and refused if sent.
const (
	MediaOCIIndex       = "application/vnd.oci.image.index.v1+json"
	MediaOCIManifest    = "application/vnd.oci.image.manifest.v1+json"
	MediaDockerList     = "application/vnd.docker.distribution.manifest.list.v2+json"
	MediaDockerManifest = "application/vnd.docker.distribution.manifest.v2+json"
	acceptManifests     = MediaOCIIndex + ", " + MediaOCIManifest + ", " + MediaDockerList + ", " + MediaDockerManifest
)

// maxRedirects caps the redirects one request follows (blobs are often
// served by a storage host the registry redirects to).
const maxRedirects = 10

// maxErrorBody caps what is read of an error response to quote it.
const maxErrorBody = 4 << 10

// Options configure a Client.
type Options struct {
	// Transport carries every request; it should bound its own waits
	// (connecting, TLS, response headers). nil: http.DefaultTransport.
	Transport http.RoundTripper
	// Keychain gives credentials when the registry refuses an anonymous
	// request; nil: always anonymous.
	Keychain Keychain
	// Timeout bounds each small request whole (a token, a manifest, a
	// config) and a credential helper's run; 0: 30 s.
	Timeout time.Duration
}

// Client pulls from one repository of one registry.
type Client struct {
	ref     Reference
	base    string // scheme://host/v2/repository
	http    *http.Client
	auth    *authTransport
	timeout time.Duration
}

// New is a client for ref's repository.
func New(ref Reference, o Options) *Client {
	if o.Transport == nil {
		o.Transport = http.DefaultTransport
	}
	if o.Timeout <= 0 {
		o.Timeout = 30 * time.Second
	}
	at := &authTransport{
		base: o.Transport, host: ref.APIHost(), scheme: ref.Scheme(), registry: ref.Registry, repo: ref.Repository,
		kc: o.Keychain, timeout: o.Timeout,
	}
	return &Client{
		ref:     ref,
		base:    ref.Scheme() + "://" + ref.APIHost() + "/v2/" + ref.Repository,
		http:    &http.Client{Transport: at, CheckRedirect: redirectPolicy(ref.APIHost())},
		auth:    at,
		timeout: o.Timeout,
	}
}

// redirectPolicy follows at most maxRedirects redirects, and none from a
// registry outside this network to an address inside it (as for token
// realms: a public registry may not point fastpath at the metadata
// service or a router).
func redirectPolicy(registryHost string) func(*http.Request, []*http.Request) error {
	return func(req *http.Request, via []*http.Request) error {
		if len(via) >= maxRedirects {
			return fmt.Errorf("more than %d redirects", maxRedirects)
		}
		if internalHost(req.URL.Host) && !internalHost(registryHost) {
			return fmt.Errorf("redirect to %s, an address inside this network, from a registry outside it: refused", req.URL.Host)
		}
		return nil
	}
}

// HTTPClient sends requests with the repository's authorization (to the
// registry's host only; a redirect elsewhere carries none).
func (c *Client) HTTPClient() *http.Client { return c.http }

// BlobURL is where the blob of digest d is fetched from.
func (c *Client) BlobURL(d string) string { return c.base + "/blobs/" + d }

// Manifest is a manifest or index as the registry sent it.
type Manifest struct {
	Body      []byte
	MediaType string // the Content-Type, parameters dropped
	Digest    string // digest of Body: sha256, or the algorithm it was asked by
}

// Manifest fetches the manifest named by a tag or a digest, at most max
// bytes. One fetched by digest must hash to it; one fetched by tag is
// named by the sha256 of its bytes (a Docker-Content-Digest header is
// not trusted). Docker's schema 1 manifests are refused.
func (c *Client) Manifest(ctx context.Context, ident string, max int64) (*Manifest, error) {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	u := c.base + "/manifests/" + ident
	body, resp, err := c.getSmall(ctx, u, acceptManifests, max)
	if err != nil {
		return nil, err
	}
	mt := resp.Header.Get("Content-Type")
	if t, _, err := mime.ParseMediaType(mt); err == nil {
		mt = t
	}
	if strings.HasPrefix(mt, "application/vnd.docker.distribution.manifest.v1") || schemaVersion(body) == 1 {
		return nil, fmt.Errorf("%s is a Docker schema 1 manifest, which fastpath does not read (push the image again with a current docker or buildkit)", c.ref.Repository+refSep(ident)+ident)
	}
	m := &Manifest{Body: body, MediaType: mt, Digest: Digest(body, "sha256")}
	if CheckDigest(ident) == nil {
		m.Digest = Digest(body, ident)
		if m.Digest != ident {
			return nil, fmt.Errorf("GET %s: the manifest's bytes hash to %s, not the digest asked for", u, short(m.Digest))
		}
	}
	return m, nil
}

func refSep(ident string) string {
	if CheckDigest(ident) == nil {
		return "@"
	}
	return ":"
}

func schemaVersion(b []byte) int {
	var v struct {
		SchemaVersion int `json:"schemaVersion"`
	}
	if json.Unmarshal(b, &v) != nil {
		return 0
	}
	return v.SchemaVersion
}

// Blob fetches a small blob (a config) of at most max bytes; its bytes
// must hash to d.
func (c *Client) Blob(ctx context.Context, d string, max int64) ([]byte, error) {
	if err := CheckDigest(d); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	u := c.BlobURL(d)
	body, _, err := c.getSmall(ctx, u, "", max)
	if err != nil {
		return nil, err
	}
	if got := Digest(body, d); got != d {
		return nil, fmt.Errorf("GET %s: the blob's bytes hash to %s", u, short(got))
	}
	return body, nil
}

// OpenBlob streams the blob d from its start. The stream is checked as it
// is read: it fails once more than size bytes come (size >= 0), and at its
// end if fewer came or the bytes do not hash to d. A reader that stops
// before the end (a layer's tar ends before its gzip stream does) has
// checked only what it read, as with any streaming pull.
func (c *Client) OpenBlob(ctx context.Context, d string, size int64) (io.ReadCloser, error) {
	if err := CheckDigest(d); err != nil {
		return nil, err
	}
	u := c.BlobURL(d)
	resp, err := c.get(ctx, u, "", nil)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		defer resp.Body.Close()
		return nil, statusError(u, resp)
	}
	if size >= 0 && resp.ContentLength > size {
		resp.Body.Close()
		return nil, fmt.Errorf("GET %s: %d bytes, the manifest says %d", u, resp.ContentLength, size)
	}
	return &verifier{rc: resp.Body, h: newHash(d), want: d, size: size, url: u}, nil
}

// get sends a GET through the authorizing transport.
func (c *Client) get(ctx context.Context, u, accept string, hdr http.Header) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	for k, v := range hdr {
		req.Header[k] = v
	}
	resp, err := c.http.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = fmt.Errorf("GET %s: %w", ue.URL, ue.Err)
		}
		return nil, c.auth.explain(err)
	}
	if resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden {
		defer resp.Body.Close()
		return nil, c.auth.explain(statusError(u, resp))
	}
	return resp, nil
}

// getSmall GETs u and reads its body, refusing more than max bytes.
func (c *Client) getSmall(ctx context.Context, u, accept string, max int64) ([]byte, *http.Response, error) {
	resp, err := c.get(ctx, u, accept, nil)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, nil, statusError(u, resp)
	}
	if resp.ContentLength > max {
		return nil, nil, fmt.Errorf("GET %s: %d bytes, more than the %d read", u, resp.ContentLength, max)
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, max+1))
	if err != nil {
		return nil, nil, fmt.Errorf("GET %s: %w", u, err)
	}
	if int64(len(b)) > max {
		return nil, nil, fmt.Errorf("GET %s: more than the %d bytes read", u, max)
	}
	return b, resp, nil
}

// statusError quotes a failed response: its status and the registry's
// error codes (the distribution spec's {"errors": [{"code", "message"}]}).
func statusError(u string, resp *http.Response) error {
	b, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	var e struct {
		Errors []struct {
			Code    string `json:"code"`
			Message string `json:"message"`
		} `json:"errors"`
	}
	msg := ""
	if json.Unmarshal(b, &e) == nil {
		var parts []string
		for i, x := range e.Errors {
			if i == 3 {
				break
			}
			parts = append(parts, strings.TrimSpace(clip(x.Code+": "+x.Message)))
		}
		msg = strings.Join(parts, "; ")
	}
	if msg != "" {
		return &StatusError{URL: u, Status: resp.Status, Code: resp.StatusCode, Detail: msg}
	}
	return &StatusError{URL: u, Status: resp.Status, Code: resp.StatusCode}
}

// StatusError is a registry's answer other than success.
type StatusError struct {
	URL, Status, Detail string
	Code                int
}

func (e *StatusError) Error() string {
	s := "GET " + e.URL + ": " + e.Status
	if e.Detail != "" {
		s += " (" + e.Detail + ")"
	}
	return s
}

// Digest is b's digest in the algorithm alg names ("sha256", "sha512",
// or a digest of either).
func Digest(b []byte, alg string) string {
	h := newHash(alg)
	h.Write(b)
	return algName(alg) + ":" + hex.EncodeToString(h.Sum(nil))
}

func algName(alg string) string {
	if strings.HasPrefix(alg, "sha512") {
		return "sha512"
	}
	return "sha256"
}

func newHash(alg string) hash.Hash {
	if algName(alg) == "sha512" {
		return sha512.New()
	}
	return sha256.New()
}

func short(d string) string {
	if len(d) > 19 {
		return d[:19]
	}
	return d
}

// verifier checks a streamed blob's size and digest.
type verifier struct {
	rc   io.ReadCloser
	h    hash.Hash
	want string
	size int64
	n    int64
	url  string
	err  error
}

func (v *verifier) Read(p []byte) (int, error) {
	if v.err != nil {
		return 0, v.err
	}
	n, err := v.rc.Read(p)
	v.h.Write(p[:n])
	v.n += int64(n)
	if v.size >= 0 && v.n > v.size {
		v.err = fmt.Errorf("GET %s: more than the %d bytes the manifest says", v.url, v.size)
		return 0, v.err
	}
	if err == io.EOF {
		if v.size >= 0 && v.n != v.size {
			v.err = fmt.Errorf("GET %s: %d bytes, the manifest says %d: %w", v.url, v.n, v.size, io.ErrUnexpectedEOF)
			return n, v.err
		}
		if got := algName(v.want) + ":" + hex.EncodeToString(v.h.Sum(nil)); got != v.want {
			v.err = fmt.Errorf("GET %s: the blob's bytes hash to %s", v.url, short(got))
			return n, v.err
		}
	}
	return n, err
}

func (v *verifier) Close() error { return v.rc.Close() }

var errNoChallenge = errors.New("the registry answered 401 without a Bearer or Basic challenge")
