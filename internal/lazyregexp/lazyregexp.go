// Package lazyregexp is a regular expression that is compiled on its first
// use instead of at program start.
//
// Every package-level regexp.MustCompile runs in the package's init, on
// every start of the binary, whatever the command: fastpath's came to
// about a millisecond of CPU per start (a counted repetition such as
// {0,95} compiles to 95 copies of its class). A Regexp declared with New
// costs nothing until a function that needs it runs. Its methods are
// regexp.Regexp's, so a declaration is the only line that changes.
package lazyregexp

import (
	"regexp"
	"sync"
)

// Regexp is a regexp.Regexp compiled on first use. Use New to make one; it
// is safe for concurrent use, like regexp.Regexp.
type Regexp struct {
	expr string
	once sync.Once
	re   *regexp.Regexp
}

var (
	allMu sync.Mutex
	all   []*Regexp
)

// New returns a Regexp for expr. expr must compile: it is a constant of
// the program, and a bad one panics on first use (CompileAll, called from a
// test of the binary, finds it without waiting for that use).
func New(expr string) *Regexp {
	r := &Regexp{expr: expr}
	allMu.Lock()
	all = append(all, r)
	allMu.Unlock()
	return r
}

// Regexp is the compiled expression.
func (r *Regexp) Regexp() *regexp.Regexp {
	r.once.Do(func() { r.re = regexp.MustCompile(r.expr) })
	return r.re
}

// CompileAll compiles every Regexp made with New so far and returns the
// expressions that do not compile (for tests).
func CompileAll() (bad []string) {
	allMu.Lock()
	defer allMu.Unlock()
	for _, r := range all {
		if _, err := regexp.Compile(r.expr); err != nil {
			bad = append(bad, r.expr+": "+err.Error())
		}
	}
	return bad
}

func (r *Regexp) String() string { return r.expr }

func (r *Regexp) Match(b []byte) bool        { return r.Regexp().Match(b) }
func (r *Regexp) MatchString(s string) bool  { return r.Regexp().MatchString(s) }
func (r *Regexp) Find(b []byte) []byte       { return r.Regexp().Find(b) }
func (r *Regexp) FindIndex(b []byte) []int   { return r.Regexp().FindIndex(b) }
func (r *Regexp) FindString(s string) string { return r.Regexp().FindString(s) }
func (r *Regexp) FindStringIndex(s string) []int {
	return r.Regexp().FindStringIndex(s)
}
func (r *Regexp) FindSubmatch(b []byte) [][]byte { return r.Regexp().FindSubmatch(b) }
func (r *Regexp) FindSubmatchIndex(b []byte) []int {
	return r.Regexp().FindSubmatchIndex(b)
}
func (r *Regexp) FindStringSubmatch(s string) []string {
	return r.Regexp().FindStringSubmatch(s)
}
func (r *Regexp) FindStringSubmatchIndex(s string) []int {
	return r.Regexp().FindStringSubmatchIndex(s)
}
func (r *Regexp) FindAll(b []byte, n int) [][]byte { return r.Regexp().FindAll(b, n) }
func (r *Regexp) FindAllIndex(b []byte, n int) [][]int {
	return r.Regexp().FindAllIndex(b, n)
}
func (r *Regexp) FindAllString(s string, n int) []string {
	return r.Regexp().FindAllString(s, n)
}
func (r *Regexp) FindAllStringIndex(s string, n int) [][]int {
	return r.Regexp().FindAllStringIndex(s, n)
}
func (r *Regexp) FindAllSubmatch(b []byte, n int) [][][]byte {
	return r.Regexp().FindAllSubmatch(b, n)
}
func (r *Regexp) FindAllStringSubmatch(s string, n int) [][]string {
	return r.Regexp().FindAllStringSubmatch(s, n)
}
func (r *Regexp) ReplaceAll(src, repl []byte) []byte { return r.Regexp().ReplaceAll(src, repl) }
func (r *Regexp) ReplaceAllString(src, repl string) string {
	return r.Regexp().ReplaceAllString(src, repl)
}
func (r *Regexp) ReplaceAllLiteralString(src, repl string) string {
	return r.Regexp().ReplaceAllLiteralString(src, repl)
}
func (r *Regexp) ReplaceAllFunc(src []byte, repl func([]byte) []byte) []byte {
	return r.Regexp().ReplaceAllFunc(src, repl)
}
func (r *Regexp) ReplaceAllStringFunc(src string, repl func(string) string) string {
	return r.Regexp().ReplaceAllStringFunc(src, repl)
}
func (r *Regexp) Split(s string, n int) []string { return r.Regexp().Split(s, n) }
func (r *Regexp) SubexpNames() []string          { return r.Regexp().SubexpNames() }
func (r *Regexp) SubexpIndex(name string) int    { return r.Regexp().SubexpIndex(name) }
func (r *Regexp) NumSubexp() int                 { return r.Regexp().NumSubexp() }
