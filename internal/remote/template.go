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

	"github.com/fastpath-dev/fastpath/internal/remedy"
	"mvdan.cc/sh/v3/syntax"
)

// Placeholder is what a template's {} stands for: the target.
const Placeholder = "{}"

// Template is a transport command with {} for the target, split into words.
type Template struct {
	words []string
	// oneString: the transport hands its arguments to a remote shell joined
	// by spaces (ssh does), so the command must travel as one quoted string.
	oneString bool
	// shellWord[i]: word i reaches a shell as text (a remote command word
	// after ssh's destination, or the script after a local shell's -c), so
	// the target substituted into it is shell-quoted.
	shellWord []bool
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
	t := &Template{words: words, oneString: filepath.Base(words[0]) == "ssh", shellWord: make([]bool, len(words))}
	switch prog := filepath.Base(words[0]); {
	case t.oneString:
		// Every word after the destination is joined into the remote
		// shell's command line.
		if d := sshDestination(words); d > 0 {
			for i := d + 1; i < len(words); i++ {
				t.shellWord[i] = true
			}
		}
	case shells[prog]:
		// sh -c SCRIPT [NAME ARGS...]: the script is shell text; its
		// positional arguments are not.
		for i := 1; i+1 < len(words); i++ {
			if words[i] == "-c" || (strings.HasPrefix(words[i], "-") && !strings.HasPrefix(words[i], "--") && strings.HasSuffix(words[i], "c")) {
				t.shellWord[i+1] = true
				break
			}
		}
	}
	return t, nil
}

// shells are the programs whose -c argument is shell text.
var shells = map[string]bool{"sh": true, "bash": true, "dash": true, "ash": true, "ksh": true, "mksh": true, "zsh": true}

// sshArgOptions are OpenSSH's single-letter options that take an argument
// (ssh(1) SYNOPSIS): the word after them is not the destination.
const sshArgOptions = "BbcDEeFIiJLlmOoPpQRSWw"

// sshDestination is the index of ssh's destination word (the first word
// that is neither an option nor an option's argument), or -1.
func sshDestination(words []string) int {
	for i := 1; i < len(words); i++ {
		w := words[i]
		if w == "--" {
			if i+1 < len(words) {
				return i + 1
			}
			return -1
		}
		if !strings.HasPrefix(w, "-") || w == "-" {
			return i
		}
		// A cluster of flags: -tt, -4v, or -p2222 / -oX=Y with the argument attached.
		for j := 1; j < len(w); j++ {
			if strings.IndexByte(sshArgOptions, w[j]) >= 0 {
				if j == len(w)-1 {
					i++ // the argument is the next word
				}
				break
			}
		}
	}
	return -1
}

// Command is the argv that runs the POSIX sh script on target. ssh joins its
// arguments into one string for the remote login shell, so for ssh the
// script goes as one quoted `sh -c '...'` string; exec-style transports
// (docker/podman/kubectl/pct exec, env, sudo) run argv directly and get
// sh, -c and the script as three words.
func (t *Template) Command(target, script string) []string {
	argv := make([]string, 0, len(t.words)+3)
	for i, w := range t.words {
		sub := target
		if t.shellWord[i] {
			sub = Quote(target)
		}
		argv = append(argv, strings.ReplaceAll(w, Placeholder, sub))
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
// newline, and a bare \ quotes the next character. mvdan.cc/sh/v3/syntax
// parses it (POSIX mode), so quoting follows a real shell's grammar; since
// no shell runs the template, anything beyond one simple command of literal
// words (expansions, operators, redirections, assignments, comments) is
// refused rather than silently passed as text.
func Split(s string) ([]string, error) {
	if n := len(s) - len(strings.TrimRight(s, `\`)); n%2 == 1 {
		return nil, fmt.Errorf("trailing \\ in %q", s)
	}
	unsupported := func(what string) error {
		return fmt.Errorf("%q: shell syntax %s is not supported; fastpath runs the transport without a shell (quote it, or wrap the transport in sh -c '...')", s, what)
	}
	f, err := syntax.NewParser(syntax.Variant(syntax.LangPOSIX), syntax.KeepComments(true)).Parse(strings.NewReader(s), "")
	if err != nil {
		return nil, fmt.Errorf("transport template %q: %w", s, err)
	}
	if len(f.Last) > 0 {
		return nil, unsupported("# (a comment)")
	}
	switch len(f.Stmts) {
	case 0:
		return nil, nil
	case 1:
	default:
		return nil, unsupported("; or a newline (a second command)")
	}
	st := f.Stmts[0]
	switch {
	case len(st.Comments) > 0:
		return nil, unsupported("# (a comment)")
	case st.Background:
		return nil, unsupported("&")
	case st.Negated:
		return nil, unsupported("!")
	case st.Semicolon.IsValid():
		return nil, unsupported(";")
	case len(st.Redirs) > 0:
		return nil, unsupported(st.Redirs[0].Op.String())
	}
	call, ok := st.Cmd.(*syntax.CallExpr)
	if !ok {
		if b, ok := st.Cmd.(*syntax.BinaryCmd); ok {
			return nil, unsupported(b.Op.String())
		}
		return nil, unsupported(fmt.Sprintf("%T", st.Cmd)[len("*syntax."):])
	}
	if len(call.Assigns) > 0 {
		return nil, unsupported("NAME=value before the command (use env NAME=value ...)")
	}
	words := make([]string, 0, len(call.Args))
	for _, w := range call.Args {
		var b strings.Builder
		for _, part := range w.Parts {
			if err := literal(&b, part, unsupported, s); err != nil {
				return nil, err
			}
		}
		words = append(words, b.String())
	}
	return words, nil
}

// literal writes the text a shell's quote removal leaves of one part of a
// word, or refuses a part that would expand.
func literal(b *strings.Builder, part syntax.WordPart, unsupported func(string) error, s string) error {
	switch p := part.(type) {
	case *syntax.Lit:
		return unescape(b, p.Value, "", unsupported)
	case *syntax.SglQuoted:
		if p.Dollar {
			return unsupported("$'...'")
		}
		b.WriteString(p.Value)
		return nil
	case *syntax.DblQuoted:
		if p.Dollar {
			return unsupported(`$"..."`)
		}
		for _, in := range p.Parts {
			lit, ok := in.(*syntax.Lit)
			if !ok {
				return fmt.Errorf("%q: expansions ($ or `) are not supported; fastpath runs the transport without a shell", s)
			}
			if err := unescape(b, lit.Value, "$`\"\\\n", func(string) error {
				return fmt.Errorf("%q: expansions ($ or `) are not supported; fastpath runs the transport without a shell", s)
			}); err != nil {
				return err
			}
		}
		return nil
	case *syntax.ParamExp, *syntax.ArithmExp:
		return unsupported("$")
	case *syntax.CmdSubst:
		return unsupported("$( or `")
	default:
		return unsupported(fmt.Sprintf("%T", part)[len("*syntax."):])
	}
}

// unescape writes lit's text with its backslashes removed: before any
// character when escapable is "" (outside quotes), else only before the
// characters in escapable (inside "..."), and a backslash-newline is
// removed whole. An unescaped $ or ` would expand in a shell: refused.
func unescape(b *strings.Builder, lit, escapable string, unsupported func(string) error) error {
	for i := 0; i < len(lit); i++ {
		c := lit[i]
		switch {
		case c == '\\' && i+1 < len(lit) && (escapable == "" || strings.IndexByte(escapable, lit[i+1]) >= 0):
			i++
			if lit[i] != '\n' {
				b.WriteByte(lit[i])
			}
		case c == '$' || c == '`':
			return unsupported(string(c))
		default:
			b.WriteByte(c)
		}
	}
	return nil
}

// Quote quotes s for a POSIX shell; words made only of safe characters stay
// as they are. It is remedy.Quote: one shell quoter.
func Quote(s string) string { return remedy.Quote(s) }

// MaxTargetLen caps a target's length (a DNS name's limit).
const MaxTargetLen = 253

// CheckTarget accepts only targets of this grammar (docs/fleet.md):
//
//	target = [ user "@" ] name
//	user   = word                       (a login: root, ubuntu, svc_ml)
//	name   = word *( "/" word )         (host, IP, container, pod/NAME, NS/POD, numeric id)
//	       | "/" word *( "/" word )     (an absolute path, for chroot- or env-style local transports)
//	word   = ( ALPHA / DIGIT / "_" / ":" ) *( ALPHA / DIGIT / "_" / "." / ":" / "-" )
//
// at most MaxTargetLen bytes. Every character it allows is one a POSIX
// shell reads literally, so a target is the same text whether or not a
// shell sees it, and none starts with "-", so no transport reads it as an
// option. A target list is untrusted input: names with blanks, quotes,
// $, `, ;, |, &, globs, ~, "..", or non-ASCII are refused.
func CheckTarget(t string) error {
	if t == "" {
		return errors.New("empty target")
	}
	if len(t) > MaxTargetLen {
		return fmt.Errorf("target %.40q... is %d bytes, over %d", t, len(t), MaxTargetLen)
	}
	if strings.HasPrefix(t, "-") {
		return fmt.Errorf("target %q starts with -: a transport would read it as an option", t)
	}
	bad := func(why string) error {
		return fmt.Errorf("target %q: %s; a target is [user@]host, a container or pod name (pod/NAME, NAMESPACE/POD), a numeric id or an absolute path, of letters, digits and _ . : - / (see docs/fleet.md)", t, why)
	}
	name := t
	if user, rest, ok := strings.Cut(t, "@"); ok {
		if !isWord(user) {
			return bad("the user before @ is not a plain name")
		}
		name = rest
	}
	name = strings.TrimPrefix(name, "/")
	for _, w := range strings.Split(name, "/") {
		if !isWord(w) {
			for _, r := range t {
				if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("_.:-/@", r)) {
					return bad(fmt.Sprintf("it holds %q", r))
				}
			}
			return bad("an empty part, a part starting with . or -, or a second @")
		}
	}
	return nil
}

// isWord: the grammar's word.
func isWord(w string) bool {
	if w == "" {
		return false
	}
	for i := 0; i < len(w); i++ {
		c := w[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '_':
		case c == ':', i > 0 && (c == '.' || c == '-'):
		default:
			return false
		}
	}
	return true
}
