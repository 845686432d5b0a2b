package imagesource

import (
	"fmt"
	"strings"
)

// platform is an image's OS, architecture and CPU variant.
type platform struct {
	OS           string `json:"os"`
	Architecture string `json:"architecture"`
	Variant      string `json:"variant,omitempty"`
}

func (p *platform) String() string {
	s := p.OS + "/" + p.Architecture
	if p.Variant != "" {
		s += "/" + p.Variant
	}
	return s
}

// parsePlatform reads OS/ARCH[/VARIANT].
func parsePlatform(s string) (*platform, error) {
	parts := strings.Split(s, "/")
	if len(parts) < 2 || len(parts) > 3 || parts[0] == "" || parts[1] == "" {
		return nil, fmt.Errorf("--platform %q: want OS/ARCH or OS/ARCH/VARIANT, e.g. linux/arm64", s)
	}
	p := &platform{OS: parts[0], Architecture: parts[1]}
	if len(parts) == 3 {
		p.Variant = parts[2]
	}
	return p, nil
}

func mustPlatform(s string) *platform {
	p, err := parsePlatform(s)
	if err != nil {
		panic(err)
	}
	return p
}

// normalized spells a platform as containerd's platforms.Normalize does:
// lower case, architecture aliases (aarch64, x86_64), and the variant an
// architecture implies when none is written (arm64 is v8, arm v7, amd64 v1).
func (p *platform) normalized() platform {
	n := platform{OS: strings.ToLower(p.OS), Architecture: strings.ToLower(p.Architecture), Variant: strings.ToLower(p.Variant)}
	switch n.Architecture {
	case "aarch64", "arm64":
		n.Architecture = "arm64"
		if n.Variant == "" || n.Variant == "8" {
			n.Variant = "v8"
		}
	case "x86_64", "x86-64", "amd64":
		n.Architecture = "amd64"
		if n.Variant == "" {
			n.Variant = "v1"
		}
	case "armhf":
		n.Architecture, n.Variant = "arm", "v7"
	case "armel":
		n.Architecture, n.Variant = "arm", "v6"
	case "arm":
		if n.Variant == "" {
			n.Variant = "v7"
		} else if !strings.HasPrefix(n.Variant, "v") {
			n.Variant = "v" + n.Variant
		}
	case "i386", "i686", "386":
		n.Architecture = "386"
	}
	return n
}

// matches reports whether an image of platform p serves a request for want:
// the same OS and architecture, and the same variant once both are
// normalized, or any variant when want names none (containerd's rule, so
// arm64 and arm64/v8 are one platform).
func (p *platform) matches(want *platform) bool {
	a, b := p.normalized(), want.normalized()
	if a.OS != b.OS || a.Architecture != b.Architecture {
		return false
	}
	return want.Variant == "" || a.Variant == b.Variant
}
