package source

import (
	"fmt"
	"os"
	"sort"
	"strings"
)

// Env is an environment to assume: the process's on the host, or the values
// given with --env for a root (a rootfs carries no environment of its own).
type Env map[string]string

// Get returns the value of key, or "".
func (e Env) Get(key string) string { return e[key] }

// Lookup returns the value of key and whether it is set.
func (e Env) Lookup(key string) (string, bool) {
	v, ok := e[key]
	return v, ok
}

// Clone returns a copy that may be changed freely.
func (e Env) Clone() Env {
	c := make(Env, len(e))
	for k, v := range e {
		c[k] = v
	}
	return c
}

// List returns the environment as sorted KEY=VALUE strings.
func (e Env) List() []string {
	out := make([]string, 0, len(e))
	for k, v := range e {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return out
}

// ParseEnv turns KEY=VALUE strings into an Env; later entries win.
func ParseEnv(kvs []string) (Env, error) {
	e := Env{}
	for _, kv := range kvs {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("--env %q: want KEY=VALUE", kv)
		}
		e[k] = v
	}
	return e, nil
}

// ProcessEnv is this process's environment with overrides applied on top.
func ProcessEnv(overrides Env) Env {
	e := Env{}
	for _, kv := range os.Environ() {
		if k, v, ok := strings.Cut(kv, "="); ok {
			e[k] = v
		}
	}
	for k, v := range overrides {
		e[k] = v
	}
	return e
}
