// Package remote runs fastpath on other machines through the user's own
// transport (ssh, docker exec, kubectl exec, ...): it sends its binary over
// the transport's standard input when the target lacks it, runs doctor
// there and gathers the JSON, many targets at a time.
package remote

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
)

// Placeholder is what a template's {} stands for: the target.
const Placeholder = "{}"

// Template is a transport command with {} for the target, split into words.
type Template struct {
	words []string
	// oneString: the transport hands its arguments to a remote shell joined
	// by spaces (ssh does), so the command must travel as one quoted string.
	oneString bool
}

// ParseTemplate splits s the way a POSIX shell splits a simple command
// (quotes and backslashes, no expansions) and checks it names a target.
func ParseTemplate(s string) (*Template, error) {
	words, err := Split(s)
	if err != nil {
		return nil, err
	}
	if len(words) == 0 {
		return nil, errors.New("empty transport template")
	}
	n := 0
	for _, w := range words {
		n += strings.Count(w, Placeholder)
	}
	if n == 0 {
		return nil, fmt.Errorf("transport template %q has no %s for the target", s, Placeholder)
	}
	return &Template{words: words, oneString: filepath.Base(words[0]) == "ssh"}, nil
}

// Command is the argv that runs the POSIX sh script on target. ssh joins its
// arguments into one string for the remote login shell, so for ssh the
// script goes as one quoted `sh -c '...'` string; exec-style transports
// (docker/podman/kubectl/pct exec, env, sudo) run argv directly and get
// sh, -c and the script as three words.
func (t *Template) Command(target, script string) []string {
	argv := make([]string, 0, len(t.words)+3)
	for _, w := range t.words {
		argv = append(argv, strings.ReplaceAll(w, Placeholder, target))
	}
	if t.oneString {
		return append(argv, "sh -c "+Quote(script))
	}
	return append(argv, "sh", "-c", script)
}

// String is the template as given words, for messages.
func (t *Template) String() string {
	q := make([]string, len(t.words))
	for i, w := range t.words {
		q[i] = Quote(w)
	}
	return strings.Join(q, " ")
}

// Split splits s into words like a POSIX shell: blanks separate words,
// '...' is literal, "..." keeps blanks and honours \ before $ ` " \ and
// newline, and a bare \ quotes the next character. Since no shell runs the
// template, unquoted operators and expansions ($ ` | ; & < > ( )) are
// refused rather than silently passed as text.
func Split(s string) ([]string, error) {
	var (
		words []string
		cur   strings.Builder
		in    bool // inside a word (an empty '' counts)
	)
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch c {
		case ' ', '\t', '\n':
			if in {
				words = append(words, cur.String())
				cur.Reset()
				in = false
			}
		case '\'':
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				return nil, fmt.Errorf("unterminated ' in %q", s)
			}
			cur.WriteString(s[i+1 : i+1+j])
			i += j + 1
			in = true
		case '"':
			i++
			for ; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' && i+1 < len(s) && strings.IndexByte("$`\"\\\n", s[i+1]) >= 0 {
					i++
					if s[i] == '\n' {
						continue
					}
				} else if s[i] == '$' || s[i] == '`' {
					return nil, fmt.Errorf("%q: expansions (%c) are not supported; fastpath runs the transport without a shell", s, s[i])
				}
				cur.WriteByte(s[i])
			}
			if i >= len(s) {
				return nil, fmt.Errorf("unterminated \" in %q", s)
			}
			in = true
		case '\\':
			if i+1 >= len(s) {
				return nil, fmt.Errorf("trailing \\ in %q", s)
			}
			i++
			if s[i] != '\n' {
				cur.WriteByte(s[i])
				in = true
			}
		case '$', '`', '|', ';', '&', '<', '>', '(', ')':
			return nil, fmt.Errorf("%q: shell syntax %c is not supported; fastpath runs the transport without a shell (quote it, or wrap the transport in sh -c '...')", s, c)
		default:
			cur.WriteByte(c)
			in = true
		}
	}
	if in {
		words = append(words, cur.String())
	}
	return words, nil
}

// Quote quotes s for a POSIX shell; words made only of safe characters stay
// as they are.
func Quote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789@%+=:,./_-") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// CheckTarget refuses targets a transport could read as options or that
// would change the command's shape.
func CheckTarget(t string) error {
	if t == "" {
		return errors.New("empty target")
	}
	if strings.HasPrefix(t, "-") {
		return fmt.Errorf("target %q starts with -: a transport would read it as an option", t)
	}
	for _, r := range t {
		if r <= ' ' || r == 0x7f {
			return fmt.Errorf("target %q holds a blank or control character", t)
		}
	}
	return nil
}
