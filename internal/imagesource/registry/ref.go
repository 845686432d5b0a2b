// Package registry is fastpath's own client for the part of the OCI
// distribution API that reading an image needs: pulling manifests and blobs
// anonymously or with the user's docker credentials. It uses the standard
// library only, so its cost at start-up is nothing (issue 17); the
// libraries it replaces compiled regular expressions and registered
// credential helpers in package inits that every command paid for.
//
// It follows the specifications, not another client: the OCI distribution
// spec (GET /v2/<name>/manifests/<reference>, /v2/<name>/blobs/<digest>),
// Docker's token authentication spec (Bearer challenges, refresh tokens),
// and the docker CLI's config.json (auths, credHelpers, credsStore).
package registry

import (
	"errors"
	"fmt"
	"net"
	"strings"
)

// Docker Hub's names: the registry as references and docker pull spell
// it, the host its API answers on, and the key its credentials are stored
// under in config.json.
const (
	DockerHub        = "docker.io"
	dockerHubAPI     = "registry-1.docker.io"
	dockerHubLegacy  = "index.docker.io"
	dockerHubAuthKey = "https://index.docker.io/v1/"
	defaultTag       = "latest"
	// MaxReferenceLen caps what is parsed: a valid reference is at most a
	// 255-byte name, a 128-byte tag and a 135-byte digest.
	MaxReferenceLen = 1024
	maxNameLen      = 255
	maxTagLen       = 128
)

// Reference is a parsed image reference: [registry[:port]/]repo[:tag][@digest].
type Reference struct {
	Registry   string // "docker.io", "ghcr.io", "localhost:5000", "[::1]:5000"
	Repository string // "library/ubuntu", "org/image"
	Tag        string // "latest" when neither a tag nor a digest is written
	Digest     string // "sha256:…" or "sha512:…"; "" when pulled by tag
}

// Identifier is what the manifest is fetched by: the digest when there is
// one (a tag written next to it is then only a label, as docker pull
// treats it), else the tag.
func (r Reference) Identifier() string {
	if r.Digest != "" {
		return r.Digest
	}
	return r.Tag
}

func (r Reference) String() string {
	s := r.Registry + "/" + r.Repository
	if r.Tag != "" {
		s += ":" + r.Tag
	}
	if r.Digest != "" {
		s += "@" + r.Digest
	}
	return s
}

// APIHost is the host[:port] the registry's HTTP API answers on.
func (r Reference) APIHost() string {
	if r.Registry == DockerHub {
		return dockerHubAPI
	}
	return r.Registry
}

// Scheme is "http" for registries on this machine (localhost, *.localhost,
// 127.0.0.0/8, ::1) and for *.local (mDNS names on the local link), as
// go-containerregistry's client allows without configuration; "https" for
// every other registry, private addresses included (go-containerregistry
// would also try http on RFC 1918 addresses). Credentials and tokens go
// over plain http to this machine only (authTransport).
func (r Reference) Scheme() string {
	if insecureHost(r.APIHost()) {
		return "http"
	}
	return "https"
}

// insecureHost reports whether host[:port] may be spoken to over plain
// http: this machine, or an mDNS name on the local link.
func insecureHost(hostport string) bool {
	return loopbackHost(hostport) || strings.HasSuffix(hostName(hostport), ".local")
}

// loopbackHost reports whether host[:port] is this machine: the only
// place credentials may be sent over plain http.
func loopbackHost(hostport string) bool {
	h := hostName(hostport)
	if h == "localhost" || strings.HasSuffix(h, ".localhost") {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

// internalHost reports whether host[:port] names this machine or an
// address inside its network: loopback, private (RFC 1918, fc00::/7),
// link-local (the cloud metadata service, 169.254.169.254) or unspecified.
// Only IP literals and localhost names are told; a DNS name that resolves
// inside is not.
func internalHost(hostport string) bool {
	if loopbackHost(hostport) {
		return true
	}
	// A zone ("fe80::1%eth0", the interface to dial on) makes no IP
	// literal to net.ParseIP, but the dialer takes it: it is cut off here.
	h, _, _ := strings.Cut(hostName(hostport), "%")
	ip := net.ParseIP(h)
	return ip != nil && (ip.IsLoopback() || ip.IsPrivate() || ip.IsLinkLocalUnicast() || ip.IsLinkLocalMulticast() || ip.IsUnspecified())
}

// hostName is host[:port]'s host, lower case, without IPv6 brackets.
func hostName(hostport string) string {
	h := hostport
	if sh, _, err := net.SplitHostPort(hostport); err == nil {
		h = sh
	}
	return strings.ToLower(strings.TrimSuffix(strings.TrimPrefix(h, "["), "]"))
}

// ParseReference reads an image reference as docker pull does: the first
// path component is the registry when it holds a "." or a ":", is
// "localhost", or has an upper-case letter (a repository never has one);
// otherwise the registry is Docker Hub, whose one-component names are in
// "library/". The repository is lower-case path components joined by "/"
// (each alphanumerics joined by ".", "_", "__" or dashes), at most 255
// bytes with the registry; a tag is a word character then up to 127 of
// [A-Za-z0-9_.-]; a digest is sha256 with 64 or sha512 with 128 lower-case
// hex digits. A reference that is only 64 hex digits is refused: docker
// reads it as an image ID.
func ParseReference(s string) (Reference, error) {
	if len(s) > MaxReferenceLen {
		return Reference{}, fmt.Errorf("image reference of %d bytes (at most %d)", len(s), MaxReferenceLen)
	}
	if s == "" {
		return Reference{}, errors.New("empty image reference")
	}
	var r Reference
	rest := s
	if i := strings.IndexByte(rest, '@'); i >= 0 {
		if err := checkDigest(rest[i+1:]); err != nil {
			return Reference{}, err
		}
		r.Digest, rest = rest[i+1:], rest[:i]
	}
	if i := strings.LastIndexByte(rest, ':'); i >= 0 && !strings.Contains(rest[i+1:], "/") {
		if !validTag(rest[i+1:]) {
			return Reference{}, fmt.Errorf("tag %q: want a letter, digit or _ then up to 127 of [A-Za-z0-9_.-]", clip(rest[i+1:]))
		}
		r.Tag, rest = rest[i+1:], rest[:i]
	}
	if r.Tag == "" && r.Digest == "" {
		r.Tag = defaultTag
	}
	if len(rest) == 64 && isHex(rest, false) {
		return Reference{}, fmt.Errorf("%q is 64 hex digits, an image ID, not a reference", clip(rest))
	}
	r.Registry, r.Repository = DockerHub, rest
	if i := strings.IndexByte(rest, '/'); i >= 0 {
		first := rest[:i]
		if strings.ContainsAny(first, ".:") || first == "localhost" || strings.ToLower(first) != first {
			r.Registry, r.Repository = first, rest[i+1:]
		}
	}
	if r.Registry != DockerHub && !validRegistry(r.Registry) {
		return Reference{}, fmt.Errorf("registry %q: want host[:port]", clip(r.Registry))
	}
	if !validRepository(r.Repository) {
		return Reference{}, fmt.Errorf("repository %q: want lower-case letters and digits in path components separated by /, joined within by ., _, __ or -", clip(r.Repository))
	}
	if r.Registry == dockerHubLegacy {
		r.Registry = DockerHub
	}
	if r.Registry == DockerHub && !strings.Contains(r.Repository, "/") {
		r.Repository = "library/" + r.Repository
	}
	// docker counts the name as it pulls it: "docker.io/library/ubuntu".
	if n := len(r.Registry) + 1 + len(r.Repository); n > maxNameLen {
		return Reference{}, fmt.Errorf("image name of %d bytes (at most %d)", n, maxNameLen)
	}
	return r, nil
}

func clip(s string) string {
	if len(s) > 64 {
		return s[:64] + "…"
	}
	return s
}

// CheckDigest accepts "sha256:" and 64, or "sha512:" and 128, lower-case
// hex digits: the digests the OCI image spec registers.
func CheckDigest(d string) error { return checkDigest(d) }

func checkDigest(d string) error {
	alg, hexd, _ := strings.Cut(d, ":")
	want := 0
	switch alg {
	case "sha256":
		want = 64
	case "sha512":
		want = 128
	}
	if want == 0 || len(hexd) != want || !isHex(hexd, true) {
		return fmt.Errorf("digest %q: want sha256:<64 hex digits> or sha512:<128 hex digits>", clip(d))
	}
	return nil
}

// isHex reports whether s is all hex digits (lower-case only when lower).
func isHex(s string, lower bool) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || !lower && 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}

func isLowerAlnum(c byte) bool { return 'a' <= c && c <= 'z' || '0' <= c && c <= '9' }

func isWord(c byte) bool { return isLowerAlnum(c) || 'A' <= c && c <= 'Z' || c == '_' }

func validTag(t string) bool {
	if t == "" || len(t) > maxTagLen || !isWord(t[0]) {
		return false
	}
	for i := 1; i < len(t); i++ {
		if !isWord(t[i]) && t[i] != '.' && t[i] != '-' {
			return false
		}
	}
	return true
}

// validRepository: components of lower-case alphanumeric runs, joined
// within a component by one ".", one "_", "__", or any number of "-".
func validRepository(repo string) bool {
	if repo == "" {
		return false
	}
	for _, comp := range strings.Split(repo, "/") {
		if !validPathComponent(comp) {
			return false
		}
	}
	return true
}

func validPathComponent(c string) bool {
	if c == "" || !isLowerAlnum(c[0]) || !isLowerAlnum(c[len(c)-1]) {
		return false
	}
	for i := 0; i < len(c); {
		if isLowerAlnum(c[i]) {
			i++
			continue
		}
		j := i
		for j < len(c) && !isLowerAlnum(c[j]) {
			j++
		}
		switch sep := c[i:j]; {
		case sep == "." || sep == "_" || sep == "__":
		case strings.Trim(sep, "-") == "":
		default:
			return false
		}
		i = j
	}
	return true
}

// validRegistry: a host (DNS labels of letters, digits and inner dashes
// joined by dots, an IPv4 address, or an IPv6 address in brackets) and an
// optional decimal port.
func validRegistry(reg string) bool {
	host, port := reg, ""
	if strings.HasPrefix(reg, "[") {
		end := strings.IndexByte(reg, ']')
		if end < 0 {
			return false
		}
		host, port = reg[:end+1], reg[end+1:]
		if ip := net.ParseIP(host[1 : len(host)-1]); ip == nil || ip.To4() != nil && !strings.Contains(host, ":") {
			return false
		}
		if port != "" {
			if port[0] != ':' {
				return false
			}
			port = port[1:]
			if port == "" {
				return false
			}
		}
	} else {
		if i := strings.IndexByte(reg, ':'); i >= 0 {
			host, port = reg[:i], reg[i+1:]
			if port == "" {
				return false
			}
		}
		if host == "" {
			return false
		}
		for _, label := range strings.Split(host, ".") {
			if label == "" || !isAlnum(label[0]) || !isAlnum(label[len(label)-1]) {
				return false
			}
			for i := 0; i < len(label); i++ {
				if !isAlnum(label[i]) && label[i] != '-' {
					return false
				}
			}
		}
	}
	for i := 0; i < len(port); i++ {
		if port[i] < '0' || port[i] > '9' {
			return false
		}
	}
	return true
}

func isAlnum(c byte) bool { return isLowerAlnum(c) || 'A' <= c && c <= 'Z' }
