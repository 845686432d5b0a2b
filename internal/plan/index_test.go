package plan

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestParseLinks: the anchors of PEP 503 pages as PyPI and find-links hosts
// write them (PyPI's: data-requires-python, a #sha256 fragment, <br />), and
// the HTML a browser reads the same way the old hand-rolled scanner did not.
func TestParseLinks(t *testing.T) {
	const page = "https://pypi.org/simple/causal-conv1d/"
	for _, tc := range []struct {
		name, body string
		want       []Link
	}{
		{
			name: "PyPI simple page",
			body: `<!DOCTYPE html>
<html>
  <head>
    <meta name="pypi:repository-version" content="1.4">
    <title>Links for causal-conv1d</title>
  </head>
  <body>
    <h1>Links for causal-conv1d</h1>
    <a href="https://files.pythonhosted.org/packages/ab/cd/causal_conv1d-1.5.0.post8.tar.gz#sha256=3c8a" data-requires-python="&gt;=3.9" >causal_conv1d-1.5.0.post8.tar.gz</a><br />
    <a href="../../packages/ef/01/causal_conv1d-1.6.0.tar.gz#sha256=9d1e" data-dist-info-metadata="sha256=00">causal_conv1d-1.6.0.tar.gz</a><br />
  </body>
</html>
<!--SERIAL 30000000-->`,
			want: []Link{
				{File: "causal_conv1d-1.5.0.post8.tar.gz", URL: "https://files.pythonhosted.org/packages/ab/cd/causal_conv1d-1.5.0.post8.tar.gz#sha256=3c8a", From: page},
				{File: "causal_conv1d-1.6.0.tar.gz", URL: "https://pypi.org/packages/ef/01/causal_conv1d-1.6.0.tar.gz#sha256=9d1e", From: page},
			},
		},
		{
			name: "find-links page: upper case, unquoted, entities, percent-encoding",
			body: `<A HREF=causal_conv1d-1.6.0%2Bcu12torch2.11cxx11abiTRUE-cp312-cp312-linux_x86_64.whl>w</A>
<a class=x href='a-1.0-py3-none-any.whl?x=1&amp;y=2'>a</a>`,
			want: []Link{
				{File: "causal_conv1d-1.6.0+cu12torch2.11cxx11abiTRUE-cp312-cp312-linux_x86_64.whl", URL: "https://pypi.org/simple/causal-conv1d/causal_conv1d-1.6.0%2Bcu12torch2.11cxx11abiTRUE-cp312-cp312-linux_x86_64.whl", From: page},
				{File: "a-1.0-py3-none-any.whl", URL: "https://pypi.org/simple/causal-conv1d/a-1.0-py3-none-any.whl?x=1&y=2", From: page},
			},
		},
		{
			name: "no file: comments, scripts, attribute text, anchors without href",
			body: `<!-- <a href="commented-1.0.tar.gz">x</a> -->
<script>document.write('<a href="scripted-1.0.tar.gz">')</script>
<p title="<a href=quoted-1.0.tar.gz>">t</p>
<a name="top">top</a><a href="">empty</a><a href="/dir/">dir</a><abbr href="abbr-1.0.tar.gz">no</abbr>`,
		},
		{name: "truncated tag", body: `<a href="cut-1.0.tar.gz"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, parseLinks([]byte(tc.body), page)); diff != "" {
				t.Errorf("links (-want +got):\n%s", diff)
			}
		})
	}
}
