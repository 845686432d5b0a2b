package modelread

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"path/filepath"
	"strings"

	"github.com/fastpath-dev/fastpath/internal/lazyregexp"
	"github.com/fastpath-dev/fastpath/internal/source"
)

// Located is a config.json found for a command-line argument.
type Located struct {
	Arg  string `json:"arg"`
	Path string `json:"path"`
	// Via says how: "file", "directory", "hf-cache" (with the cache folder).
	Via  string `json:"via"`
	Data []byte `json:"-"`
	// Searched lists the Hugging Face cache folders looked at for ORG/NAME.
	Searched []string `json:"searched,omitempty"`
}

// repoID is a Hub model id, ORG/NAME (huggingface_hub's REPO_ID_REGEX, with
// the namespace required).
var repoID = lazyregexp.New(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,95}/[A-Za-z0-9][A-Za-z0-9_.-]{0,95}$`)

// Locate finds the config.json an argument names: a config file, a model
// folder holding config.json, or ORG/NAME in the local Hugging Face cache of
// the source ($HF_HUB_CACHE, $HF_HOME/hub, ~/.cache/huggingface/hub); never
// the network. Absolute paths are read inside src (so --root works) and,
// under a root or image, only there; on the host a path that is not there,
// and every relative path, is read from this machine's filesystem (a config
// file the user holds).
func Locate(src source.Source, arg string) (*Located, error) {
	if arg == "" {
		return nil, errors.New("empty model argument")
	}
	if strings.HasPrefix(arg, "/") && src != nil {
		l, err := locateIn(src, arg)
		if err == nil {
			return l, nil
		}
		// Under --root or --image an absolute path names a file of that
		// tree only: falling back to this machine's file of the same name
		// would show the host's content as the image's (F10).
		if src.Info().Kind != source.KindHost || !errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%s (in %s): %w", arg, src.Info().Kind, err)
		}
	}
	local := localFS(arg)
	if l, err := locateIn(local, "/"+strings.TrimPrefix(filepath.ToSlash(mustAbs(arg)), "/")); err == nil {
		l.Arg = arg
		return l, nil
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	if repoID.MatchString(arg) && !strings.Contains(arg, "..") {
		return locateHub(src, arg)
	}
	return nil, fmt.Errorf("%s: no such config file or model folder, and not an ORG/NAME model id", arg)
}

func mustAbs(p string) string {
	a, err := filepath.Abs(p)
	if err != nil {
		return p
	}
	return a
}

// localFS is this machine's filesystem as a Source, for config paths the
// user gives; nil when it cannot be opened.
func localFS(string) source.Source {
	s, err := source.Root("/", source.Env{})
	if err != nil {
		return nil
	}
	return s
}

func locateIn(src source.Source, p string) (*Located, error) {
	if src == nil {
		return nil, fs.ErrNotExist
	}
	fi, err := src.Stat(p)
	if err != nil {
		return nil, err
	}
	via := "file"
	if fi.IsDir() {
		p, via = path.Join(p, "config.json"), "directory"
	}
	b, err := source.ReadFile(src, p, MaxConfigBytes)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%s: no config.json in this folder", path.Dir(p))
		}
		return nil, fmt.Errorf("%s: %w", p, err)
	}
	return &Located{Arg: p, Path: p, Via: via, Data: b}, nil
}

// HubCaches are the Hugging Face hub cache folders of a source's
// environment, in huggingface_hub's order of precedence.
func HubCaches(env source.Env) []string {
	var out []string
	if v := env.Get("HF_HUB_CACHE"); strings.HasPrefix(v, "/") {
		out = append(out, v)
	}
	if v := env.Get("HUGGINGFACE_HUB_CACHE"); strings.HasPrefix(v, "/") {
		out = append(out, v)
	}
	if v := env.Get("HF_HOME"); strings.HasPrefix(v, "/") {
		out = append(out, path.Join(v, "hub"))
	}
	if v := env.Get("XDG_CACHE_HOME"); strings.HasPrefix(v, "/") {
		out = append(out, path.Join(v, "huggingface", "hub"))
	}
	home := env.Get("HOME")
	if !strings.HasPrefix(home, "/") {
		home = "/root"
	}
	out = append(out, path.Join(home, ".cache", "huggingface", "hub"))
	seen := map[string]bool{}
	var uniq []string
	for _, c := range out {
		if !seen[c] {
			seen[c] = true
			uniq = append(uniq, c)
		}
	}
	return uniq
}

// locateHub finds ORG/NAME's config.json in a snapshot of the cache: the
// one refs/main names first, else the newest-named snapshot holding one.
func locateHub(src source.Source, id string) (*Located, error) {
	if src == nil {
		return nil, fmt.Errorf("%s: no source to look for the Hugging Face cache in", id)
	}
	org, name, _ := strings.Cut(id, "/")
	var searched []string
	for _, cache := range HubCaches(src.Env()) {
		repo := path.Join(cache, "models--"+org+"--"+name)
		searched = append(searched, repo)
		var candidates []string
		if ref, err := source.ReadFile(src, path.Join(repo, "refs", "main"), 256); err == nil {
			if c := strings.TrimSpace(string(ref)); c != "" && !strings.ContainsAny(c, "/\\") && c != ".." && c != "." {
				candidates = append(candidates, path.Join(repo, "snapshots", c, "config.json"))
			}
		}
		snaps := source.Glob(src, path.Join(repo, "snapshots", "*", "config.json"))
		for i := len(snaps) - 1; i >= 0; i-- {
			candidates = append(candidates, snaps[i])
		}
		for _, p := range candidates {
			b, err := source.ReadFile(src, p, MaxConfigBytes)
			if err != nil {
				if errors.Is(err, fs.ErrNotExist) {
					continue
				}
				return nil, fmt.Errorf("%s: %w", p, err)
			}
			return &Located{Arg: id, Path: p, Via: "hf-cache " + cache, Data: b, Searched: searched}, nil
		}
	}
	return nil, fmt.Errorf("%s: not in the local Hugging Face cache (looked in %s); fastpath never downloads: pass a config.json or model folder, or run `hf download %s config.json` first",
		id, strings.Join(searched, ", "), id)
}

// Load locates and parses one model argument.
func Load(src source.Source, arg string) (*Located, *Config, error) {
	l, err := Locate(src, arg)
	if err != nil {
		return nil, nil, err
	}
	c, err := ParseConfig(l.Data)
	if err != nil {
		return l, nil, fmt.Errorf("%s: %w", l.Path, err)
	}
	return l, c, nil
}
