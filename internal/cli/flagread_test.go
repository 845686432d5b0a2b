package cli

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// flagsNotRead are flags a command registers on purpose without reading,
// each with the reason. The test fails when an entry here is read after all
// or no longer registered, so the list cannot hide a flag by going stale.
var flagsNotRead = map[string]string{}

// TestEveryFlagIsRead fails when a command registers a flag that nothing it
// runs reads: the flags come from the real cobra tree, and the reads from
// the package's source, following the calls from each command's RunE and
// Args (see flagReadProblems).
func TestEveryFlagIsRead(t *testing.T) {
	registered := map[string][]string{}
	walkCommands(NewRootCommand(&IO{}), func(c *cobra.Command) {
		if !c.HasParent() {
			return // fastpath itself: --help and --version, cobra's own
		}
		c.LocalFlags().VisitAll(func(f *pflag.Flag) {
			if f.Name != "help" {
				registered[c.Name()] = append(registered[c.Name()], f.Name)
			}
		})
	})
	if len(registered) < 12 {
		t.Fatalf("found flags on only %d commands", len(registered))
	}
	for _, p := range flagReadProblems(t, ".", registered, flagsNotRead) {
		t.Error(p)
	}
}

// TestFlagReadCheckFails shows that the check above can fail: a command
// in testdata/flagread registers --unused and never reads it, reads --used
// only inside a function its RunE calls, and reads --local (a local
// variable) inside the RunE itself.
func TestFlagReadCheckFails(t *testing.T) {
	got := flagReadProblems(t, filepath.Join("testdata", "flagread"),
		map[string][]string{"widget": {"used", "unused", "local", "written"}}, nil)
	want := []string{
		"fastpath widget --unused: registered but never read by what the command runs",
		"fastpath widget --written: registered but never read by what the command runs",
	}
	if !slices.Equal(got, want) {
		t.Errorf("problems:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// walkCommands visits the commands fastpath defines (not cobra's help and
// completion commands).
func walkCommands(c *cobra.Command, visit func(*cobra.Command)) {
	if c.Name() == "help" || c.Name() == "completion" {
		return
	}
	visit(c)
	for _, sub := range c.Commands() {
		walkCommands(sub, visit)
	}
}

// registerCall matches pflag's registration methods that bind a variable:
// StringVar, BoolVarP, StringArrayVar, DurationVar...
var registerCall = regexp.MustCompile(`^[A-Z][A-Za-z0-9]*VarP?$`)

// flagReadProblems reads the Go files of dir (syntax only: fast, no type
// checking) and, for each command name and flag in registered, checks that
// the variable the flag is bound to is read somewhere in what the command
// runs:
//   - a flag's variable is the &x.Field or &local passed to a pflag XxxVar
//     call registering that name (a name bound in several places, like
//     --json, has several; any one read counts);
//   - what a command runs is the function literals (RunE, Args...) of its
//     cobra.Command{Use: "NAME ..."} literal, and every function and method
//     of the package they name, transitively (methods by name, so this errs
//     towards "read");
//   - a read is any use of that field or variable other than the & of a
//     registration and the left side of an assignment.
//
// The problems include registered flags whose registration it cannot find,
// and commands without a literal: it never passes for want of seeing.
func flagReadProblems(t *testing.T, dir string, registered map[string][]string, allowed map[string]string) []string {
	t.Helper()
	fset := token.NewFileSet()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var files []*ast.File
	for _, e := range entries {
		n := e.Name()
		if !strings.HasSuffix(n, ".go") || strings.HasSuffix(n, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, n), nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	if len(files) == 0 {
		t.Fatalf("no Go files in %s", dir)
	}

	funcs := map[string][]*ast.FuncDecl{}   // plain functions by name
	methods := map[string][]*ast.FuncDecl{} // methods by name, whatever the receiver
	binds := map[string][]string{}          // flag name -> ".Field" or "var:name"
	entriesOf := map[string][]ast.Node{}    // command name -> its function literals
	imports := map[*ast.File]map[string]bool{}
	for _, f := range files {
		imports[f] = importNames(f)
		for _, d := range f.Decls {
			if fd, ok := d.(*ast.FuncDecl); ok && fd.Body != nil {
				if fd.Recv == nil {
					funcs[fd.Name.Name] = append(funcs[fd.Name.Name], fd)
				} else {
					methods[fd.Name.Name] = append(methods[fd.Name.Name], fd)
				}
			}
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch x := n.(type) {
			case *ast.CallExpr:
				if name, key, ok := registration(x); ok {
					binds[name] = append(binds[name], key)
				}
			case *ast.CompositeLit:
				if name, fns, ok := commandLiteral(x, funcs); ok {
					entriesOf[name] = append(entriesOf[name], fns...)
				}
			}
			return true
		})
	}
	// addOutputFlags(cmd, ...) installs (*Output).resolve as cmd's PreRunE,
	// which reads --format: a command built next to that call runs it too.
	for _, f := range files {
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Body == nil {
				continue
			}
			var names []string
			calls := false
			ast.Inspect(fd.Body, func(n ast.Node) bool {
				switch x := n.(type) {
				case *ast.CompositeLit:
					if name, _, ok := commandLiteral(x, funcs); ok {
						names = append(names, name)
					}
				case *ast.CallExpr:
					if id, ok := x.Fun.(*ast.Ident); ok && id.Name == "addOutputFlags" {
						calls = true
					}
				}
				return true
			})
			if calls && len(names) == 1 {
				for _, m := range methods["resolve"] {
					entriesOf[names[0]] = append(entriesOf[names[0]], m)
				}
			}
		}
	}
	fileOf := func(n ast.Node) *ast.File {
		for _, f := range files {
			if f.Pos() <= n.Pos() && n.End() <= f.End() {
				return f
			}
		}
		return nil
	}

	var problems []string
	commands := make([]string, 0, len(registered))
	for c := range registered {
		commands = append(commands, c)
	}
	sort.Strings(commands)
	for _, c := range commands {
		if len(entriesOf[c]) == 0 {
			problems = append(problems, "fastpath "+c+": no cobra.Command literal with a RunE found for it")
			continue
		}
		reads := readsFrom(entriesOf[c], funcs, methods, imports, fileOf)
		flags := slices.Clone(registered[c])
		sort.Strings(flags)
		for _, name := range flags {
			id := c + " --" + name
			keys := binds[name]
			if len(keys) == 0 {
				problems = append(problems, "fastpath "+id+": registered, but no XxxVar call binding it was found (cannot judge it)")
				continue
			}
			read := slices.ContainsFunc(keys, func(k string) bool { return reads[k] })
			_, isAllowed := allowed[id]
			switch {
			case !read && !isAllowed:
				problems = append(problems, "fastpath "+id+": registered but never read by what the command runs")
			case read && isAllowed:
				problems = append(problems, "fastpath "+id+": listed as not read, but it is read: remove it from flagsNotRead")
			}
		}
	}
	for id := range allowed {
		c, name, _ := strings.Cut(id, " --")
		if !slices.Contains(registered[c], name) {
			problems = append(problems, "fastpath "+id+": listed in flagsNotRead but not registered")
		}
	}
	return problems
}

// majorVersion is a module path's major-version element ("v4").
var majorVersion = regexp.MustCompile(`^v[0-9]+$`)

// importNames are the names a file's imports are used by.
func importNames(f *ast.File) map[string]bool {
	names := map[string]bool{}
	for _, im := range f.Imports {
		p, _ := strconv.Unquote(im.Path.Value)
		name := path.Base(p)
		if majorVersion.MatchString(name) {
			name = path.Base(path.Dir(p)) // github.com/pierrec/lz4/v4 is lz4
		}
		if im.Name != nil {
			name = im.Name.Name
		}
		names[name] = true
	}
	return names
}

// registration reports a pflag call binding a variable to a flag name:
// fs.StringVar(&o.Field, "name", ...) gives ("name", ".Field").
func registration(call *ast.CallExpr) (name, key string, ok bool) {
	sel, isSel := call.Fun.(*ast.SelectorExpr)
	if !isSel || !registerCall.MatchString(sel.Sel.Name) || len(call.Args) < 2 {
		return "", "", false
	}
	addr, isAddr := call.Args[0].(*ast.UnaryExpr)
	lit, isLit := call.Args[1].(*ast.BasicLit)
	if !isAddr || addr.Op != token.AND || !isLit || lit.Kind != token.STRING {
		return "", "", false
	}
	name, err := strconv.Unquote(lit.Value)
	if err != nil {
		return "", "", false
	}
	switch x := addr.X.(type) {
	case *ast.SelectorExpr:
		return name, "." + x.Sel.Name, true
	case *ast.Ident:
		return name, "var:" + x.Name, true
	}
	return "", "", false
}

// commandLiteral reports a cobra.Command{Use: "NAME ...", RunE: ...}
// literal: its name and the functions it runs.
func commandLiteral(lit *ast.CompositeLit, funcs map[string][]*ast.FuncDecl) (string, []ast.Node, bool) {
	typ, ok := lit.Type.(*ast.SelectorExpr)
	if !ok || typ.Sel.Name != "Command" {
		return "", nil, false
	}
	if pkg, ok := typ.X.(*ast.Ident); !ok || pkg.Name != "cobra" {
		return "", nil, false
	}
	var name string
	var fns []ast.Node
	for _, e := range lit.Elts {
		kv, ok := e.(*ast.KeyValueExpr)
		if !ok {
			continue
		}
		key, _ := kv.Key.(*ast.Ident)
		if key == nil {
			continue
		}
		switch v := kv.Value.(type) {
		case *ast.BasicLit:
			if key.Name == "Use" {
				use, _ := strconv.Unquote(v.Value)
				name, _, _ = strings.Cut(use, " ")
			}
		case *ast.FuncLit:
			fns = append(fns, v)
		case *ast.Ident: // RunE: runSomething
			for _, fd := range funcs[v.Name] {
				fns = append(fns, fd)
			}
		}
	}
	return name, fns, name != "" && len(fns) > 0
}

// readsFrom walks from the entry functions through every function and
// method of the package they mention, and returns the fields (".Field")
// and variables ("var:name") read on the way.
func readsFrom(entries []ast.Node, funcs, methods map[string][]*ast.FuncDecl, imports map[*ast.File]map[string]bool, fileOf func(ast.Node) *ast.File) map[string]bool {
	reads := map[string]bool{}
	seen := map[ast.Node]bool{}
	queue := slices.Clone(entries)
	for len(queue) > 0 {
		fn := queue[0]
		queue = queue[1:]
		if seen[fn] {
			continue
		}
		seen[fn] = true
		pkgs := imports[fileOf(fn)]
		var body *ast.BlockStmt
		switch f := fn.(type) {
		case *ast.FuncLit:
			body = f.Body
		case *ast.FuncDecl:
			body = f.Body
		}
		notRead := map[ast.Expr]bool{}   // written, or bound by a registration
		notMethod := map[ast.Expr]bool{} // x.F selected further or addressed: a field
		selName := map[*ast.Ident]bool{} // the F of x.F: no variable or function of ours
		ast.Inspect(body, func(n ast.Node) bool {
			switch x := n.(type) {
			case *ast.UnaryExpr:
				if x.Op == token.AND {
					notMethod[x.X] = true
				}
			case *ast.AssignStmt:
				if x.Tok == token.ASSIGN || x.Tok == token.DEFINE {
					for _, l := range x.Lhs {
						notRead[l] = true
					}
				}
			case *ast.ValueSpec:
				for _, id := range x.Names {
					notRead[id] = true
				}
			case *ast.CallExpr:
				if _, _, ok := registration(x); ok {
					notRead[x.Args[0].(*ast.UnaryExpr).X] = true
				}
			case *ast.SelectorExpr:
				if id, ok := x.X.(*ast.Ident); ok && pkgs[id.Name] {
					return false // another package's name: neither ours nor a field
				}
				if !notRead[x] {
					reads["."+x.Sel.Name] = true
				}
				notMethod[x.X] = true
				if !notMethod[x] {
					for _, m := range methods[x.Sel.Name] {
						queue = append(queue, m)
					}
				}
				selName[x.Sel] = true
			case *ast.Ident:
				if selName[x] {
					break
				}
				if !notRead[x] {
					reads["var:"+x.Name] = true
				}
				for _, f := range funcs[x.Name] {
					queue = append(queue, f)
				}
			}
			return true
		})
	}
	return reads
}
