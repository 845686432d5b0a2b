package layering

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
)

// entryPoints: packages that sit below diagnose in the pipeline but read its
// findings reach it only through its public entry, never its helpers (which
// would make them a second diagnose). The key is the package's folder, the
// value the diagnose names it may use.
var entryPoints = map[string][]string{
	// explain: a log -> Findings; the machine's static findings come from
	// diagnose.Run, its commands from remedy (DESIGN: "fixes from remedy").
	"internal/explain": {"Run"},
}

// diagnoseUses lists the diagnose.X names the non-test Go files of dir use.
func diagnoseUses(t *testing.T, dir string) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		local := ""
		for _, imp := range f.Imports {
			if imp.Path.Value == `"`+module+`internal/diagnose"` {
				local = "diagnose"
				if imp.Name != nil {
					local = imp.Name.Name
				}
			}
		}
		if local == "" {
			continue
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if sel, ok := n.(*ast.SelectorExpr); ok {
				if id, ok := sel.X.(*ast.Ident); ok && id.Name == local {
					seen[sel.Sel.Name] = true
				}
			}
			return true
		})
	}
	var out []string
	for n := range seen {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

func TestDiagnoseEntryPoints(t *testing.T) {
	root := filepath.Join("..", "..")
	for pkg, allowed := range entryPoints {
		dir := filepath.Join(root, filepath.FromSlash(pkg))
		if _, err := os.Stat(dir); err != nil {
			t.Fatalf("%s: %v", pkg, err)
		}
		uses := diagnoseUses(t, dir)
		if len(uses) == 0 {
			t.Errorf("%s uses nothing of diagnose: drop it from entryPoints", pkg)
		}
		for _, u := range uses {
			if !slices.Contains(allowed, u) {
				t.Errorf("%s uses diagnose.%s: it may use only %v (the pipeline's entry), so it does not become a second diagnose", pkg, u, allowed)
			}
		}
	}
}
