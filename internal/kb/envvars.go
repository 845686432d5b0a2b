package kb

import "sync"

// EnvVarsData is data/envvars.json: the environment variables fastpath
// records, by exact name or by prefix, each group with where it is read.
type EnvVarsData struct {
	Source string `json:"source"`
	Groups []struct {
		Names  []string `json:"names"`
		Source string   `json:"source"`
	} `json:"groups"`
	Prefixes struct {
		Names  []string `json:"names"`
		Source string   `json:"source"`
	} `json:"prefixes"`
}

var (
	envvarsOnce sync.Once
	envvarsData EnvVarsData
)

// EnvVars returns data/envvars.json (generated into tables_gen.go).
func EnvVars() *EnvVarsData {
	envvarsOnce.Do(func() { envvarsData = envvarsTable() })
	return &envvarsData
}

// Names are the variables recorded by exact name.
func (d *EnvVarsData) Names() []string {
	var out []string
	for _, g := range d.Groups {
		out = append(out, g.Names...)
	}
	return out
}
