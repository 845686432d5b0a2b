package main

import (
	"bytes"
	"encoding"
	"encoding/json"
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/fastpath-dev/fastpath/internal/diagnose"
	"github.com/fastpath-dev/fastpath/internal/explain"
	"github.com/fastpath-dev/fastpath/internal/facts"
	"github.com/fastpath-dev/fastpath/internal/fleet"
	"github.com/fastpath-dev/fastpath/internal/inspect"
	"github.com/fastpath-dev/fastpath/internal/live"
	"github.com/fastpath-dev/fastpath/internal/model"
	"github.com/fastpath-dev/fastpath/internal/plan"
)

// The field tables of docs/json.md are generated from the Go types that the
// commands encode, and from those fields' comments, so the page cannot drift
// from what `--json` prints: TestJSONDocCurrent fails when a field is added,
// renamed or removed without regenerating them.
var updateJSONDoc = flag.Bool("update-json-doc", false, "rewrite the generated block of docs/json.md")

const (
	jsonDocPath  = "../../docs/json.md"
	jsonDocBegin = "<!-- generated:json (go test ./cmd/fastpath -run TestJSONDocCurrent -update-json-doc) -->"
	jsonDocEnd   = "<!-- end:json -->"
	modulePath   = "github.com/fastpath-dev/fastpath/"
)

// jsonDocuments are the documents the commands print, in the order the page
// lists them. packages --json is not here: it is pip's own format.
var jsonDocuments = []struct {
	command string
	typ     reflect.Type
}{
	{"`fastpath doctor --json` (and `demo --json`; one line per document with `--json-lines`)", reflect.TypeFor[diagnose.Doctor]()},
	{"`fastpath facts`", reflect.TypeFor[facts.Facts]()},
	{"`fastpath inspect --json`", reflect.TypeFor[inspect.Report]()},
	{"`fastpath model --json` (doctor's `models` holds the same objects)", reflect.TypeFor[model.Report]()},
	{"`fastpath explain --json` (`--follow --json`: one explain.Finding per line)", reflect.TypeFor[explain.Report]()},
	{"`fastpath plan --json`", reflect.TypeFor[plan.Plan]()},
	{"`fastpath remote --json`", reflect.TypeFor[fleet.Report]()},
	{"`fastpath diff --json`", reflect.TypeFor[fleet.Diff]()},
	{"`fastpath bench --json`", reflect.TypeFor[live.Bench]()},
}

// fieldComments holds, per package path, per type name, per Go field name,
// the field's comment as one line.
type fieldComments map[string]map[string]map[string]string

func (fc fieldComments) comment(t reflect.Type, field string) string {
	pkg := t.PkgPath()
	if _, ok := fc[pkg]; !ok {
		fc[pkg] = parseFieldComments(pkg)
	}
	return fc[pkg][t.Name()][field]
}

// parseFieldComments reads the comments of every struct field of one of the
// module's packages from its source.
func parseFieldComments(pkg string) map[string]map[string]string {
	out := map[string]map[string]string{}
	rel, ok := strings.CutPrefix(pkg, modulePath)
	if !ok {
		return out
	}
	files, _ := filepath.Glob(filepath.Join("..", "..", rel, "*.go"))
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.ParseComments)
		if err != nil {
			continue
		}
		ast.Inspect(f, func(n ast.Node) bool {
			ts, ok := n.(*ast.TypeSpec)
			if !ok {
				return true
			}
			st, ok := ts.Type.(*ast.StructType)
			if !ok {
				return true
			}
			m := map[string]string{}
			for _, fld := range st.Fields.List {
				text := fld.Doc.Text()
				if text == "" {
					text = fld.Comment.Text()
				}
				text = strings.Join(strings.Fields(text), " ")
				for _, id := range fld.Names {
					m[id.Name] = text
				}
			}
			out[ts.Name.Name] = m
			return false
		})
	}
	return out
}

type jsonDocGen struct {
	comments fieldComments
	done     map[string]bool
	queue    []section
	buf      bytes.Buffer
}

type section struct {
	name string
	typ  reflect.Type
}

// sectionName is the heading of a struct type's table: package.Type, or,
// for an anonymous struct, its parent's name and the field.
func sectionName(t reflect.Type, parent, field string) string {
	if t.Name() == "" {
		return parent + "." + field
	}
	return t.String()
}

// anchor is the fragment a Markdown renderer gives a heading (GitHub's rule:
// lower case, punctuation but '-' and '_' dropped, spaces to '-').
func anchor(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(heading) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r > 127:
			b.WriteRune(r)
		}
	}
	return b.String()
}

var (
	jsonMarshaler = reflect.TypeFor[json.Marshaler]()
	textMarshaler = reflect.TypeFor[encoding.TextMarshaler]()
)

func custom(t reflect.Type) bool {
	return t.Implements(jsonMarshaler) || t.Implements(textMarshaler) ||
		reflect.PointerTo(t).Implements(jsonMarshaler) || reflect.PointerTo(t).Implements(textMarshaler)
}

// typeText describes a field's JSON type, queueing struct types for their own
// table.
func (g *jsonDocGen) typeText(t reflect.Type, parent, field string) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == reflect.TypeFor[json.RawMessage]() {
		return "any JSON"
	}
	if custom(t) {
		return "string (" + t.String() + ")"
	}
	switch t.Kind() {
	case reflect.String:
		return "string"
	case reflect.Bool:
		return "bool"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "integer"
	case reflect.Float32, reflect.Float64:
		return "number"
	case reflect.Slice, reflect.Array:
		return "[" + g.typeText(t.Elem(), parent, field) + "]"
	case reflect.Map:
		return "{string: " + g.typeText(t.Elem(), parent, field) + "}"
	case reflect.Interface:
		return "any JSON"
	case reflect.Struct:
		name := sectionName(t, parent, field)
		if !g.done[name] {
			g.done[name] = true
			g.queue = append(g.queue, section{name, t})
		}
		return "[" + name + "](#" + anchor(name) + ")"
	}
	return t.Kind().String()
}

type docField struct{ name, typ, omit, meaning string }

// fields lists a struct's JSON fields as encoding/json writes them
// (embedded structs without a tag are flattened).
func (g *jsonDocGen) fields(t reflect.Type, name string) []docField {
	var out []docField
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		jname, opts, _ := strings.Cut(tag, ",")
		if f.Anonymous && jname == "" {
			ft := f.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				out = append(out, g.fields(ft, name)...)
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		if jname == "" {
			jname = f.Name
		}
		omit := ""
		if strings.Contains(opts, "omitempty") || strings.Contains(opts, "omitzero") {
			omit = "yes"
		}
		meaning := g.comments.comment(t, f.Name)
		out = append(out, docField{jname, g.typeText(f.Type, name, f.Name), omit, meaning})
	}
	return out
}

func cell(s string) string {
	return strings.ReplaceAll(s, "|", `\|`)
}

func generateJSONDoc() string {
	g := &jsonDocGen{comments: fieldComments{}, done: map[string]bool{}}
	fmt.Fprintln(&g.buf, jsonDocBegin)
	fmt.Fprintln(&g.buf)
	fmt.Fprintln(&g.buf, "| command | document |")
	fmt.Fprintln(&g.buf, "| --- | --- |")
	for _, d := range jsonDocuments {
		fmt.Fprintf(&g.buf, "| %s | %s |\n", cell(d.command), g.typeText(d.typ, "", ""))
	}
	for len(g.queue) > 0 {
		s := g.queue[0]
		g.queue = g.queue[1:]
		fmt.Fprintf(&g.buf, "\n### %s\n\n", s.name)
		fmt.Fprintln(&g.buf, "| field | type | omitted when empty | meaning |")
		fmt.Fprintln(&g.buf, "| --- | --- | --- | --- |")
		for _, f := range g.fields(s.typ, s.name) {
			fmt.Fprintf(&g.buf, "| `%s` | %s | %s | %s |\n", f.name, cell(f.typ), f.omit, cell(f.meaning))
		}
	}
	fmt.Fprintln(&g.buf)
	fmt.Fprint(&g.buf, jsonDocEnd)
	return g.buf.String()
}

func TestJSONDocCurrent(t *testing.T) {
	page, err := os.ReadFile(jsonDocPath)
	if err != nil {
		t.Fatal(err)
	}
	begin := bytes.Index(page, []byte(jsonDocBegin))
	end := bytes.Index(page, []byte(jsonDocEnd))
	if begin < 0 || end < begin {
		t.Fatalf("%s: no generated block (%q ... %q)", jsonDocPath, jsonDocBegin, jsonDocEnd)
	}
	want := generateJSONDoc()
	got := string(page[begin : end+len(jsonDocEnd)])
	if got == want {
		return
	}
	if *updateJSONDoc {
		out := append(append(append([]byte{}, page[:begin]...), want...), page[end+len(jsonDocEnd):]...)
		if err := os.WriteFile(jsonDocPath, out, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	gl, wl := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := 0; i < len(gl) || i < len(wl); i++ {
		var g, w string
		if i < len(gl) {
			g = gl[i]
		}
		if i < len(wl) {
			w = wl[i]
		}
		if g != w {
			t.Fatalf("%s is not what the Go types say (first difference at line %d of the block):\n have: %s\n want: %s\nrun: go test ./cmd/fastpath -run TestJSONDocCurrent -update-json-doc", jsonDocPath, i+1, g, w)
		}
	}
}
