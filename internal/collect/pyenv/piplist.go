package pyenv

import (
	"bytes"
	"fmt"
	"path"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/fastpath-dev/fastpath/internal/facts"
	"github.com/fastpath-dev/fastpath/internal/lazyregexp"
	"github.com/fastpath-dev/fastpath/internal/pep440"
)

// pipSkip is pip's stdlib_pkgs: names pip list never shows.
var pipSkip = map[string]bool{"python": true, "wsgiref": true, "argparse": true}

// validName is the PEP 508 project name pattern pip checks canonical names
// against (it drops leftovers such as "~atplotlib.dist-info").
var validName = lazyregexp.New(`(?i)^([A-Z0-9]|[A-Z0-9][A-Z0-9._-]*[A-Z0-9])$`)

// splitext is os.path.splitext: leading dots of the name are not an extension.
func splitext(name string) (string, string) {
	i := strings.LastIndexByte(name, '.')
	if i <= 0 || strings.Trim(name[:i], ".") == "" {
		return name, ""
	}
	return name[:i], name[i:]
}

// pipCanonical is pip's Distribution.canonical_name: from the metadata
// folder's name when it is NAME-VERSION.dist-info/.egg-info, else from Name.
func pipCanonical(d facts.Distribution) string {
	stem, ext := splitext(path.Base(d.MetadataDir))
	if ext == ".dist-info" || ext == ".egg-info" {
		name, _, _ := strings.Cut(stem, "-")
		return canonicalize(name)
	}
	return canonicalize(d.Name)
}

// Listed returns the distributions pip list would show, in its order.
func Listed(env *facts.PythonEnv) []facts.Distribution {
	if env == nil {
		return nil
	}
	type keyed struct {
		key string
		d   facts.Distribution
	}
	var ks []keyed
	for _, d := range env.Distributions {
		if d.Shadowed {
			continue
		}
		k := pipCanonical(d)
		if !validName.MatchString(k) || pipSkip[k] {
			continue
		}
		ks = append(ks, keyed{k, d})
	}
	// pip (21.2 and later) sorts by canonical name; sorted() is stable.
	sort.SliceStable(ks, func(i, j int) bool { return ks[i].key < ks[j].key })
	out := make([]facts.Distribution, len(ks))
	for i, k := range ks {
		out[i] = k.d
	}
	return out
}

// PipListJSON renders env's distributions exactly as
// `python -m pip list --format=json` prints them (same selection, order,
// normalised versions, editable_project_location, and json.dumps spacing).
func PipListJSON(env *facts.PythonEnv) []byte {
	var b bytes.Buffer
	b.WriteByte('[')
	py2 := env != nil && strings.HasPrefix(env.Version, "2.")
	for i, d := range Listed(env) {
		if i > 0 {
			b.WriteString(", ")
		}
		if py2 {
			// Python 2's dict order: pip 19.2.3 on Python 2.7.18 prints
			// [{"version": "19.2.3", "name": "pip"}, ...] (checked with that pip).
			b.WriteString(`{"version": `)
			pyJSONString(&b, normalizeVersion(d.Version))
			b.WriteString(`, "name": `)
			pyJSONString(&b, d.Name)
		} else {
			b.WriteString(`{"name": `)
			pyJSONString(&b, d.Name)
			b.WriteString(`, "version": `)
			pyJSONString(&b, normalizeVersion(d.Version))
		}
		if d.Editable && d.EditableLocation != "" {
			b.WriteString(`, "editable_project_location": `)
			pyJSONString(&b, d.EditableLocation)
		}
		b.WriteByte('}')
	}
	b.WriteByte(']')
	return b.Bytes()
}

// normalizeVersion is str(packaging.version.parse(v)): packaging ignores
// surrounding whitespace; a version it cannot parse prints verbatim.
func normalizeVersion(v string) string {
	t := strings.TrimSpace(v)
	if n := pep440.Normalize(t); n != t {
		return n
	}
	if _, err := pep440.Parse(t); err == nil {
		return t
	}
	return v
}

// pyJSONString writes s as Python's json.dumps (ensure_ascii) does.
func pyJSONString(b *bytes.Buffer, s string) {
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		case '\b':
			b.WriteString(`\b`)
		case '\f':
			b.WriteString(`\f`)
		default:
			switch {
			case r >= 0x20 && r < 0x7f:
				b.WriteRune(r)
			case r > 0xffff:
				r -= 0x10000
				fmt.Fprintf(b, `\u%04x\u%04x`, 0xd800+(r>>10), 0xdc00+(r&0x3ff))
			case r == utf8.RuneError:
				b.WriteString(`\ufffd`)
			default:
				fmt.Fprintf(b, `\u%04x`, r)
			}
		}
	}
	b.WriteByte('"')
}
