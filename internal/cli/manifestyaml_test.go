package cli

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fastpath-dev/fastpath/internal/testenv"
	sigsyaml "sigs.k8s.io/yaml"
)

// fuzzValue builds a JSON value from fuzz bytes: strings taken from data,
// nested in maps and lists, so that any string can land as a key, a map
// value or a list item, at any depth.
func fuzzValue(data []byte, strs []string, depth int) (any, []byte) {
	if len(data) == 0 {
		return "", data
	}
	op, data := data[0], data[1:]
	next := func() string {
		if len(strs) == 0 {
			return ""
		}
		s := strs[0]
		strs = strs[1:]
		return s
	}
	switch {
	case depth < 4 && op%5 == 0:
		m := map[string]any{}
		for range int(op>>5) + 1 {
			var v any
			v, data = fuzzValue(data, strs[min(len(strs), 1):], depth+1)
			m[next()] = v
		}
		return m, data
	case depth < 4 && op%5 == 1:
		var l []any
		for range int(op>>5) + 1 {
			var v any
			v, data = fuzzValue(data, strs[min(len(strs), 2):], depth+1)
			l = append(l, v)
		}
		return l, data
	case op%5 == 2:
		return float64(int(op) - 100), data
	case op%5 == 3:
		return op&8 != 0, data
	}
	return next(), data
}

// FuzzManifestYAML: whatever the strings (keys, values, several lines,
// control characters, YAML's indicators and special words), the YAML the
// manifest writer prints decodes with sigs.k8s.io/yaml, as kubectl decodes
// it, to exactly the value that was written.
func FuzzManifestYAML(f *testing.F) {
	for _, seed := range [][2]string{
		{"\x00\x01\x04", "key\x00value\x00- item"},
		{"\x05\x00", "while :; do\n  x\ndone\n\x00|+ \x00y"},
		{"\x00\x04\x04", "256Mi\x0010m\x001e3\x000x1F\x00-c\x00--format\x00no\x00~"},
		{"\x01\x01\x04", "a: b\x00 #c\x00\"'\x00\t\r\n\x00\u0085\u2028\ufeff"},
		{"\x00\x04", "\n\nlead\x00trail \n"},
	} {
		f.Add([]byte(seed[0]), seed[1])
	}
	f.Fuzz(func(t *testing.T, shape []byte, text string) {
		strs := bytes.Split([]byte(text), []byte{0})
		var ss []string
		for _, s := range strs {
			ss = append(ss, string(s))
		}
		v, _ := fuzzValue(shape, ss, 0)
		m, ok := v.(map[string]any)
		if !ok {
			m = map[string]any{"v": v}
		}
		want, err := json.Marshal(m)
		if err != nil {
			t.Skip(err)
		}
		// What the writer sees is what encoding/json decodes (invalid
		// UTF-8 already replaced).
		var decoded map[string]any
		if err := json.Unmarshal(want, &decoded); err != nil {
			t.Fatal(err)
		}
		y, err := manifestYAMLOf(decoded)
		if err != nil {
			if strings.Contains(err.Error(), "a key of") {
				return // longer than a YAML key may be: refused, not written wrong
			}
			t.Fatalf("%v", err)
		}
		got, err := sigsyaml.YAMLToJSON(y)
		if err != nil {
			t.Fatalf("not YAML: %v\n%s", err, y)
		}
		var a, b any
		json.Unmarshal(got, &a)
		json.Unmarshal(want, &b)
		ga, _ := json.Marshal(a)
		gb, _ := json.Marshal(b)
		if !bytes.Equal(ga, gb) {
			t.Fatalf("the YAML\n%s\ndecodes to\n%s\nnot\n%s", y, ga, gb)
		}
	})
}

// yamlTrickyWords are strings that YAML 1.1 or 1.2 readers may take for
// something else when written plain: booleans and nulls in any case,
// numbers in every base and form, dates, sexagesimals, indicators,
// comments, keys, blanks, line breaks and characters YAML cannot print.
var yamlTrickyWords = []string{
	"yes", "No", "ON", "off", "y", "n", "Y", "true", "False", "TRUE", "yES", "null", "Null", "NULL", "~", "",
	"1e3", "1E5", "0x1F", "0o17", "017", "0b101", "1_000", "1:20", "1:20:30", "-1", "+1", ".5", "5.", "0", "00", "0.", "1.0", "1.0.0",
	".inf", "-.inf", ".NaN", "inf", "nan", "NaN", "Infinity", "2001-12-14", "2001-12-14t21:59:43.10-05:00", "2002-12-14 21:59:43.10 -5",
	"256Mi", "10m", "90s", "1h", "12e", "0x", "1a", "9z", "e1", "E5", "v1", "apps/v1",
	"-c", "--format", "-", "- x", "a-b", "/x", "/y: z", "a: b", "a:", "a #b", "a#b", "#a", "<<", "=", "@at", "`x", "!tag", "&anchor", "*alias",
	"|", ">", "%x", "?", "? x", ",", "[a]", "{a}", "'q'", "\"q\"", "é", "ünï code", "a b", " a", "a ", "a\tb", "\tlead",
	"line1\nline2", "line1\nline2\n", "x\n\n", "\nlead", " lead\nx", "a \nb", "a\r\nb", "a\u0085b", "a\u2028b", "\ufeffbom", "\x00", "\x7f", "\x1b[0m",
	"Qwen/Qwen3.5-27B", "registry.example/train:1", "nvidia.com/gpu.present", "while :; do\n  x\ndone",
}

// TestManifestYAMLPythonReadersNetwork: 2,000 documents of tricky keys and
// values at several depths, written by the manifest writer, read back by
// PyYAML (YAML 1.1) and ruamel.yaml (YAML 1.2) from PyPI, must give exactly
// the values written: the writer's quoting holds for readers other than
// Go's too (a manifest may go through Python tools on its way to a
// cluster).
func TestManifestYAMLPythonReadersNetwork(t *testing.T) {
	dir := testenv.Wheels(t, "pyyaml==6.0.*", "ruamel.yaml==0.18.10")
	py := testenv.Python3(t)
	site := t.TempDir()
	testenv.Run(t, []string{"PIP_DISABLE_PIP_VERSION_CHECK=1"}, py, "-m", "pip", "install", "--quiet", "--no-index", "--no-deps",
		"--find-links", dir, "--target", site, "pyyaml==6.0.*", "ruamel.yaml==0.18.10")
	r := rand.New(rand.NewPCG(6, 1))
	word := func() string {
		w := yamlTrickyWords[r.IntN(len(yamlTrickyWords))]
		if r.IntN(3) == 0 {
			w += yamlTrickyWords[r.IntN(len(yamlTrickyWords))]
		}
		return w
	}
	var lines bytes.Buffer
	for range 2000 {
		m := map[string]any{}
		for range 4 {
			k, v := word(), word()
			switch r.IntN(4) {
			case 0:
				m[k] = v
			case 1:
				m[k] = []any{v, map[string]any{word(): v}, []any{v}}
			case 2:
				m[k] = map[string]any{"n": map[string]any{word(): v}}
			case 3:
				m[k] = []any{}
			}
		}
		// The writer gets what encoding/json decodes, as in manifestYAML.
		j, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		var decoded map[string]any
		if err := json.Unmarshal(j, &decoded); err != nil {
			t.Fatal(err)
		}
		y, err := manifestYAMLOf(decoded)
		if err != nil {
			t.Fatal(err)
		}
		line, err := json.Marshal(map[string]any{"json": json.RawMessage(j), "yaml": string(y)})
		if err != nil {
			t.Fatal(err)
		}
		lines.Write(line)
		lines.WriteByte('\n')
	}
	in := filepath.Join(t.TempDir(), "docs.jsonl")
	if err := os.WriteFile(in, lines.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(py, filepath.Join("testdata", "yaml_readers.py"), in)
	cmd.Env = append(os.Environ(), "PYTHONPATH="+site, "PYTHONNOUSERSITE=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if !strings.Contains(string(out), "2000 documents, 0 mismatches") {
		t.Fatalf("the readers did not read all 2,000 documents: %s", out)
	}
}
