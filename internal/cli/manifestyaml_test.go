package cli

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

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
