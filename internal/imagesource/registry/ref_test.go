package registry

import (
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
)

// The docker reference grammar (distribution's reference package, as
// documented in its grammar comment), written out here as regular
// expressions: an oracle independent of ParseReference's hand-written
// checks, used to tell a deliberate divergence from go-containerregistry
// (ggcr) from a bug.
var (
	pathComponent = `[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*`
	dockerPath    = regexp.MustCompile(`^` + pathComponent + `(?:/` + pathComponent + `)*$`)
	domainLabel   = `(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])`
	dockerDomain  = regexp.MustCompile(`^(?:` + domainLabel + `(?:\.` + domainLabel + `)*|\[[0-9a-fA-F:.]+\])(?::[0-9]+)?$`)
	dockerTag     = regexp.MustCompile(`^[\w][\w.-]{0,127}$`)
	hex64         = regexp.MustCompile(`^[0-9a-fA-F]{64}$`)
)

func TestParseReference(t *testing.T) {
	h := strings.Repeat("a", 64)
	for _, tc := range []struct {
		in                       string
		registry, repo, tag, dig string
		host, scheme             string
	}{
		{in: "ubuntu", registry: "docker.io", repo: "library/ubuntu", tag: "latest", host: "registry-1.docker.io", scheme: "https"},
		{in: "pytorch/pytorch:2.5.1-cuda12.4-cudnn9-devel", registry: "docker.io", repo: "pytorch/pytorch", tag: "2.5.1-cuda12.4-cudnn9-devel", host: "registry-1.docker.io", scheme: "https"},
		{in: "index.docker.io/ubuntu:24.04", registry: "docker.io", repo: "library/ubuntu", tag: "24.04", host: "registry-1.docker.io", scheme: "https"},
		{in: "docker.io/library/ubuntu@sha256:" + h, registry: "docker.io", repo: "library/ubuntu", dig: "sha256:" + h, host: "registry-1.docker.io", scheme: "https"},
		{in: "nvcr.io/nvidia/pytorch:25.01-py3", registry: "nvcr.io", repo: "nvidia/pytorch", tag: "25.01-py3", host: "nvcr.io", scheme: "https"},
		{in: "ghcr.io/org/img:v1@sha512:" + h + h, registry: "ghcr.io", repo: "org/img", tag: "v1", dig: "sha512:" + h + h, host: "ghcr.io", scheme: "https"},
		{in: "localhost:5000/a/b", registry: "localhost:5000", repo: "a/b", tag: "latest", host: "localhost:5000", scheme: "http"},
		{in: "localhost/a", registry: "localhost", repo: "a", tag: "latest", host: "localhost", scheme: "http"},
		{in: "127.0.0.1:39999/x/y:v1", registry: "127.0.0.1:39999", repo: "x/y", tag: "v1", host: "127.0.0.1:39999", scheme: "http"},
		{in: "[::1]:5000/x", registry: "[::1]:5000", repo: "x", tag: "latest", host: "[::1]:5000", scheme: "http"},
		{in: "reg.localhost:80/x", registry: "reg.localhost:80", repo: "x", tag: "latest", host: "reg.localhost:80", scheme: "http"},
		{in: "nas.local/x", registry: "nas.local", repo: "x", tag: "latest", host: "nas.local", scheme: "http"},
		{in: "10.0.0.5:5000/x", registry: "10.0.0.5:5000", repo: "x", tag: "latest", host: "10.0.0.5:5000", scheme: "https"},
		{in: "Registry/x", registry: "Registry", repo: "x", tag: "latest", host: "Registry", scheme: "https"},
		{in: "a__b/c-----d/e.f_g", registry: "docker.io", repo: "a__b/c-----d/e.f_g", tag: "latest", host: "registry-1.docker.io", scheme: "https"},
	} {
		r, err := ParseReference(tc.in)
		if err != nil {
			t.Errorf("%s: %v", tc.in, err)
			continue
		}
		if r.Registry != tc.registry || r.Repository != tc.repo || r.Tag != tc.tag || r.Digest != tc.dig || r.APIHost() != tc.host || r.Scheme() != tc.scheme {
			t.Errorf("%s: %+v host %s %s; want %s %s %s %s host %s %s", tc.in, r, r.APIHost(), r.Scheme(), tc.registry, tc.repo, tc.tag, tc.dig, tc.host, tc.scheme)
		}
	}
	for _, in := range []string{
		"", "UPPER", "ubuntu:", "ubuntu@", "ubuntu@sha256:" + h[:63], "ubuntu@sha256:" + strings.ToUpper(h),
		"ubuntu@md5:" + h[:32], "ubuntu@sha512:" + h, "a..b", "a/", "/a", "-a", "a-", "a___b", "a//b", "ubuntu:-tag",
		"ubuntu:.tag", "ubuntu:" + strings.Repeat("t", 129), h, "host:port/x", "ho_st.io/x", "[::1/x", "[1.2.3.4]/x",
		"a.io/" + strings.Repeat("x", 251), strings.Repeat("x", MaxReferenceLen+1), "ubuntu@sha256:" + h + "@sha256:" + h,
		"ubuntu:tag:tag", "a b", "ubuntu\n",
	} {
		if r, err := ParseReference(in); err == nil {
			t.Errorf("%q accepted as %+v", clip(in), r)
		}
	}
}

// compareWithGGCR parses s with ParseReference and with ggcr's
// name.ParseReference (the reference parser of the library fastpath used
// before) and fails unless both agree (accept or refuse; on acceptance the
// same registry, repository and identifier), or the input is in one of the
// deliberate divergences, each told by the docker grammar above:
//
//   - we accept sha512 digests (the OCI image spec registers them; ggcr
//     takes sha256 only);
//   - we read an upper-case first component as a registry, as docker
//     does (ggcr reads it as a repository and refuses the upper case);
//   - we refuse what docker's grammar refuses and ggcr's character sets
//     let through: separators at the ends of or doubled in a path
//     component ("a..b", "a/"), a tag starting with "." or "-", a registry
//     that is not host[:port], a name over 255 bytes with its registry, a
//     reference that is only 64 hex digits (docker reads it as an image
//     ID), and anything over MaxReferenceLen.
//
// ggcr names Docker Hub "index.docker.io" where docker says "docker.io".
func compareWithGGCR(t *testing.T, s string) {
	ours, oerr := ParseReference(s)
	g, gerr := name.ParseReference(s)
	switch {
	case oerr != nil && gerr != nil:
	case oerr == nil && gerr == nil:
		reg := g.Context().RegistryStr()
		if reg == "index.docker.io" {
			reg = DockerHub
		}
		if ours.Registry != reg || ours.Repository != g.Context().RepositoryStr() || ours.Identifier() != g.Identifier() {
			t.Errorf("%q: ours %s %s %s, ggcr %s %s %s", s, ours.Registry, ours.Repository, ours.Identifier(), reg, g.Context().RepositoryStr(), g.Identifier())
		}
	case oerr == nil:
		first, _, _ := strings.Cut(s, "/")
		switch {
		case strings.HasPrefix(ours.Digest, "sha512:"):
		case ours.Registry == first && !strings.ContainsAny(first, ".:") && first != "localhost" && strings.ToLower(first) != first:
		default:
			t.Errorf("%q: accepted as %+v; ggcr refuses it: %v", s, ours, gerr)
		}
	default:
		reg, repo := g.Context().RegistryStr(), g.Context().RepositoryStr()
		if reg == "index.docker.io" {
			reg = DockerHub
		}
		base, _, _ := strings.Cut(s, "@")
		if i := strings.LastIndexByte(base, ':'); i >= 0 && !strings.Contains(base[i+1:], "/") {
			if !dockerTag.MatchString(base[i+1:]) {
				return // docker's tag grammar refuses it
			}
			base = base[:i]
		}
		explicit := strings.Contains(base, "/") && (reg != DockerHub || strings.HasPrefix(base, "docker.io/") || strings.HasPrefix(base, "index.docker.io/"))
		switch {
		case len(s) > MaxReferenceLen:
		case hex64.MatchString(base):
		case explicit && !dockerDomain.MatchString(strings.SplitN(base, "/", 2)[0]):
		case !dockerPath.MatchString(repo):
		case len(reg)+1+len(repo) > maxNameLen:
		default:
			t.Errorf("%q: refused (%v); ggcr accepts it as %s/%s %s", s, oerr, reg, repo, g.Identifier())
		}
	}
}

func TestParseReferenceAgreesWithGGCR(t *testing.T) {
	h := strings.Repeat("0f", 32)
	for _, s := range []string{
		"ubuntu", "ubuntu:24.04", "library/ubuntu", "docker.io/ubuntu", "index.docker.io/library/ubuntu:latest",
		"ghcr.io/a/b/c:v1", "gcr.io/x@sha256:" + h, "localhost:5000/x:y@sha256:" + h, "a.b:1/c", "[::1]:5000/x",
		"x@sha512:" + h + h, "Foo/bar", "a..b", "a/", "a:-x", "a.io:/x", h, "a_b.io/x", "ubuntu:" + strings.Repeat("a", 128),
		"docker.io/" + strings.Repeat("a", 240), "a" + strings.Repeat("/b", 200),
	} {
		compareWithGGCR(t, s)
	}
}

// FuzzParseReference: never a panic, a bounded error, and ggcr's answer or
// a documented divergence (compareWithGGCR). Seeds in testdata/fuzz.
func FuzzParseReference(f *testing.F) {
	f.Add("ubuntu:24.04")
	f.Add("ghcr.io/org/img:v1@sha256:" + strings.Repeat("ab", 32))
	f.Fuzz(func(t *testing.T, s string) {
		r, err := ParseReference(s)
		if err != nil && len(err.Error()) > 512 {
			t.Errorf("error of %d bytes", len(err.Error()))
		}
		if err == nil {
			// What was accepted parses again to itself.
			again, err := ParseReference(r.String())
			if err != nil || again != r {
				t.Errorf("%q: %+v prints as %q, which parses to %+v, %v", s, r, r.String(), again, err)
			}
		}
		compareWithGGCR(t, s)
	})
}
