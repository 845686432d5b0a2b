package pyenv

import (
	"testing"

	"github.com/fastpath-dev/fastpath/internal/facts"
)

// TestPipListJSONPython2Order: on Python 2.7.18, pip 19.2.3's `pip list
// --format=json` printed exactly this for a fresh pyenv 2.7.18 (dict key order
// of Python 2: version before name).
func TestPipListJSONPython2Order(t *testing.T) {
	env := &facts.PythonEnv{Version: "2.7.18", Distributions: []facts.Distribution{
		{Name: "setuptools", Version: "41.2.0", MetadataDir: "/x/setuptools-41.2.0.dist-info"},
		{Name: "pip", Version: "19.2.3", MetadataDir: "/x/pip-19.2.3.dist-info"},
	}}
	const want = `[{"version": "19.2.3", "name": "pip"}, {"version": "41.2.0", "name": "setuptools"}]`
	if got := string(PipListJSON(env)); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	env.Version = "3.12.3"
	if got := string(PipListJSON(env)); got != `[{"name": "pip", "version": "19.2.3"}, {"name": "setuptools", "version": "41.2.0"}]` {
		t.Errorf("Python 3: %s", got)
	}
}
