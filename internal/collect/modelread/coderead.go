package modelread

import (
	"fmt"
	"path"
	"sort"
	"strings"

	"github.com/fastpath-dev/fastpath/internal/kb"
)

// CodeReading is what the installed transformers' own modeling file says
// about a config's layers: which kernel functions it binds (its gates), which
// layer classes call them, and which of the config's layer kinds build those
// classes. It is read statically: the Python source is tokenized, never
// imported or run.
type CodeReading struct {
	// File is the modeling file read (a path in the source); Modular the
	// modular file next to it, when there is one.
	File    string `json:"file"`
	Modular string `json:"modular,omitempty"`
	// ModularFunctions are the kernel functions the modular file binds,
	// where it binds any (the modeling file is generated from it).
	ModularFunctions []string   `json:"modular_functions,omitempty"`
	Gates            []CodeGate `json:"gates"`
	// FastPathAll is the names in `is_fast_path_available = all(...)`:
	// the layer runs its kernels only when every one of them is bound.
	FastPathAll  []string `json:"fast_path_all,omitempty"`
	FastPathLine int      `json:"fast_path_line,omitempty"`
	// Kinds is, per layer kind of the config, the gated functions its
	// layers call and where that was read.
	Kinds []CodeKind `json:"kinds"`
	// Judged is true when every layer kind of the config was tied to code;
	// otherwise Why says what was missing.
	Judged bool   `json:"judged"`
	Why    string `json:"why,omitempty"`
	// Attention is the model's _supports_* class attributes (flash_attn,
	// sdpa, flex_attn): value, class and line.
	Attention map[string]AttnFlag `json:"attention_support,omitempty"`
	// UseMambaKernels: the file reads config.use_mamba_kernels.
	UseMambaKernels bool `json:"reads_use_mamba_kernels,omitempty"`
}

// AttnFlag is one _supports_* class attribute.
type AttnFlag struct {
	Value string `json:"value"`
	Where string `json:"where"` // Class.attr (file:line)
}

// CodeKind is one layer kind's reading.
type CodeKind struct {
	Kind string `json:"kind"`
	// Functions are the kernel functions (CodeGate.Function) its layers call.
	Functions []string `json:"functions"`
	// Classes are the gate-using classes its layers build, "Name (file:line)".
	Classes []string `json:"classes,omitempty"`
	// Dispatch is where the code ties this kind to classes, "file:line: text".
	Dispatch []string `json:"dispatch,omitempty"`
}

// kindVocabulary is the spellings transformers' modeling code compares
// layer kinds against (5.x and the legacy ones), so that a comparison with
// another word ("sparse", "shared") is not taken for a kind test.
var kindVocabulary = map[string]bool{
	"linear_attention": true, "full_attention": true, "sliding_attention": true, "chunked_attention": true,
	"mamba": true, "attention": true, "hybrid": true, "hybrid_sliding": true, "conv": true, "moe": true, "mlp": true,
	"indexed_attention": true, "mamba2": true, "deltanet": true, "gated_deltanet": true, "kda": true,
}

// NormalizeKind folds the legacy spellings onto transformers' current ones, as
// its _LEGACY_LAYER_TYPE_REMAP does.
func NormalizeKind(k string) string {
	if r, ok := kb.Families().ConfigReading.LegacyLayerTypes[k]; ok {
		return r
	}
	return k
}

// kindCond is a test on the layer kind: kind in set (neg: not in set).
type kindCond struct {
	set  map[string]bool
	neg  bool
	line int
	text string
}

func (c kindCond) admits(kind string) bool { return c.set[NormalizeKind(kind)] != c.neg }

func (c kindCond) not() kindCond { c.neg = !c.neg; return c }

// edge is a class reference from a class's __init__ (or its base list),
// under the kind tests that enclose it.
type edge struct {
	to    string
	conds []kindCond
}

type analyzer struct {
	m       *pyModule
	kinds   map[string]bool // the config's kinds, normalized
	aliases map[string]kindCond
	edges   map[string][]edge
	found   []kindCond // every kind test read
}

// parseKindCond reads a kind test from condition tokens; ok false when the
// tokens test something else.
func (a *analyzer) parseKindCond(ts []pyToken) (kindCond, bool) {
	neg := false
	for len(ts) > 0 && ts[0].kind == pyName && ts[0].text == "not" {
		neg, ts = !neg, ts[1:]
	}
	if len(ts) == 0 {
		return kindCond{}, false
	}
	// An alias: NAME or self.NAME assigned a kind test earlier.
	if len(ts) == 1 && ts[0].kind == pyName {
		c, ok := a.aliases[ts[0].text]
		if ok && neg {
			c = c.not()
		}
		return c, ok
	}
	if len(ts) == 3 && ts[0].text == "self" && ts[1].text == "." && ts[2].kind == pyName {
		c, ok := a.aliases[ts[2].text]
		if ok && neg {
			c = c.not()
		}
		return c, ok
	}
	for k := 0; k < len(ts); k++ {
		t := ts[k]
		if t.kind == pyOp && (t.text == "==" || t.text == "!=") {
			var s *pyToken
			if k+1 < len(ts) && ts[k+1].kind == pyString {
				s = &ts[k+1]
			} else if k > 0 && ts[k-1].kind == pyString {
				s = &ts[k-1]
			}
			if s == nil || !a.isKind(s.text) {
				continue
			}
			return kindCond{set: map[string]bool{NormalizeKind(s.text): true}, neg: neg != (t.text == "!="), line: t.line}, true
		}
		if t.kind == pyName && t.text == "in" && k+1 < len(ts) && ts[k+1].kind == pyOp && strings.Contains("([{", ts[k+1].text) {
			not := k > 0 && ts[k-1].kind == pyName && ts[k-1].text == "not"
			set := map[string]bool{}
			kindy := false
			for j := k + 2; j < len(ts) && !(ts[j].kind == pyOp && strings.Contains(")]}", ts[j].text)); j++ {
				if ts[j].kind == pyString {
					set[NormalizeKind(ts[j].text)] = true
					kindy = kindy || a.isKind(ts[j].text)
				}
			}
			if kindy {
				return kindCond{set: set, neg: neg != not, line: t.line}, true
			}
		}
	}
	return kindCond{}, false
}

func (a *analyzer) isKind(s string) bool {
	_, legacy := kb.Families().ConfigReading.LegacyLayerTypes[s]
	return kindVocabulary[s] || legacy || a.kinds[NormalizeKind(s)]
}

// levels gives each token's bracket nesting level (a bracket itself is at
// the outer level).
func levels(ts []pyToken) []int {
	lv := make([]int, len(ts))
	d := 0
	for k, t := range ts {
		if t.kind == pyOp && (t.text == ")" || t.text == "]" || t.text == "}") && d > 0 {
			d--
		}
		lv[k] = d
		if t.kind == pyOp && (t.text == "(" || t.text == "[" || t.text == "{") {
			d++
		}
	}
	return lv
}

// ternaries finds `A if COND else B` in a line whose COND is a kind test and
// returns, per token index, the test that holds there.
func (a *analyzer) ternaries(l *pyLine) map[int]kindCond {
	out := map[int]kindCond{}
	ts := l.toks
	lv := levels(ts)
	for q := 1; q < len(ts); q++ {
		if ts[q].kind != pyName || ts[q].text != "if" {
			continue
		}
		d := lv[q]
		e := -1
		for k := q + 1; k < len(ts) && lv[k] >= d; k++ {
			if lv[k] == d && ts[k].kind == pyName && ts[k].text == "else" {
				e = k
				break
			}
		}
		if e < 0 {
			continue
		}
		c, ok := a.parseKindCond(ts[q+1 : e])
		if !ok {
			continue
		}
		c.text, c.line = joinToks(ts[q+1:e]), ts[q].line
		a.found = append(a.found, c)
		s := q - 1
		for s >= 0 && lv[s] >= d && !(lv[s] == d && ts[s].kind == pyOp && (ts[s].text == "=" || ts[s].text == "," || ts[s].text == ":")) {
			s--
		}
		for k := s + 1; k < q; k++ {
			out[k] = c
		}
		for k := e + 1; k < len(ts) && lv[k] >= d && !(lv[k] == d && ts[k].kind == pyOp && ts[k].text == ","); k++ {
			out[k] = c.not()
		}
	}
	return out
}

type frame struct {
	indent int
	conds  []kindCond
}

// readInit collects the class references of one class's __init__ under the
// kind tests around them.
func (a *analyzer) readInit(c *pyClass) {
	for _, b := range c.bases {
		if _, ok := a.m.classes[b]; ok && b != c.name {
			a.edges[c.name] = append(a.edges[c.name], edge{to: b})
		}
	}
	if c.init < 0 {
		return
	}
	called := a.readBody(c, c.init+1, c.initEnd)
	// Methods __init__ calls (self.get_layers()) build layers too: one level.
	for _, name := range called {
		if r, ok := c.methods[name]; ok && name != "__init__" && name != "forward" {
			a.readBody(c, r[0]+1, r[1])
		}
	}
}

// readBody reads lines [from, end) of a method of c; it returns the methods
// called on self there.
func (a *analyzer) readBody(c *pyClass, from, end int) []string {
	var called []string
	var stack []frame
	chain := map[int][]kindCond{} // the if-chain's tests, by indent
	chainHas := map[int][]bool{}
	for j := from; j < end; j++ {
		l := &a.m.lines[j]
		for k := 0; k+3 < len(l.toks); k++ {
			if l.is(k, pyName, "self") && l.is(k+1, pyOp, ".") && l.toks[k+2].kind == pyName && l.is(k+3, pyOp, "(") {
				called = append(called, l.toks[k+2].text)
			}
		}
		for len(stack) > 0 && stack[len(stack)-1].indent >= l.indent {
			stack = stack[:len(stack)-1]
		}
		var cur []kindCond
		for _, f := range stack {
			cur = append(cur, f.conds...)
		}
		header := len(l.toks) > 1 && l.toks[len(l.toks)-1].text == ":"
		switch {
		case (l.startsWith("if") || l.startsWith("elif")) && header:
			cond, ok := a.parseKindCond(l.toks[1 : len(l.toks)-1])
			if ok {
				cond.text, cond.line = joinToks(l.toks[1:len(l.toks)-1]), l.line
				a.found = append(a.found, cond)
			}
			var conds []kindCond
			if l.startsWith("elif") {
				for k, pc := range chain[l.indent] {
					if chainHas[l.indent][k] {
						conds = append(conds, pc.not())
					}
				}
			} else {
				chain[l.indent], chainHas[l.indent] = nil, nil
			}
			chain[l.indent] = append(chain[l.indent], cond)
			chainHas[l.indent] = append(chainHas[l.indent], ok)
			if ok {
				conds = append(conds, cond)
			}
			stack = append(stack, frame{indent: l.indent, conds: conds})
			a.refs(c, l, cur, nil)
			continue
		case l.startsWith("else") && header:
			var conds []kindCond
			for k, pc := range chain[l.indent] {
				if chainHas[l.indent][k] {
					conds = append(conds, pc.not())
				}
			}
			stack = append(stack, frame{indent: l.indent, conds: conds})
			continue
		case header:
			stack = append(stack, frame{indent: l.indent})
		}
		// An alias: X = <kind test> or self.X = <kind test>.
		if eq := aliasTarget(l); eq > 0 {
			rhs := l.toks[eq+1:]
			if !hasName(rhs, "if") {
				if cond, ok := a.parseKindCond(rhs); ok {
					cond.text, cond.line = joinToks(rhs), l.line
					a.aliases[l.toks[eq-1].text] = cond
					a.found = append(a.found, cond)
				}
			}
		}
		a.refs(c, l, cur, a.ternaries(l))
	}
	return called
}

func aliasTarget(l *pyLine) int {
	switch {
	case len(l.toks) > 2 && l.toks[0].kind == pyName && l.is(1, pyOp, "="):
		return 1
	case len(l.toks) > 4 && l.is(0, pyName, "self") && l.is(1, pyOp, ".") && l.toks[2].kind == pyName && l.is(3, pyOp, "="):
		return 3
	}
	return -1
}

func hasName(ts []pyToken, n string) bool {
	for _, t := range ts {
		if t.kind == pyName && t.text == n {
			return true
		}
	}
	return false
}

// refs records the classes and tables a line of c's __init__ names.
func (a *analyzer) refs(c *pyClass, l *pyLine, cur []kindCond, tern map[int]kindCond) {
	for k, t := range l.toks {
		if t.kind != pyName || t.text == c.name || (k > 0 && l.is(k-1, pyOp, ".")) {
			continue
		}
		conds := cur
		if tc, ok := tern[k]; ok {
			conds = append(append([]kindCond(nil), cur...), tc)
		}
		if _, ok := a.m.classes[t.text]; ok {
			a.edges[c.name] = append(a.edges[c.name], edge{to: t.text, conds: conds})
			continue
		}
		for _, e := range a.m.dicts[t.text] {
			if !a.isKind(e.key) {
				a.edges[c.name] = append(a.edges[c.name], edge{to: e.class, conds: conds})
				continue
			}
			kc := kindCond{set: map[string]bool{NormalizeKind(e.key): true}, line: e.line, text: fmt.Sprintf("%s[%q]", t.text, e.key)}
			a.found = append(a.found, kc)
			a.edges[c.name] = append(a.edges[c.name], edge{to: e.class, conds: append(append([]kindCond(nil), conds...), kc)})
		}
	}
}

// gateUse is, per class and per top-level function, the gate locals it
// refers to (functions transitively).
func (a *analyzer) gateUse() map[string]map[string]bool {
	m := a.m
	locals := map[string]bool{}
	for _, g := range m.gates {
		// A Hub-only kernel (use_kernel_func_from_hub) is used only with
		// use_kernels=True and has no package to miss.
		if g.How != "hub-only" {
			locals[g.Local] = true
		}
	}
	names := func(first, end int) map[string]bool {
		out := map[string]bool{}
		for j := first; j < end && j < len(m.lines); j++ {
			for k, t := range m.lines[j].toks {
				if t.kind == pyName && !(k > 0 && m.lines[j].is(k-1, pyOp, ".") && !m.lines[j].is(k-2, pyName, "self")) {
					out[t.text] = true
				}
			}
		}
		return out
	}
	direct := map[string]map[string]bool{}
	uses := map[string]map[string]bool{} // node -> referenced funcs
	add := func(node string, ns map[string]bool) {
		direct[node] = map[string]bool{}
		uses[node] = map[string]bool{}
		for n := range ns {
			if locals[n] {
				direct[node][n] = true
			}
			if n == "is_fast_path_available" {
				for _, f := range m.fastPath {
					if locals[f] {
						direct[node][f] = true
					}
				}
			}
			if _, ok := m.funcs[n]; ok && n != node {
				uses[node][n] = true
			}
		}
	}
	for n, r := range m.funcs {
		if locals[n] {
			// A decorated torch function is the gate itself.
			direct[n] = map[string]bool{n: true}
			uses[n] = map[string]bool{}
			continue
		}
		add(n, names(r[0], r[1]))
	}
	for n, c := range m.classes {
		add("class "+n, names(c.first, c.end))
	}
	// Close over function calls (bounded: at most one pass per function).
	for pass := 0; pass <= len(m.funcs); pass++ {
		changed := false
		for node, fs := range uses {
			for f := range fs {
				for g := range direct[f] {
					if !direct[node][g] {
						direct[node][g] = true
						changed = true
					}
				}
			}
		}
		if !changed {
			break
		}
	}
	out := map[string]map[string]bool{}
	for n := range m.classes {
		if len(direct["class "+n]) > 0 {
			out[n] = direct["class "+n]
		}
	}
	return out
}

// roots are the classes a model is built from: *Model and *ForCausalLM,
// not the *PreTrainedModel base.
func (m *pyModule) roots() []string {
	var out []string
	for _, n := range m.order {
		if strings.HasSuffix(n, "PreTrainedModel") {
			continue
		}
		if strings.HasSuffix(n, "Model") || strings.HasSuffix(n, "ForCausalLM") {
			out = append(out, n)
		}
	}
	return out
}

// readCode ties a config's layer kinds to a scanned modeling file. kinds
// are the config's kinds (nil: the config lists none).
func readCode(m *pyModule, kinds []string) *CodeReading {
	base := path.Base(m.path)
	r := &CodeReading{File: m.path, Gates: m.gates, Kinds: []CodeKind{}}
	if r.Gates == nil {
		r.Gates = []CodeGate{}
	}
	if len(m.fastPath) > 0 {
		r.FastPathAll, r.FastPathLine = m.fastPath, m.fastPathLine
	}
	r.Attention = m.attentionSupport()
	r.UseMambaKernels = m.mentions["use_mamba_kernels"]
	distinct := map[string]bool{}
	var order []string
	for _, k := range kinds {
		if !distinct[k] {
			distinct[k] = true
			order = append(order, k)
		}
	}
	sort.Strings(order)
	a := &analyzer{m: m, kinds: map[string]bool{}, aliases: map[string]kindCond{}, edges: map[string][]edge{}}
	for k := range distinct {
		a.kinds[NormalizeKind(k)] = true
	}
	for _, n := range m.order {
		a.readInit(m.classes[n])
	}
	packageGates := 0
	for _, g := range m.gates {
		if g.How != "hub-only" {
			packageGates++
		}
	}
	if packageGates == 0 {
		// Nothing in this file binds a kernel package: every layer runs
		// transformers' own code, whatever its kind.
		for _, k := range order {
			r.Kinds = append(r.Kinds, CodeKind{Kind: k, Functions: []string{}})
		}
		r.Judged = true
		return r
	}
	uses := a.gateUse()
	if len(uses) == 0 {
		r.Why = fmt.Sprintf("%s binds %d kernel functions but no class of it calls them", base, len(m.gates))
		return r
	}
	roots := m.roots()
	if len(roots) == 0 {
		r.Why = fmt.Sprintf("%s has no *Model class to start from", base)
		return r
	}
	if len(order) == 0 {
		r.Why = fmt.Sprintf("config.json lists no per-layer kinds, and %s binds kernel functions (%s) in %s", base, GateFunctions(m.gates), classList(uses))
		return r
	}
	gateBy := map[string]CodeGate{}
	for _, g := range m.gates {
		if _, ok := gateBy[g.Local]; !ok {
			gateBy[g.Local] = g
		}
	}
	reach := func(k string) map[string]bool {
		seen := map[string]bool{}
		var walk func(n string, depth int)
		walk = func(n string, depth int) {
			if seen[n] || depth > 64 {
				return
			}
			seen[n] = true
			for _, e := range a.edges[n] {
				ok := true
				for _, c := range e.conds {
					if !c.admits(k) {
						ok = false
						break
					}
				}
				if ok {
					walk(e.to, depth+1)
				}
			}
		}
		for _, root := range roots {
			walk(root, 0)
		}
		return seen
	}
	for _, k := range order {
		seen := reach(k)
		ck := CodeKind{Kind: k, Functions: []string{}}
		fns := map[string]bool{}
		var classes []string
		for n := range seen {
			if g := uses[n]; len(g) > 0 {
				classes = append(classes, fmt.Sprintf("%s (%s:%d)", n, base, m.classes[n].line))
				for local := range g {
					fns[gateBy[local].Function] = true
				}
			}
		}
		sort.Strings(classes)
		ck.Classes = classes
		for f := range fns {
			ck.Functions = append(ck.Functions, f)
		}
		sort.Strings(ck.Functions)
		for _, c := range a.found {
			switch {
			case len(ck.Dispatch) >= 4:
			case c.admits(k):
				ck.Dispatch = appendUnique(ck.Dispatch, fmt.Sprintf("%s:%d: %s", base, c.line, c.text))
			default:
				ck.Dispatch = appendUnique(ck.Dispatch, fmt.Sprintf("%s:%d: not (%s)", base, c.line, c.text))
			}
		}
		r.Kinds = append(r.Kinds, ck)
	}
	// Are the gate-using classes built for some kind at all (the config's,
	// any the code tests, or none of those)? If not, the static reading
	// lost the thread between the model and its layers.
	reachedAny := map[string]bool{}
	probes := append([]string{"\x00other"}, order...)
	for _, c := range a.found {
		for k := range c.set {
			probes = append(probes, k)
		}
	}
	for _, k := range probes {
		for n := range reach(k) {
			if len(uses[n]) > 0 {
				reachedAny[n] = true
			}
		}
	}
	if len(reachedAny) == 0 {
		r.Why = fmt.Sprintf("the classes calling kernel functions (%s) are not built by %s's model classes (%s), as far as a static reading sees", classList(uses), base, strings.Join(roots, ", "))
		return r
	}
	if len(order) > 1 && len(a.found) == 0 {
		r.Why = fmt.Sprintf("config.json has %d layer kinds (%s) but %s tests none of them where it builds its layers", len(order), strings.Join(order, ", "), base)
		return r
	}
	r.Judged = true
	return r
}

func appendUnique(l []string, s string) []string {
	for _, x := range l {
		if x == s {
			return l
		}
	}
	return append(l, s)
}

// GateFunctions lists the gates' functions once each, in order.
func GateFunctions(gs []CodeGate) string {
	seen := map[string]bool{}
	var out []string
	for _, g := range gs {
		if !seen[g.Function] {
			seen[g.Function] = true
			out = append(out, g.Function)
		}
	}
	return strings.Join(out, ", ")
}

func classList(uses map[string]map[string]bool) string {
	var out []string
	for n := range uses {
		out = append(out, n)
	}
	sort.Strings(out)
	return strings.Join(out, ", ")
}

// attentionSupport reads the PreTrainedModel class's _supports_flash_attn,
// _supports_sdpa, _supports_flex_attn (older spellings kept as written).
func (m *pyModule) attentionSupport() map[string]AttnFlag {
	out := map[string]AttnFlag{}
	for _, n := range m.order {
		if !strings.HasSuffix(n, "PreTrainedModel") {
			continue
		}
		for k, v := range m.flags[n] {
			out[k] = AttnFlag{Value: v.value, Where: fmt.Sprintf("%s.%s (%s:%d)", n, k, path.Base(m.path), v.line)}
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}
