package registry

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
)

func TestParseChallenges(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []challenge
	}{
		{`Bearer realm="https://auth.docker.io/token",service="registry.docker.io",scope="repository:library/ubuntu:pull"`,
			[]challenge{{"bearer", map[string]string{"realm": "https://auth.docker.io/token", "service": "registry.docker.io", "scope": "repository:library/ubuntu:pull"}}}},
		{`Basic realm="Registry Realm"`, []challenge{{"basic", map[string]string{"realm": "Registry Realm"}}}},
		{`bearer Realm=https://ghcr.io/token, Service = ghcr.io`, []challenge{{"bearer", map[string]string{"realm": "https://ghcr.io/token", "service": "ghcr.io"}}}},
		{`Basic realm="a", Bearer realm="b",service="c"`, []challenge{{"basic", map[string]string{"realm": "a"}}, {"bearer", map[string]string{"realm": "b", "service": "c"}}}},
		{`Bearer realm="with \"quotes\" and, commas"`, []challenge{{"bearer", map[string]string{"realm": `with "quotes" and, commas`}}}},
		{`Bearer realm="unterminated`, []challenge{{"bearer", map[string]string{}}}},
		{``, nil},
		{`   ,,, `, nil},
	} {
		if got := parseChallenges(tc.in); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s:\n got %v\nwant %v", tc.in, got, tc.want)
		}
	}
}

// FuzzParseChallenges: never a panic or a hang, no more challenges than
// words, and a header written from parsed parameters parses back to them.
func FuzzParseChallenges(f *testing.F) {
	f.Add(`Bearer realm="https://auth.docker.io/token",service="registry.docker.io",scope="repository:library/ubuntu:pull"`)
	f.Add(`Basic realm="x", Bearer realm=y`)
	f.Fuzz(func(t *testing.T, h string) {
		chs := parseChallenges(h)
		if len(chs) > len(h)/2+1 {
			t.Fatalf("%d challenges from %d bytes", len(chs), len(h))
		}
		var parts []string
		for _, ch := range chs {
			if ch.scheme == "" {
				t.Fatalf("empty scheme from %q", h)
			}
			var ps []string
			for k, v := range ch.params {
				ps = append(ps, fmt.Sprintf(`%s="%s"`, k, strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(v)))
			}
			parts = append(parts, strings.TrimSpace(ch.scheme+" "+strings.Join(ps, ", ")))
		}
		again := parseChallenges(strings.Join(parts, ", "))
		if len(chs) > 0 && !reflect.DeepEqual(again, chs) {
			t.Errorf("%q parsed to %v; written back as %q it parses to %v", h, chs, strings.Join(parts, ", "), again)
		}
	})
}

// Challenges as real registries send them, and the token request each one
// leads to.
func TestRealRegistryChallenges(t *testing.T) {
	for _, tc := range []struct {
		source, header string
		scheme         string
		params         map[string]string
	}{
		// The example of Docker's token authentication spec
		// (https://distribution.github.io/distribution/spec/auth/token/).
		{"docker token spec", `Bearer realm="https://auth.docker.io/token",service="registry.docker.io",scope="repository:samalba/my-app:pull,push"`,
			"bearer", map[string]string{"realm": "https://auth.docker.io/token", "service": "registry.docker.io", "scope": "repository:samalba/my-app:pull,push"}},
		// NVIDIA NGC (GET https://nvcr.io/v2/<repo>/manifests/<tag>,
		// anonymous): no service parameter.
		{"nvcr.io", `Bearer realm="https://nvcr.io/proxy_auth",scope="repository:nvidia/pytorch:pull"`,
			"bearer", map[string]string{"realm": "https://nvcr.io/proxy_auth", "scope": "repository:nvidia/pytorch:pull"}},
		// Amazon ECR answers with Basic (the password is a token from
		// `aws ecr get-login-password`).
		{"ECR", `Basic realm="https://123456789012.dkr.ecr.us-east-1.amazonaws.com/",service="ecr.amazonaws.com"`,
			"basic", map[string]string{"realm": "https://123456789012.dkr.ecr.us-east-1.amazonaws.com/", "service": "ecr.amazonaws.com"}},
	} {
		chs := parseChallenges(tc.header)
		if len(chs) != 1 || chs[0].scheme != tc.scheme || !reflect.DeepEqual(chs[0].params, tc.params) {
			t.Errorf("%s: %v", tc.source, chs)
		}
	}
}
