package kb

import (
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/fastpath-dev/fastpath/internal/testenv"
)

// pypiFiles are the package types of every release of project on PyPI
// (its JSON API).
func pypiFiles(t *testing.T, project string) (latest, summary string, kinds map[string][]string) {
	t.Helper()
	c := &http.Client{Timeout: 60 * time.Second}
	resp, err := c.Get("https://pypi.org/pypi/" + project + "/json")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var d struct {
		Info struct {
			Version string `json:"version"`
			Summary string `json:"summary"`
		} `json:"info"`
		Releases map[string][]struct {
			PackageType string `json:"packagetype"`
		} `json:"releases"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 64<<20)).Decode(&d); err != nil {
		t.Fatal(err)
	}
	kinds = map[string][]string{}
	for v, fs := range d.Releases {
		for _, f := range fs {
			kinds[v] = append(kinds[v], f.PackageType)
		}
	}
	return d.Info.Version, d.Info.Summary, kinds
}

// TestWheelOnlyNetwork: every package builds.json wheel_only lists has no
// sdist in its latest PyPI release (nor in any release, where last_sdist
// is empty), the names of other projects (apex, nunchaku) still read as theirs (other_summary), and every
// package its source says has an sdist does.
func TestWheelOnlyNetwork(t *testing.T) {
	testenv.Network(t)
	wo := Builds().WheelOnly
	for name, p := range wo.Packages {
		t.Run(name, func(t *testing.T) {
			latest, summary, kinds := pypiFiles(t, name)
			if p.OtherProject {
				// PyPI's name is someone else's: its sdist is not this package.
				if strings.Contains(summary, "NVIDIA") || strings.Contains(summary, "PyTorch") || p.OtherSummary == "" || !strings.Contains(summary, p.OtherSummary) {
					t.Errorf("%s: PyPI's project now reads %q", name, summary)
				}
				return
			}
			for _, k := range kinds[latest] {
				if k == "sdist" {
					t.Errorf("%s %s has an sdist on PyPI now: it is not wheel-only", name, latest)
				}
			}
			if p.LastSdist == "" {
				for v, ks := range kinds {
					for _, k := range ks {
						if k == "sdist" {
							t.Errorf("%s %s has an sdist, but the kb says it never had one", name, v)
						}
					}
				}
			}
		})
	}
	// The packages the source names as checked and having an sdist.
	has := regexp.MustCompile(`([a-z0-9-]+) (\d[\w.]*)`).FindAllStringSubmatch(wo.Source[strings.Index(wo.Source, "not listed"):], -1)
	if len(has) < 5 {
		t.Fatalf("the source names too few packages with an sdist: %v", has)
	}
	for _, m := range has {
		_, _, kinds := pypiFiles(t, m[1])
		ok := false
		for _, k := range kinds[m[2]] {
			ok = ok || k == "sdist"
		}
		if !ok {
			t.Errorf("%s %s: the kb says it has an sdist, PyPI lists %v", m[1], m[2], kinds[m[2]])
		}
	}
}
