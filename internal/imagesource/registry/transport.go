package registry

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
)

// Caps on what an authorization exchange may make fastpath read.
const (
	maxChallengeBytes = 8 << 10
	maxTokenBody      = 1 << 20
)

// authTransport sends each request to the registry anonymously first, and
// answers a 401 the way the registry's challenge asks: a bearer token from
// its token endpoint, or basic auth. The authorization it settles on is
// reused for every later request of the repository. It adds an
// Authorization header only to requests for the registry's own host, so a
// redirect to a storage host carries none (as net/http drops a header set
// by the caller when a redirect leaves the host).
type authTransport struct {
	base     http.RoundTripper
	host     string
	scheme   string
	registry string
	repo     string
	kc       Keychain
	timeout  time.Duration

	mu       sync.Mutex
	authz    string // the Authorization header to send; "" anonymous
	asked    bool   // kc was asked
	creds    Credentials
	credsErr error
}

func (t *authTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.URL.Host != t.host {
		return t.base.RoundTrip(req)
	}
	t.mu.Lock()
	authz := t.authz
	t.mu.Unlock()
	resp, err := t.send(req, authz)
	if err != nil || resp.StatusCode != http.StatusUnauthorized || (req.Body != nil && req.Body != http.NoBody) {
		return resp, err
	}
	challenges := resp.Header.Values("Www-Authenticate")
	io.Copy(io.Discard, io.LimitReader(resp.Body, maxErrorBody))
	resp.Body.Close()
	next, err := t.authorize(req.Context(), challenges, authz)
	if err != nil {
		return nil, err
	}
	// One retry: a registry that refuses what it asked for is answered
	// with its 401, never a loop.
	return t.send(req, next)
}

func (t *authTransport) send(req *http.Request, authz string) (*http.Response, error) {
	if authz == "" {
		return t.base.RoundTrip(req)
	}
	r := req.Clone(req.Context())
	r.Header.Set("Authorization", authz)
	return t.base.RoundTrip(r)
}

// credentials asks the keychain once.
func (t *authTransport) credentials(ctx context.Context) Credentials {
	if !t.asked && t.kc != nil {
		t.asked = true
		t.creds, t.credsErr = t.kc.Resolve(ctx, t.registry)
	}
	return t.creds
}

// explain adds to a registry's refusal why credentials were not used, or
// that there were none.
func (t *authTransport) explain(err error) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.credsErr != nil {
		return fmt.Errorf("%w (credentials for %s: %v)", err, t.registry, t.credsErr)
	}
	var se *StatusError
	if t.asked && t.creds.Empty() && errors.As(err, &se) && (se.Code == http.StatusUnauthorized || se.Code == http.StatusForbidden) {
		return fmt.Errorf("%w (no credentials for %s were found in the docker config)", err, t.registry)
	}
	return err
}

// authorize settles the Authorization header for the challenges of a 401
// that answered a request sent with old. Concurrent requests wait for one
// exchange.
func (t *authTransport) authorize(ctx context.Context, challenges []string, old string) (string, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.authz != old {
		return t.authz, nil // another request has authorized meanwhile
	}
	if t.scheme != "https" && !loopbackHost(t.host) {
		return "", fmt.Errorf("%s asks for authorization, and credentials and tokens are not sent over plain http to another machine", t.host)
	}
	var chs []challenge
	total := 0
	for _, h := range challenges {
		if total += len(h); total > maxChallengeBytes {
			break
		}
		chs = append(chs, parseChallenges(h)...)
	}
	for _, ch := range chs {
		if ch.scheme == "bearer" && ch.params["realm"] != "" {
			tok, err := t.token(ctx, ch.params)
			if err != nil {
				return "", err
			}
			t.authz = "Bearer " + tok
			return t.authz, nil
		}
	}
	for _, ch := range chs {
		if ch.scheme == "basic" {
			c := t.credentials(ctx)
			if c.Username == "" && c.Password == "" {
				if t.credsErr != nil {
					return "", fmt.Errorf("%s asks for a user name and password, and reading them failed: %v", t.host, t.credsErr)
				}
				return "", fmt.Errorf("%s asks for a user name and password (Basic), and the docker config has none for %s", t.host, t.registry)
			}
			t.authz = "Basic " + base64.StdEncoding.EncodeToString([]byte(c.Username+":"+c.Password))
			return t.authz, nil
		}
	}
	return "", fmt.Errorf("%s: %w", t.host, errNoChallenge)
}

// token gets a bearer token for pulling the repository from the realm of
// a Bearer challenge (Docker's token authentication spec): a registry
// token from the config is used as it is; an identity token is exchanged
// by a POST of grant_type=refresh_token (the OAuth2 form); otherwise a GET
// with the user name and password as basic auth, or none. Credentials go
// only to an https realm, or to a plain http one on this machine; a
// registry outside this network may not name a realm inside it.
func (t *authTransport) token(ctx context.Context, params map[string]string) (string, error) {
	realm, err := url.Parse(params["realm"])
	if err != nil || (realm.Scheme != "https" && realm.Scheme != "http") || realm.Host == "" {
		return "", fmt.Errorf("%s: token realm %q is not an http(s) URL", t.host, clip(params["realm"]))
	}
	// A registry outside may not send fastpath to an address inside (the
	// metadata service, a router): the realm of a public registry is a
	// public host.
	if internalHost(realm.Host) && !internalHost(t.host) && hostName(realm.Host) != hostName(t.host) {
		return "", fmt.Errorf("%s: token realm %s is an address inside this network, and the registry is not: refused", t.host, clip(realm.Redacted()))
	}
	c := t.credentials(ctx)
	if c.RegistryToken != "" {
		return c.RegistryToken, nil
	}
	if !c.Empty() && realm.Scheme != "https" && !loopbackHost(realm.Host) {
		return "", fmt.Errorf("%s: token realm %s is plain http; credentials are not sent there", t.host, clip(realm.Redacted()))
	}
	scope := "repository:" + t.repo + ":pull"
	ctx, cancel := context.WithTimeout(ctx, t.timeout)
	defer cancel()
	var req *http.Request
	if c.IdentityToken != "" {
		form := url.Values{"grant_type": {"refresh_token"}, "refresh_token": {c.IdentityToken}, "client_id": {"fastpath"}, "scope": {scope}}
		if s := params["service"]; s != "" {
			form.Set("service", s)
		}
		req, err = http.NewRequestWithContext(ctx, http.MethodPost, realm.String(), strings.NewReader(form.Encode()))
		if err != nil {
			return "", err
		}
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	} else {
		q := realm.Query()
		if s := params["service"]; s != "" {
			q.Set("service", s)
		}
		q.Set("scope", scope)
		realm.RawQuery = q.Encode()
		req, err = http.NewRequestWithContext(ctx, http.MethodGet, realm.String(), nil)
		if err != nil {
			return "", err
		}
		if c.Username != "" || c.Password != "" {
			req.SetBasicAuth(c.Username, c.Password)
		}
	}
	client := &http.Client{Transport: t.base, CheckRedirect: redirectPolicy(t.host)}
	where := req.Method + " " + realm.Scheme + "://" + realm.Host + realm.Path
	resp, err := client.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return "", fmt.Errorf("token for %s: %s: no answer in %v: %w", t.repo, where, t.timeout, ctx.Err())
		}
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return "", fmt.Errorf("token for %s: %s: %w", t.repo, where, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("token for %s: %w", t.repo, statusError(realm.Scheme+"://"+realm.Host+realm.Path, resp))
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxTokenBody+1))
	if err != nil {
		return "", fmt.Errorf("%s: %w", where, err)
	}
	if len(b) > maxTokenBody {
		return "", fmt.Errorf("%s: token response of more than %d bytes", where, maxTokenBody)
	}
	var tr struct {
		Token       string `json:"token"`
		AccessToken string `json:"access_token"`
	}
	if err := json.Unmarshal(b, &tr); err != nil {
		return "", fmt.Errorf("%s: token response is not JSON: %v", where, err)
	}
	tok := tr.Token
	if tok == "" {
		tok = tr.AccessToken
	}
	if tok == "" {
		return "", fmt.Errorf("%s: the response holds no token", where)
	}
	if strings.ContainsAny(tok, "\r\n") {
		return "", fmt.Errorf("%s: the token holds a line break", where)
	}
	return tok, nil
}

// challenge is one auth-scheme of a WWW-Authenticate header (RFC 7235)
// and its parameters, names lower-cased.
type challenge struct {
	scheme string
	params map[string]string
}

// parseChallenges reads `Scheme k=v, k="v", Scheme2 k=v` into challenges;
// what it cannot read ends the parse with what it has.
func parseChallenges(h string) []challenge {
	var out []challenge
	s := h
	for {
		s = strings.TrimLeft(s, " \t,")
		if s == "" {
			return out
		}
		tok, rest := readToken(s)
		if tok == "" {
			return out
		}
		ch := challenge{scheme: strings.ToLower(tok), params: map[string]string{}}
		s = rest
		for {
			s = strings.TrimLeft(s, " \t")
			// A parameter is token "=" value; a token followed by
			// anything else starts the next challenge.
			name, after := readToken(s)
			after = strings.TrimLeft(after, " \t")
			if name == "" || !strings.HasPrefix(after, "=") {
				break
			}
			after = strings.TrimLeft(after[1:], " \t")
			var val string
			if strings.HasPrefix(after, `"`) {
				var ok bool
				val, after, ok = readQuoted(after)
				if !ok {
					out = append(out, ch)
					return out
				}
			} else {
				val, after = readToken(after)
			}
			ch.params[strings.ToLower(name)] = val
			s = strings.TrimLeft(after, " \t")
			if !strings.HasPrefix(s, ",") {
				break
			}
			s = s[1:]
		}
		out = append(out, ch)
	}
}

// readToken reads an RFC 7230 token (the token68 form's "/", "+" and "="
// are left out: tokens here are scheme and parameter names, and unquoted
// values).
func readToken(s string) (string, string) {
	i := 0
	for i < len(s) && isTokenChar(s[i]) {
		i++
	}
	return s[:i], s[i:]
}

func isTokenChar(c byte) bool {
	return isAlnum(c) || strings.IndexByte("!#$%&'*+-.^_`|~/:", c) >= 0
}

func readQuoted(s string) (string, string, bool) {
	var b strings.Builder
	for i := 1; i < len(s); i++ {
		switch c := s[i]; c {
		case '"':
			return b.String(), s[i+1:], true
		case '\\':
			if i+1 < len(s) {
				i++
				b.WriteByte(s[i])
			}
		default:
			b.WriteByte(c)
		}
	}
	return "", "", false
}
