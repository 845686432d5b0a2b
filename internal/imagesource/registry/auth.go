package registry

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/fastpath-dev/fastpath/internal/source"
)

// Credentials are what a registry may be shown. Username and Password go
// to a Basic challenge, and to a token endpoint as basic auth;
// IdentityToken is an OAuth refresh token (`docker login` with an identity
// provider stores one), exchanged at the token endpoint; RegistryToken is
// a bearer token used as it is.
type Credentials struct {
	Username, Password string
	IdentityToken      string
	RegistryToken      string
}

// Empty reports whether there is nothing to show: the pull is anonymous.
func (c Credentials) Empty() bool {
	return c.Username == "" && c.Password == "" && c.IdentityToken == "" && c.RegistryToken == ""
}

// Keychain finds the credentials for a registry, named as a Reference
// names it ("docker.io", "ghcr.io", "localhost:5000"). It is asked only
// when a registry refuses an anonymous request. No credentials is
// Credentials{} and a nil error.
type Keychain interface {
	Resolve(ctx context.Context, registry string) (Credentials, error)
}

// Caps on the docker config and on what a credential helper may print.
const (
	maxConfigFile   = 4 << 20
	maxHelperOutput = 64 << 10
)

// DockerConfig is the user's docker CLI configuration as docker pull
// reads it: $DOCKER_CONFIG/config.json, else ~/.docker/config.json.
// Timeout bounds a credential helper's run.
type DockerConfig struct {
	Timeout time.Duration
}

// configFile is the part of config.json that holds credentials.
type configFile struct {
	Auths       map[string]authEntry `json:"auths"`
	CredHelpers map[string]string    `json:"credHelpers"`
	CredsStore  string               `json:"credsStore"`
}

type authEntry struct {
	Auth          string `json:"auth"` // base64 of "user:password"
	Username      string `json:"username"`
	Password      string `json:"password"`
	IdentityToken string `json:"identitytoken"`
	RegistryToken string `json:"registrytoken"`
}

func configPath() (string, error) {
	if d := os.Getenv("DOCKER_CONFIG"); d != "" {
		return filepath.Join(d, "config.json"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(home, ".docker", "config.json"), nil
}

// serverKeys are the names a registry's credentials may be stored under:
// Docker Hub's historical URL first for Hub, the host itself otherwise.
func serverKeys(registry string) []string {
	if registry == DockerHub {
		return []string{dockerHubAuthKey, dockerHubLegacy, DockerHub, dockerHubAPI}
	}
	return []string{registry}
}

// keyHost is a config.json key reduced to its host[:port]: keys are
// written as hosts or as URLs ("https://ghcr.io", "https://index.docker.io/v1/").
func keyHost(k string) string {
	k = strings.TrimPrefix(strings.TrimPrefix(k, "https://"), "http://")
	if i := strings.IndexByte(k, '/'); i >= 0 {
		k = k[:i]
	}
	return strings.ToLower(k)
}

// Resolve reads the credentials for registry: a credHelpers entry for it
// first, then the credsStore helper, then the auths entry (the order the
// docker CLI uses). A missing config file means anonymous.
func (d DockerConfig) Resolve(ctx context.Context, registry string) (Credentials, error) {
	p, err := configPath()
	if err != nil {
		return Credentials{}, nil
	}
	b, err := source.ReadRegular(p, maxConfigFile)
	if errors.Is(err, os.ErrNotExist) {
		return Credentials{}, nil
	}
	if err != nil {
		return Credentials{}, fmt.Errorf("docker config: %w", err)
	}
	var cf configFile
	if err := json.Unmarshal(b, &cf); err != nil {
		return Credentials{}, fmt.Errorf("docker config %s: %v", p, err)
	}
	keys := serverKeys(registry)
	for _, k := range keys {
		if h, ok := cf.CredHelpers[k]; ok && h != "" {
			return d.runHelper(ctx, h, k)
		}
	}
	if cf.CredsStore != "" {
		c, err := d.runHelper(ctx, cf.CredsStore, keys[0])
		if err != nil || !c.Empty() {
			return c, err
		}
	}
	for _, k := range keys {
		if e, ok := cf.Auths[k]; ok {
			return e.credentials()
		}
	}
	want := map[string]bool{}
	for _, k := range keys {
		want[keyHost(k)] = true
	}
	names := make([]string, 0, len(cf.Auths))
	for k := range cf.Auths {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		if want[keyHost(k)] {
			return cf.Auths[k].credentials()
		}
	}
	return Credentials{}, nil
}

func (e authEntry) credentials() (Credentials, error) {
	c := Credentials{Username: e.Username, Password: e.Password, IdentityToken: e.IdentityToken, RegistryToken: e.RegistryToken}
	if e.Auth != "" {
		raw, err := base64.StdEncoding.DecodeString(strings.TrimSpace(e.Auth))
		if err != nil {
			return Credentials{}, fmt.Errorf("docker config: an auths entry's auth is not base64: %v", err)
		}
		user, pass, ok := strings.Cut(string(raw), ":")
		if !ok {
			return Credentials{}, errors.New("docker config: an auths entry's auth is not user:password")
		}
		c.Username, c.Password = user, pass
	}
	return c, nil
}

// validHelperName keeps a helper name to what names a program in PATH:
// no path separators, nothing a shell or the file system would read twice.
func validHelperName(n string) bool {
	if n == "" || len(n) > 64 {
		return false
	}
	for i := 0; i < len(n); i++ {
		c := n[i]
		if !(isAlnum(c) || c == '-' || c == '_' || c == '.') {
			return false
		}
	}
	return n[0] != '.' && n[0] != '-'
}

// runHelper runs docker-credential-NAME get, the server on its stdin, as
// the docker CLI does: the one program fastpath runs for a registry. It is
// the user's own configured helper, found in PATH on this host; it is
// bounded by the timeout and its output by maxHelperOutput. A helper that
// says the credentials are not found means anonymous.
func (d DockerConfig) runHelper(ctx context.Context, name, server string) (Credentials, error) {
	if !validHelperName(name) {
		return Credentials{}, fmt.Errorf("docker config: credential helper name %q refused", clip(name))
	}
	prog := "docker-credential-" + name
	path, err := exec.LookPath(prog)
	if err != nil {
		return Credentials{}, fmt.Errorf("docker config names credential helper %s: %w", prog, err)
	}
	timeout := d.Timeout
	if timeout <= 0 {
		timeout = 30 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, path, "get")
	cmd.Stdin = strings.NewReader(server)
	out := &cappedBuffer{max: maxHelperOutput}
	cmd.Stdout, cmd.Stderr = out, out
	cmd.WaitDelay = time.Second
	err = cmd.Run()
	if ctx.Err() != nil {
		return Credentials{}, fmt.Errorf("%s get: no answer in %v", prog, timeout)
	}
	if out.over {
		return Credentials{}, fmt.Errorf("%s get: more than %d bytes of output", prog, maxHelperOutput)
	}
	if err != nil {
		if bytes.Contains(bytes.ToLower(out.Bytes()), []byte("credentials not found")) {
			return Credentials{}, nil
		}
		return Credentials{}, fmt.Errorf("%s get: %v: %s", prog, err, clip(strings.TrimSpace(out.String())))
	}
	var resp struct {
		Username string `json:"Username"`
		Secret   string `json:"Secret"`
	}
	if err := json.Unmarshal(out.Bytes(), &resp); err != nil {
		return Credentials{}, fmt.Errorf("%s get: output is not the helper protocol's JSON: %v", prog, err)
	}
	if resp.Username == "<token>" {
		return Credentials{IdentityToken: resp.Secret}, nil
	}
	return Credentials{Username: resp.Username, Password: resp.Secret}, nil
}

// cappedBuffer keeps at most max bytes and notes that more came. The
// buffer is a field, not embedded: an embedded bytes.Buffer's ReadFrom
// would let io.Copy past Write's cap.
type cappedBuffer struct {
	buf  bytes.Buffer
	max  int
	over bool
}

func (c *cappedBuffer) Write(p []byte) (int, error) {
	if room := c.max - c.buf.Len(); len(p) > room {
		c.over = true
		if room > 0 {
			c.buf.Write(p[:room])
		}
		return len(p), nil
	}
	return c.buf.Write(p)
}

func (c *cappedBuffer) Bytes() []byte  { return c.buf.Bytes() }
func (c *cappedBuffer) String() string { return c.buf.String() }
