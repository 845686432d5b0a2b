// Package envvars keeps the environment variables that matter to GPU builds
// and runs, with secrets redacted.
package envvars

import (
	"sort"
	"strings"
	"sync"

	"github.com/fastpath-dev/fastpath/internal/facts"
	"github.com/fastpath-dev/fastpath/internal/kb"
	"github.com/fastpath-dev/fastpath/internal/lazyregexp"
	"github.com/fastpath-dev/fastpath/internal/source"
)

// Redacted is the value stored in place of a secret.
const Redacted = "<redacted>"

// kept are the variables read by CUDA, torch's extension builder, pip, uv,
// Python and the Hugging Face libraries when they find compilers, pick GPUs
// and build or load kernels; keptPrefixes the families kept whole (NCCL's,
// torch's, pip's, uv's, the kernel packages' build knobs). Both are the
// KB's data/envvars.json, which says where each is read.
// Built on first use, not in an init: every start of fastpath paid for
// them, whatever the command (issue 17).
var kept = sync.OnceValue(func() map[string]bool {
	m := map[string]bool{}
	for _, n := range kb.EnvVars().Names() {
		m[n] = true
	}
	return m
})

func keptPrefixes() []string { return kb.EnvVars().Prefixes.Names }

// secretWords in a name mark its value as a secret.
var secretWords = []string{"TOKEN", "KEY", "SECRET", "PASSWORD", "PASSWD", "AUTH", "CREDENTIAL"}

// urlUserinfo matches the userinfo of a URL (https://user:pass@host,
// https://token@host): group 1 is scheme://, 2 the user, 3 ":password".
var urlUserinfo = lazyregexp.New(`([A-Za-z][A-Za-z0-9+.-]*://)([^/@\s:]*)(:[^/@\s]*)?@`)

// Collect returns the variables of env that matter, sorted by name.
func Collect(env source.Env) []facts.EnvVar {
	out := []facts.EnvVar{}
	for name, value := range env {
		if !Matters(name) {
			continue
		}
		out = append(out, Redact(name, value))
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Matters reports whether a variable is one fastpath keeps.
func Matters(name string) bool {
	if kept()[name] {
		return true
	}
	for _, p := range keptPrefixes() {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

// Redact returns the variable with any secret removed: a name that says it
// holds one loses its value; credentials inside URLs (PIP_INDEX_URL=
// https://user:pass@host/simple) lose the password, or the user where it
// stands alone (a token).
func Redact(name, value string) facts.EnvVar {
	upper := strings.ToUpper(name)
	for _, w := range secretWords {
		if strings.Contains(upper, w) {
			return facts.EnvVar{Name: name, Value: Redacted, Redacted: true}
		}
	}
	redacted := false
	// Every match holds "://" and "@": a value without them (most) skips
	// the regexp, and its compilation (issue 17).
	if !strings.Contains(value, "://") || !strings.Contains(value, "@") {
		return facts.EnvVar{Name: name, Value: value}
	}
	value = urlUserinfo.ReplaceAllStringFunc(value, func(m string) string {
		g := urlUserinfo.FindStringSubmatch(m)
		redacted = true
		if g[3] == "" {
			return g[1] + Redacted + "@"
		}
		return g[1] + g[2] + ":" + Redacted + "@"
	})
	return facts.EnvVar{Name: name, Value: value, Redacted: redacted}
}
