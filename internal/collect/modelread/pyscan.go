package modelread

import (
	"sort"
	"strings"
	"sync"

	"github.com/fastpath-dev/fastpath/internal/kb"
)

// What a transformers modeling file says about kernels, read off its
// logical lines (pytok.go). The readings cover the three ways transformers
// has bound kernel functions:
//   - up to 4.57: `if is_causal_conv1d_available(): from causal_conv1d import
//     causal_conv1d_fn` at module level, `else: causal_conv1d_fn = None`, an
//     optional `is_fast_path_available = all((...))`, and in the layer
//     `self.f = f or torch_f`;
//   - 5.0 to 5.14: `causal_conv1d = lazy_load_kernel("causal-conv1d")` in a
//     layer's __init__, then `f = getattr(causal_conv1d, "f", None)` or
//     `resolve_internal_import(mamba_ssm, chained_path="ops....f")`;
//   - 5.15 on: `@use_kernel_func_from_hub_with_fallback("f", "package")` on
//     the torch function itself (the decorator binds the package's f when it
//     imports, else keeps the torch function).

// kernelRoots are the import roots of kernel packages whose imports are
// gates: the import names of the KB's kernel packages (packages.json),
// built on first use (an init would cost every start of fastpath).
var kernelRoots = sync.OnceValue(func() map[string]bool {
	m := map[string]bool{}
	for _, p := range kb.KernelPackages() {
		m[p.Import] = true
	}
	return m
})

// CodeGate is one kernel function a modeling file binds.
type CodeGate struct {
	// Local is the name the module (or layer) calls it by.
	Local string `json:"local"`
	// Function is the kernel package's function name.
	Function string `json:"function"`
	// Import is the module transformers imports it from (causal_conv1d,
	// fla.ops.gated_delta_rule, mamba_ssm.ops.triton.ssd_combined), or the
	// package alone where the code names no more.
	Import string `json:"import"`
	// How: "import-if-available" (module-level import under an
	// is_*_available() test), "import" (a plain import), "lazy-load-kernel",
	// "hub-fallback" (use_kernel_func_from_hub_with_fallback), "hub-only"
	// (use_kernel_func_from_hub: a Hub kernel or nothing).
	How string `json:"how"`
	// Condition is the availability test guarding it, as written.
	Condition string `json:"condition,omitempty"`
	// Fallback is what runs without the package: a torch function's name,
	// or "None" (the layer tests for it and takes its torch path).
	Fallback string `json:"fallback"`
	Line     int    `json:"line"`
}

// pyClass is a top-level class of a modeling file.
type pyClass struct {
	name  string
	bases []string
	line  int
	// first and end index the logical lines of its body (decorators included
	// from first); init/initEnd its __init__, when it has one.
	first, end    int
	init, initEnd int
	// methods are its defs: name -> [first, end) logical lines.
	methods map[string][2]int
}

// pyModule is what the scanner read from one file.
type pyModule struct {
	path    string
	lines   []pyLine
	gates   []CodeGate
	classes map[string]*pyClass
	order   []string // class names in file order
	// funcs are top-level functions: name -> [first, end) logical lines.
	funcs map[string][2]int
	// dicts are top-level `NAME = {"key": Class, ...}` tables.
	dicts map[string][]dictEntry
	// fastPath is the names in `is_fast_path_available = all(...)` and its line.
	fastPath     []string
	fastPathLine int
	// flags are class attributes of the form _supports_X = True/False, by
	// class, for the attention checks.
	flags map[string]map[string]pyFlag
	// mentions are names of interest seen anywhere (use_mamba_kernels).
	mentions map[string]bool
}

type pyFlag struct {
	value string
	line  int
}

type dictEntry struct {
	key, class string
	line       int
}

// blockEnd is the index after the block opened by lines[i]: every following
// line indented deeper.
func blockEnd(lines []pyLine, i int) int {
	ind := lines[i].indent
	j := i + 1
	for j < len(lines) && lines[j].indent > ind {
		j++
	}
	return j
}

// scanModule reads a modeling file's structure and gates.
func scanModule(path string, src []byte) (*pyModule, error) {
	lines, err := tokenizePython(src)
	if err != nil {
		return nil, err
	}
	m := &pyModule{path: path, lines: lines, classes: map[string]*pyClass{}, funcs: map[string][2]int{},
		dicts: map[string][]dictEntry{}, flags: map[string]map[string]pyFlag{}, mentions: map[string]bool{}}
	for i := range lines {
		for _, t := range lines[i].toks {
			if t.kind == pyName && t.text == "use_mamba_kernels" {
				m.mentions[t.text] = true
			}
		}
	}
	m.readTopLevel()
	m.readGates()
	return m, nil
}

func (m *pyModule) readTopLevel() {
	lines := m.lines
	for i := 0; i < len(lines); i++ {
		l := &lines[i]
		if l.indent != 0 {
			continue
		}
		first := i
		for first > 0 && lines[first-1].indent == 0 && lines[first-1].is(0, pyOp, "@") {
			first--
		}
		switch {
		case l.startsWith("class") && len(l.toks) > 1 && l.toks[1].kind == pyName:
			c := &pyClass{name: l.toks[1].text, line: l.line, first: first, end: blockEnd(lines, i), init: -1, methods: map[string][2]int{}}
			if l.is(2, pyOp, "(") {
				for _, t := range l.toks[3:] {
					if t.kind == pyName {
						c.bases = append(c.bases, t.text)
					}
				}
			}
			for j := i + 1; j < c.end; j++ {
				lj := &lines[j]
				if lj.startsWith("def") && len(lj.toks) > 1 && lj.indent > 0 {
					if _, seen := c.methods[lj.toks[1].text]; !seen {
						c.methods[lj.toks[1].text] = [2]int{j, blockEnd(lines, j)}
					}
				}
				if lj.startsWith("def", "__init__") && c.init < 0 {
					c.init, c.initEnd = j, blockEnd(lines, j)
				}
				if len(lj.toks) == 3 && lj.toks[0].kind == pyName && strings.HasPrefix(lj.toks[0].text, "_supports_") && lj.is(1, pyOp, "=") {
					if m.flags[c.name] == nil {
						m.flags[c.name] = map[string]pyFlag{}
					}
					m.flags[c.name][lj.toks[0].text] = pyFlag{lj.toks[2].text, lj.line}
				}
			}
			m.classes[c.name] = c
			m.order = append(m.order, c.name)
		case (l.startsWith("def") || l.startsWith("async", "def")) && len(l.toks) > 1:
			n := l.toks[1].text
			if n == "def" && len(l.toks) > 2 {
				n = l.toks[2].text
			}
			m.funcs[n] = [2]int{first, blockEnd(lines, i)}
		case len(l.toks) > 3 && l.toks[0].kind == pyName && l.is(1, pyOp, "=") && l.is(2, pyOp, "{"):
			for k := 3; k+2 < len(l.toks); k++ {
				if l.toks[k].kind == pyString && l.is(k+1, pyOp, ":") && l.toks[k+2].kind == pyName &&
					(l.is(k+3, pyOp, ",") || l.is(k+3, pyOp, "}")) {
					m.dicts[l.toks[0].text] = append(m.dicts[l.toks[0].text], dictEntry{l.toks[k].text, l.toks[k+2].text, l.toks[k].line})
				}
			}
		case l.startsWith("is_fast_path_available", "="):
			m.fastPathLine = l.line
			for _, t := range l.toks[2:] {
				if t.kind == pyName && t.text != "all" && t.text != "is_fast_path_available" {
					m.fastPath = append(m.fastPath, t.text)
				}
			}
		}
	}
}

// enclosingIf is the text of the if/elif/else/try header the line i sits
// in (the nearest preceding line indented less), "" at top level.
func (m *pyModule) enclosingIf(i int) (string, bool) {
	ind := m.lines[i].indent
	for j := i - 1; j >= 0 && ind > 0; j-- {
		l := &m.lines[j]
		if l.indent >= ind {
			continue
		}
		switch {
		case l.startsWith("if") || l.startsWith("elif"):
			return joinToks(headerCond(l)), false
		case l.startsWith("else"):
			// The else of an if: find its if.
			for k := j - 1; k >= 0; k-- {
				if m.lines[k].indent == l.indent && (m.lines[k].startsWith("if") || m.lines[k].startsWith("elif")) {
					return joinToks(headerCond(&m.lines[k])), true
				}
				if m.lines[k].indent < l.indent {
					break
				}
			}
			return "", true
		case l.startsWith("try"):
			return "try", false
		case l.startsWith("except"):
			return "except", true
		}
		ind = l.indent
		if l.startsWith("def") || l.startsWith("class") {
			return "", false
		}
	}
	return "", false
}

// headerCond is the condition of an if/elif header: the tokens between the
// keyword and the closing colon.
func headerCond(l *pyLine) []pyToken {
	if len(l.toks) < 2 {
		return nil
	}
	end := len(l.toks)
	if l.toks[end-1].kind == pyOp && l.toks[end-1].text == ":" {
		end--
	}
	return l.toks[1:end]
}

func joinToks(ts []pyToken) string {
	var b strings.Builder
	for i, t := range ts {
		if i > 0 && (t.kind == pyName || t.kind == pyString || t.kind == pyNumber) &&
			(ts[i-1].kind == pyName || ts[i-1].kind == pyString || ts[i-1].kind == pyNumber || ts[i-1].text == ",") {
			b.WriteByte(' ')
		}
		if t.kind == pyString {
			b.WriteString(`"` + t.text + `"`)
		} else {
			b.WriteString(t.text)
		}
		if len(b.String()) > 200 {
			break
		}
	}
	return b.String()
}

// stringArgs are the string literals directly inside the first call of a
// line starting at token k (the '(' of the call).
func stringArgs(l *pyLine, k int) []string {
	var out []string
	depth := 0
	for ; k < len(l.toks); k++ {
		t := l.toks[k]
		switch {
		case t.kind == pyOp && (t.text == "(" || t.text == "[" || t.text == "{"):
			depth++
		case t.kind == pyOp && (t.text == ")" || t.text == "]" || t.text == "}"):
			depth--
			if depth == 0 {
				return out
			}
		case t.kind == pyString && depth == 1 && !l.is(k-1, pyOp, "="):
			out = append(out, t.text)
		}
	}
	return out
}

// kwString is the string passed as name=... in a line's tokens.
func kwString(l *pyLine, name string) string {
	for k := 0; k+2 < len(l.toks); k++ {
		if l.toks[k].kind == pyName && l.toks[k].text == name && l.is(k+1, pyOp, "=") && l.toks[k+2].kind == pyString {
			return l.toks[k+2].text
		}
	}
	return ""
}

func (m *pyModule) readGates() {
	lazy := map[string]string{} // variable -> lazy_load_kernel argument
	fallbacks := map[string]string{}
	nones := map[string]bool{}
	for i := range m.lines {
		l := &m.lines[i]
		switch {
		case l.startsWith("from") && len(l.toks) > 3:
			// from M import a, b as c
			var mod strings.Builder
			k := 1
			for ; k < len(l.toks) && !l.is(k, pyName, "import"); k++ {
				mod.WriteString(l.toks[k].text)
			}
			root, _, _ := strings.Cut(mod.String(), ".")
			if !kernelRoots()[root] {
				continue
			}
			cond, neg := m.enclosingIf(i)
			how := "import"
			if strings.Contains(cond, "_available") && !neg {
				how = "import-if-available"
			}
			for k++; k < len(l.toks); k++ {
				t := l.toks[k]
				if t.kind != pyName {
					continue
				}
				local := t.text
				if l.is(k+1, pyName, "as") && k+2 < len(l.toks) {
					local = l.toks[k+2].text
					k += 2
				}
				m.gates = append(m.gates, CodeGate{Local: local, Function: t.text, Import: mod.String(), How: how, Condition: cond, Line: l.line})
			}
		case l.is(0, pyOp, "@") && len(l.toks) > 2 && l.toks[1].kind == pyName &&
			(l.toks[1].text == "use_kernel_func_from_hub_with_fallback" || l.toks[1].text == "use_kernel_func_from_hub") && l.is(2, pyOp, "("):
			args := stringArgs(l, 2)
			if len(args) == 0 {
				continue
			}
			// The decorated def: the next line that is not a decorator.
			j := i + 1
			for j < len(m.lines) && m.lines[j].is(0, pyOp, "@") {
				j++
			}
			if j >= len(m.lines) || !m.lines[j].startsWith("def") || len(m.lines[j].toks) < 2 {
				continue
			}
			def := m.lines[j].toks[1].text
			g := CodeGate{Local: def, Function: args[0], How: "hub-only", Fallback: def, Line: l.line}
			if l.toks[1].text == "use_kernel_func_from_hub_with_fallback" {
				g.How = "hub-fallback"
				pkg := kwString(l, "package")
				if len(args) > 1 {
					pkg = args[1]
				}
				g.Import = pkg
				if ip := kwString(l, "internal_path"); ip != "" {
					g.Import = pkg + "." + ip
				}
			}
			m.gates = append(m.gates, g)
		default:
			m.readAssignment(l, lazy, fallbacks, nones)
		}
	}
	for i := range m.gates {
		g := &m.gates[i]
		if g.Fallback != "" {
			continue
		}
		switch {
		case fallbacks[g.Local] != "":
			g.Fallback = fallbacks[g.Local]
		default:
			g.Fallback = "None"
		}
	}
	sort.SliceStable(m.gates, func(a, b int) bool { return m.gates[a].Line < m.gates[b].Line })
}

// readAssignment reads the assignments that matter: lazy_load_kernel
// results, names bound from them, `x = f or torch_f` fallbacks.
func (m *pyModule) readAssignment(l *pyLine, lazy, fallbacks map[string]string, nones map[string]bool) {
	// Find the target: NAME = or self.NAME =
	eq := -1
	for k := 0; k < len(l.toks) && k < 4; k++ {
		if l.is(k, pyOp, "=") {
			eq = k
			break
		}
	}
	if eq < 1 || eq+1 >= len(l.toks) {
		return
	}
	target := l.toks[eq-1].text
	rhs := l.toks[eq+1:]
	r := &pyLine{toks: rhs, line: l.line}
	switch {
	case r.is(0, pyName, "lazy_load_kernel") && r.is(1, pyOp, "("):
		if a := stringArgs(r, 1); len(a) > 0 {
			lazy[target] = a[0]
		}
	case r.is(0, pyName, "getattr") && r.is(1, pyOp, "(") && len(rhs) > 4 && rhs[2].kind == pyName && lazy[rhs[2].text] != "":
		if a := stringArgs(r, 1); len(a) > 0 {
			m.gates = append(m.gates, CodeGate{Local: target, Function: a[0], Import: strings.ReplaceAll(lazy[rhs[2].text], "-", "_"),
				How: "lazy-load-kernel", Condition: `lazy_load_kernel("` + lazy[rhs[2].text] + `")`, Line: l.line})
		}
	case r.is(0, pyName, "resolve_internal_import") && r.is(1, pyOp, "(") && len(rhs) > 3 && rhs[2].kind == pyName && lazy[rhs[2].text] != "":
		p := kwString(r, "chained_path")
		if p == "" {
			if a := stringArgs(r, 1); len(a) > 0 {
				p = a[0]
			}
		}
		if p == "" {
			return
		}
		pkg := strings.ReplaceAll(lazy[rhs[2].text], "-", "_")
		mod, fn := pkg, p
		if k := strings.LastIndex(p, "."); k >= 0 {
			mod, fn = pkg+"."+p[:k], p[k+1:]
		}
		m.gates = append(m.gates, CodeGate{Local: target, Function: fn, Import: mod, How: "lazy-load-kernel",
			Condition: `lazy_load_kernel("` + lazy[rhs[2].text] + `")`, Line: l.line})
	case len(rhs) == 3 && rhs[0].kind == pyName && rhs[1].kind == pyName && rhs[1].text == "or" && rhs[2].kind == pyName:
		// self.f = f or torch_f
		fallbacks[rhs[0].text] = rhs[2].text
	}
}
