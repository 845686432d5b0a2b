package plan

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/net/html"
)

// xnetHrefs is the oracle: the hrefs golang.org/x/net/html's tokenizer
// gives for the <a> start tags of body (what parseLinks read before
// anchorHrefs replaced it in the binary).
func xnetHrefs(body []byte) []string {
	var out []string
	z := html.NewTokenizer(bytes.NewReader(body))
	for {
		switch z.Next() {
		case html.ErrorToken:
			return out
		case html.StartTagToken, html.SelfClosingTagToken:
		default:
			continue
		}
		name, hasAttr := z.TagName()
		if string(name) != "a" || !hasAttr {
			continue
		}
		for more := true; more; {
			var key, val []byte
			key, val, more = z.TagAttr()
			if string(key) == "href" {
				if len(val) > 0 {
					out = append(out, string(val))
				}
				break
			}
		}
	}
}

// otherNamedRef reports whether body holds a named character reference
// that anchorHrefs leaves as written and x/net decodes (the accepted
// divergence, anchors.go).
func otherNamedRef(body []byte) bool {
	for i := bytes.IndexByte(body, '&'); i >= 0; {
		j := i + 1
		for j < len(body) && (isASCIILetter(body[j]) || '0' <= body[j] && body[j] <= '9') {
			j++
		}
		name := string(body[i+1 : j])
		switch name {
		case "", "amp", "AMP", "lt", "LT", "gt", "GT", "quot", "QUOT", "apos":
		default:
			if ref := "&" + name + ";"; html.UnescapeString(ref) != ref {
				return true
			}
		}
		k := bytes.IndexByte(body[j:], '&')
		if k < 0 {
			break
		}
		i = j + k
	}
	return false
}

// TestAnchorHrefsRealPages: PyPI's project pages (testdata/pages/SOURCES)
// give the same hrefs as x/net's tokenizer, and all of their files.
func TestAnchorHrefsRealPages(t *testing.T) {
	pages, _ := filepath.Glob(filepath.Join("testdata", "pages", "*.html"))
	if len(pages) < 4 {
		t.Fatalf("real pages: %q", pages)
	}
	for _, p := range pages {
		body, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		got, want := anchorHrefs(body), xnetHrefs(body)
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s: hrefs (-x/net +ours):\n%s", p, diff)
		}
		if n := bytes.Count(body, []byte("<a ")); len(got) != n || n < 10 {
			t.Errorf("%s: %d hrefs for %d anchors", p, len(got), n)
		}
	}
}

// TestAnchorHrefsMatchTokenizer: the corners of the HTML5 tokenizer that
// decide what is an anchor, against x/net.
func TestAnchorHrefsMatchTokenizer(t *testing.T) {
	cases := []string{
		`<a href="x.whl">`, `<A HREF=X.whl>`, `<a  href = 'y.whl' >`, `<a href=z.whl/>`, `<a/href=q.whl>`,
		`<a href="a&amp;b&lt;&gt;&quot;&apos;&AMP;&amp&lt&ampx&amp=1&#65;&#x42;&#X43&#128;&#0;&#xD800;&#1114112;&#;&#x;&">`,
		`<a href="a&copy;b">`, `<a href="&#13;&#10;">`, "<a href=\"a\r\nb\rc\x00d\">",
		`<a title=">" href="after-gt.whl">`, `<a href="first.whl" HREF="second.whl">`, `<a =x href=eq.whl>`, `<a href>`,
		`<a x="unterminated href="no.whl">`, `<a href='unterminated`, `<a href=x.whl`, `<a`,
		`<!-- <a href="c1"> -->`, `<!--> <a href="after-empty-comment">`, `<!---> <a href="after-dash-comment">`,
		`<!-- --!> <a href="after-bang-close">`, `<!-- --!x <a href="in-comment"> -->`, `<!-- --!- <a href="in-comment2"> -->`,
		`<!DOCTYPE html><a href="after-doctype">`, `<!x <a href="in-bogus">> <a href="after-bogus">`, `<? <a href="pi"> ?><a href="after-pi">`,
		`</ <a href="in-bogus-end">> <a href="after">`, `</> <a href="after-empty-end">`, `</x title=">"><a href="after-end-attr">`,
		`<script><a href="s1"></script><a href="after-script">`, `<SCRIPT>x</SCRIPT ><a href="after-upper-script">`,
		`<script><!--<script></script><a href="double-escaped"></script>--></script><a href="after-double">`,
		`<script><!-- <a href="escaped"> --></script><a href="after-escaped">`, `<script></scriptx><a href="still-script"></script>`,
		`<script><!--x--><a href="s2"></script><a href="s3">`, `<script><!--<scripty><a href="e1"></script><a href="e2">`,
		`<style><a href="st"></style><a href="after-style">`, `<title><a href="ti"></title ><a href="after-title">`,
		`<textarea><a href="ta"></textarea/><a href="after-textarea">`, `<xmp><a href="x"></xmp><a href="after-xmp">`,
		`<noscript><a href="ns"></noscript><a href="after-noscript">`, `<iframe><a href="if"></iframe><a href="after-iframe">`,
		`<plaintext><a href="never">`, `<scripts><a href="not-raw">`, `<style/><a href="self-closed-style"></style><a href="after">`,
		`<abbr href="abbr.tar.gz"><a name=x><a href="">`, `<<a href="double-lt">`, `<1<a href="digit">`, `<a href=">"><a href="ok">`,
		`<a href="x" <a href="y">`, `<a	href=tab.whl>`, "<a\fhref=ff.whl>", `<a href=" spaced.whl ">`,
	}
	for _, c := range cases {
		if got, want := anchorHrefs([]byte(c)), xnetHrefs([]byte(c)); !slices.Equal(got, want) {
			if otherNamedRef([]byte(c)) {
				continue
			}
			t.Errorf("%q: ours %q, x/net %q", c, got, want)
		}
	}
	// the accepted divergence, shown: &copy; stays as written
	if got := anchorHrefs([]byte(`<a href="a&copy;b">`)); !slices.Equal(got, []string{"a&copy;b"}) {
		t.Errorf("&copy;: %q", got)
	}
}

// FuzzAnchorHrefs: on any input, the hrefs are x/net tokenizer's (pages
// with named references other than anchorHrefs's few are skipped).
func FuzzAnchorHrefs(f *testing.F) {
	f.Add([]byte(`<a href="../../files/x-1.0-py3-none-any.whl#sha256=aa">x</a>`))
	f.Add([]byte(`<script><!--<script></script><a href="d"></script>--></script><a href="e">`))
	f.Add([]byte(`<!-- --!> <a href=b><title>x</title><A HREF='c&amp;d'>`))
	f.Add([]byte(`<a x="y" href=z =w href=v>`))
	f.Fuzz(func(t *testing.T, b []byte) {
		got := anchorHrefs(b)
		if otherNamedRef(b) {
			return
		}
		if want := xnetHrefs(b); !slices.Equal(got, want) {
			t.Fatalf("%q: ours %q, x/net %q", b, got, want)
		}
		if slices.Contains(got, "") {
			t.Fatalf("an empty href from %q", b)
		}
	})
}
