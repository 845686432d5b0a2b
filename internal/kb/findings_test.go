package kb

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// repoRoot is the repository, from this package's folder.
var repoRoot = filepath.Join("..", "..")

// findingConsts reads internal/finding: each constant of type ID, by
// name, and its id.
func findingConsts(t *testing.T) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, gf := range parseGo(t, filepath.Join(repoRoot, "internal", "finding"), false) {
		findingConstsOf(gf.file, out)
	}
	if len(out) < 20 {
		t.Fatalf("read only %d finding ids from internal/finding", len(out))
	}
	return out
}

func findingConstsOf(file *ast.File, out map[string]string) {
	for _, d := range file.Decls {
		gd, ok := d.(*ast.GenDecl)
		if !ok || gd.Tok != token.CONST {
			continue
		}
		for _, s := range gd.Specs {
			vs := s.(*ast.ValueSpec)
			if id, ok := vs.Type.(*ast.Ident); !ok || id.Name != "ID" {
				continue
			}
			for i, n := range vs.Names {
				if lit, ok := vs.Values[i].(*ast.BasicLit); ok {
					v, _ := strconv.Unquote(lit.Value)
					out[n.Name] = v
				}
			}
		}
	}
}

type goFile struct {
	path string
	file *ast.File
}

// parseGo parses the .go files under dir (tests or not).
func parseGo(t *testing.T, dir string, tests bool) []goFile {
	t.Helper()
	var out []goFile
	fset := token.NewFileSet()
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") != tests {
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, 0)
		if err != nil {
			return err
		}
		out = append(out, goFile{p, f})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// mentions reports whether n names id: finding.<Const> of that id, or the
// id as a string literal.
func mentions(n ast.Node, id string, consts map[string]string) bool {
	found := false
	ast.Inspect(n, func(n ast.Node) bool {
		switch x := n.(type) {
		case *ast.SelectorExpr:
			if pkg, ok := x.X.(*ast.Ident); ok && pkg.Name == "finding" {
				if v, isID := consts[x.Sel.Name]; isID && v == id {
					found = true
				}
			}
		case *ast.BasicLit:
			if x.Kind == token.STRING && x.Value == strconv.Quote(id) {
				found = true
			}
		}
		return !found
	})
	return found
}

// caseRow is the innermost composite literal or call (a table row, a
// t.Run) in fn that holds the string literal name as one of its own
// elements or arguments.
func caseRow(fn *ast.FuncDecl, name string) ast.Node {
	want := strconv.Quote(name)
	isLit := func(e ast.Expr) bool {
		if kv, ok := e.(*ast.KeyValueExpr); ok {
			e = kv.Value
		}
		l, ok := e.(*ast.BasicLit)
		return ok && l.Value == want
	}
	var row ast.Node
	ast.Inspect(fn.Body, func(n ast.Node) bool {
		switch x := n.(type) {
		case *ast.CompositeLit:
			if slices.ContainsFunc(x.Elts, isLit) {
				row = x
			}
		case *ast.CallExpr:
			if slices.ContainsFunc(x.Args, isLit) {
				row = x
			}
		}
		return true
	})
	return row
}

// TestFindingRegistry keeps the finding ids in step everywhere they live:
// internal/finding's constants, the registry (data/findings.json), the
// checks that construct findings, explain's signatures, the docs page each
// entry names, and the tests: every id has a test case where it fires and
// a near miss where it must not, and both exist under the names the
// registry gives.
func TestFindingRegistry(t *testing.T) {
	consts := findingConsts(t)
	reg := Findings()
	ids := map[string]bool{}
	for _, v := range consts {
		ids[v] = true
	}
	seen := map[string]bool{}
	for _, e := range reg.Findings {
		if seen[e.ID] {
			t.Errorf("%s: registered twice", e.ID)
		}
		seen[e.ID] = true
		if consts[e.Const] != e.ID {
			t.Errorf("%s: findings.json names constant %q, internal/finding has it as %q (go run ./internal/cli/gendoc)", e.ID, e.Const, consts[e.Const])
		}
		if e.Title == "" || e.Meaning == "" || e.SeverityText == "" || len(e.Severities) == 0 || len(e.FoundBy) == 0 {
			t.Errorf("%s: incomplete entry %+v", e.ID, e)
		}
		for _, s := range e.Severities {
			if s != "error" && s != "warning" && s != "info" {
				t.Errorf("%s: severity %q", e.ID, s)
			}
		}
		if _, err := os.Stat(filepath.Join(repoRoot, filepath.FromSlash(e.Doc))); err != nil {
			t.Errorf("%s: doc page %s: %v", e.ID, e.Doc, err)
		}
	}
	for name, id := range consts {
		if !seen[id] {
			t.Errorf("finding.%s (%s) is not in data/findings.json", name, id)
		}
	}
	_ = ids

	// The code: every id is constructed somewhere outside internal/finding,
	// and a finding.Finding literal with constant id and severity uses a
	// severity the registry lists.
	used := map[string]bool{}
	for _, gf := range parseGo(t, filepath.Join(repoRoot, "internal"), false) {
		if strings.Contains(filepath.ToSlash(gf.path), "internal/finding/") {
			continue
		}
		ast.Inspect(gf.file, func(n ast.Node) bool {
			switch x := n.(type) {
			case *ast.SelectorExpr:
				if pkg, ok := x.X.(*ast.Ident); ok && pkg.Name == "finding" {
					if id, ok := consts[x.Sel.Name]; ok {
						used[id] = true
					}
				}
			case *ast.CompositeLit:
				sel, ok := x.Type.(*ast.SelectorExpr)
				if !ok || sel.Sel.Name != "Finding" {
					return true
				}
				var id, sev string
				for _, el := range x.Elts {
					kv, ok := el.(*ast.KeyValueExpr)
					if !ok {
						continue
					}
					key, _ := kv.Key.(*ast.Ident)
					val, _ := kv.Value.(*ast.SelectorExpr)
					if key == nil || val == nil {
						continue
					}
					switch key.Name {
					case "ID":
						id = consts[val.Sel.Name]
					case "Severity":
						sev = strings.ToLower(val.Sel.Name)
					}
				}
				if e, ok := reg.Finding(id); ok && sev != "" && !slices.Contains(e.Severities, sev) {
					t.Errorf("%s: %s constructs it with severity %s; findings.json lists %v", id, gf.path, sev, e.Severities)
				}
			}
			return true
		})
	}
	for id := range ids {
		if !used[id] {
			t.Errorf("%s: no code outside internal/finding raises it", id)
		}
	}
	for _, s := range Signatures().Signatures {
		for _, id := range append([]string{s.Finding}, s.Alternatives...) {
			if id != "" && !seen[id] {
				t.Errorf("signature %s names finding %q, not in findings.json", s.Name, id)
			}
		}
	}

	// The tests.
	funcs := map[string][]*ast.FuncDecl{}
	files := map[*ast.FuncDecl]*ast.File{}
	for _, dir := range []string{"diagnose", "explain"} {
		for _, gf := range parseGo(t, filepath.Join(repoRoot, "internal", dir), true) {
			for _, d := range gf.file.Decls {
				if fn, ok := d.(*ast.FuncDecl); ok && strings.HasPrefix(fn.Name.Name, "Test") {
					funcs[fn.Name.Name] = append(funcs[fn.Name.Name], fn)
					files[fn] = gf.file
				}
			}
		}
	}
	for _, e := range reg.Findings {
		for _, ref := range []struct{ kind, ref string }{{"fires", e.Fires}, {"quiet", e.Quiet}} {
			name, sub, _ := strings.Cut(ref.ref, "/")
			fns := funcs[name]
			if len(fns) != 1 {
				t.Errorf("%s: %s test %q: %d test functions of that name in internal/diagnose and internal/explain", e.ID, ref.kind, ref.ref, len(fns))
				continue
			}
			fn := fns[0]
			var row ast.Node = fn
			if sub != "" {
				if row = caseRow(fn, sub); row == nil {
					t.Errorf("%s: %s test %q: %s has no case %q", e.ID, ref.kind, ref.ref, name, sub)
					continue
				}
			}
			switch ref.kind {
			case "fires":
				if !mentions(row, e.ID, consts) && !mentions(fn, e.ID, consts) && !mentions(files[fn], e.ID, consts) {
					t.Errorf("%s: fires test %q never names the id", e.ID, ref.ref)
				}
			case "quiet":
				// A table row that names the id must mark it "must not
				// fire" (an empty severity); rows of exact-list tables
				// (explain's) name only the ids that fire.
				if _, table := row.(*ast.CompositeLit); table && mentions(row, e.ID, consts) && !mentions(row, "", consts) {
					t.Errorf("%s: quiet case %q names the id as firing", e.ID, ref.ref)
				}
				if sub == "" && !mentions(fn, e.ID, consts) {
					t.Errorf("%s: quiet test %q never names the id", e.ID, ref.ref)
				}
			}
		}
	}
}
