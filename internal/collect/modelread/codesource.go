package modelread

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strings"

	"github.com/fastpath-dev/fastpath/internal/collect/toolchain/sitedist"
	"github.com/fastpath-dev/fastpath/internal/facts"
	"github.com/fastpath-dev/fastpath/internal/source"
)

// TransformersCode reads an installed transformers package's Python source
// through a Source (so --root and --image work): the model_type -> module
// table and each family's modeling and modular files. Nothing is imported.
type TransformersCode struct {
	src source.Source
	// Dir is the package folder (…/site-packages/transformers).
	Dir     string
	Version string
	special map[string]string
}

// NewTransformersCode looks at the transformers package in location (a
// sys.path entry). It fails when the package has no models folder.
func NewTransformersCode(src source.Source, location, version string) (*TransformersCode, error) {
	dir := path.Join(location, "transformers")
	if fi, err := src.Stat(path.Join(dir, "models")); err != nil || !fi.IsDir() {
		return nil, fmt.Errorf("%s: no models folder (transformers' source is not there)", dir)
	}
	t := &TransformersCode{src: src, Dir: dir, Version: version, special: map[string]string{}}
	// SPECIAL_MODEL_TYPE_TO_MODULE_NAME lives in configuration_auto.py
	// (4.x) and auto_mappings.py (later 5.x), which configuration_auto
	// updates.
	for _, f := range []string{"auto_mappings.py", "configuration_auto.py"} {
		b, err := source.ReadFile(src, path.Join(dir, "models", "auto", f), maxPySource)
		if err != nil {
			continue
		}
		lines, err := tokenizePython(b)
		if err != nil {
			continue
		}
		for i := range lines {
			l := &lines[i]
			if l.indent != 0 || !l.is(0, pyName, "SPECIAL_MODEL_TYPE_TO_MODULE_NAME") {
				continue
			}
			var strs []string
			for _, tk := range l.toks {
				if tk.kind == pyString {
					strs = append(strs, tk.text)
				}
			}
			for k := 0; k+1 < len(strs); k += 2 {
				t.special[strs[k]] = strs[k+1]
			}
		}
	}
	return t, nil
}

// ModuleName is transformers' model_type_to_module_name.
func (t *TransformersCode) ModuleName(modelType string) string {
	if m, ok := t.special[modelType]; ok {
		return m
	}
	return strings.ReplaceAll(modelType, "-", "_")
}

// ErrNoModelingFile: the model type has no modeling file in this
// transformers (a remote-code model, or a release that predates it).
var ErrNoModelingFile = errors.New("no modeling file")

// Read scans the modeling file of modelType, and its modular file where one
// exists, and ties kinds to the code.
func (t *TransformersCode) Read(modelType string, kinds []string) (*CodeReading, error) {
	mod := t.ModuleName(modelType)
	if strings.ContainsAny(mod, "/\\") || mod == "" || mod == "." || mod == ".." {
		return nil, fmt.Errorf("model_type %q: not a module name", modelType)
	}
	var file string
	var b []byte
	for _, d := range []string{path.Join(t.Dir, "models", mod), path.Join(t.Dir, "models", "deprecated", mod)} {
		p := path.Join(d, "modeling_"+mod+".py")
		data, err := source.ReadFile(t.src, p, maxPySource)
		if err == nil {
			file, b = p, data
			break
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
	}
	if file == "" {
		return nil, fmt.Errorf("%w: transformers %s has no models/%s/modeling_%s.py", ErrNoModelingFile, t.Version, mod, mod)
	}
	m, err := scanModule(file, b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	r := readCode(m, kinds)
	modular := path.Join(path.Dir(file), "modular_"+mod+".py")
	if mb, err := source.ReadFile(t.src, modular, maxPySource); err == nil {
		r.Modular = modular
		if mm, err := scanModule(modular, mb); err == nil && len(mm.gates) > 0 {
			seen := map[string]bool{}
			for _, g := range mm.gates {
				if !seen[g.Function] {
					seen[g.Function] = true
					r.ModularFunctions = append(r.ModularFunctions, g.Function)
				}
			}
		}
	}
	return r, nil
}

// TransformersFor finds the selected environment's transformers in the
// facts and opens its source through src; nil and why not when it cannot.
func TransformersFor(src source.Source, f *facts.Facts) (*TransformersCode, string) {
	if src == nil || f == nil || f.Python.Selected == nil {
		return nil, "no Python environment was found, so no transformers source to read"
	}
	for _, d := range f.Python.Selected.Distributions {
		if sitedist.Normalize(d.Name) != "transformers" || d.Shadowed {
			continue
		}
		// An editable install (pip install -e) keeps the package in its
		// project folder, usually under src/.
		var err error
		for _, loc := range []string{d.Location, d.EditableLocation, path.Join(d.EditableLocation, "src")} {
			if loc == "" || loc == "src" {
				continue
			}
			var t *TransformersCode
			if t, err = NewTransformersCode(src, loc, d.Version); err == nil {
				return t, ""
			}
		}
		return nil, "transformers " + d.Version + " is installed but its source cannot be read: " + err.Error()
	}
	return nil, "transformers is not installed in the selected environment, so there is no modeling file to read"
}

// ReadCode reads the modeling code of c's model type through tc, for
// internal/model to judge. It returns nil and why not when tc is nil
// (noCode says why) or the code cannot be read.
func ReadCode(tc *TransformersCode, c *Config, noCode string) (*CodeReading, string) {
	if tc == nil {
		return nil, noCode
	}
	code, err := tc.Read(c.CodeModelType(), c.Kinds)
	if err != nil {
		return nil, err.Error()
	}
	return code, noCode
}

// CodeModelType is the model_type whose modeling file builds c's layers:
// the family it is judged as, else the nested language model's (a wrapper's
// own modeling file builds that one), else its own. No other file is tried:
// a wrapper's file binds no kernels and would pass for a fast model.
func (c *Config) CodeModelType() string {
	for _, mt := range []string{c.Family, c.TextModelType} {
		if mt != "" {
			return mt
		}
	}
	return c.ModelType
}
