package kb

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"sync"
)

//go:embed data/envvars.json
var envvarsJSON []byte

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

// EnvVars returns the parsed data/envvars.json (a build defect if it does
// not parse: the package's tests catch it).
func EnvVars() *EnvVarsData {
	envvarsOnce.Do(func() {
		if err := json.Unmarshal(envvarsJSON, &envvarsData); err != nil {
			panic(fmt.Sprintf("kb: data/envvars.json: %v", err))
		}
	})
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
