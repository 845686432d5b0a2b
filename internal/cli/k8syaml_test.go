package cli

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	sigsyaml "sigs.k8s.io/yaml"
)

// compareYAML checks jsonYAML against sigs.k8s.io/yaml (the oracle) on v:
// the same bytes, or both refusing; and that the output decodes back to
// the value sigs.k8s.io/yaml's does.
func compareYAML(t *testing.T, v any) {
	t.Helper()
	want, werr := sigsyaml.Marshal(v)
	got, gerr := jsonYAML(v)
	if (werr == nil) != (gerr == nil) {
		t.Fatalf("%#v: ours %v, sigs.k8s.io/yaml %v\nours:\n%s\ntheirs:\n%s", v, gerr, werr, got, want)
	}
	if werr != nil {
		return
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%#v:\nours:\n%q\nsigs.k8s.io/yaml:\n%q", v, got, want)
	}
	var back, ref any
	j, _ := json.Marshal(v)
	if err := sigsyaml.Unmarshal(got, &back); err != nil {
		if hasMergeKey(v) {
			return // a "<<" key is YAML 1.1's merge key: sigs.k8s.io/yaml cannot read back what it writes either
		}
		t.Fatalf("%q does not decode: %v", got, err)
	}
	if err := json.Unmarshal(j, &ref); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(j), "\u0085") && !reflect.DeepEqual(back, ref) {
		t.Fatalf("%q decodes to %#v, want %#v", got, back, ref)
	}
}

// hasMergeKey reports whether an object in v has the key "<<".
func hasMergeKey(v any) bool {
	switch x := v.(type) {
	case map[string]any:
		for k, c := range x {
			if k == "<<" || hasMergeKey(c) {
				return true
			}
		}
	case []any:
		for _, c := range x {
			if hasMergeKey(c) {
				return true
			}
		}
	}
	return false
}

// TestJSONYAMLGoldens: the k8s goldens' objects (testdata/k8s/*.json,
// written by the API types) print byte for byte as sigs.k8s.io/yaml prints
// them, and as the .yaml goldens hold.
func TestJSONYAMLGoldens(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("testdata", "k8s", "*.json"))
	if len(files) < 5 {
		t.Fatalf("goldens: %q", files)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		dec := json.NewDecoder(bytes.NewReader(b))
		n := 0
		for dec.More() {
			var v any
			if err := dec.Decode(&v); err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			walkObjects(v, func(m map[string]any) { compareYAML(t, m); n++ })
		}
		if n == 0 {
			t.Errorf("%s: no objects", f)
		}
	}
}

// walkObjects calls fn on v if it is an object, else on each object of a
// list (a golden may hold one object or a List of them).
func walkObjects(v any, fn func(map[string]any)) {
	switch x := v.(type) {
	case map[string]any:
		fn(x)
		if items, ok := x["items"].([]any); ok {
			for _, it := range items {
				walkObjects(it, fn)
			}
		}
	case []any:
		for _, it := range x {
			walkObjects(it, fn)
		}
	}
}

// TestJSONYAMLCorners: YAML 1.1's look-alikes, quoting, folding, block
// scalars, keys, numbers.
func TestJSONYAMLCorners(t *testing.T) {
	long := strings.Repeat("word ", 40)
	strs := []string{
		"", " ", "a", "yes", "No", "on", "OFF", "y", "n", "~", "null", "NULL", "true", "1", "-1", "+1", "1.5", ".5", "1e3", "1E+3",
		"0x1F", "0o17", "017", "0b101", "-0b101", "1_000", "1:20", "1:20:30.5", "-1:2", "2024-01-02", "2024-1-2T3:4:5Z", "2024-01-02 03:04:05",
		".inf", "-.Inf", ".nan", "<<", "=", "a: b", "a:b", "a #b", "a#b", "#a", "- a", "-a", "? a", "?a", ": a", ":a", "[a]", "{a}", "a,b",
		"&a", "*a", "!a", "|a", ">a", "'a", "\"a", "%a", "@a", "`a", "---", "--- a", "...", "a ", " a", "a  b", "a\tb", "\ta",
		"a\nb", "a\n", "a\n\n", "\n", "\na", " a\nb", "a \nb", "a\n b", "a\r\nb", "a\rb", "a\\b", "a'b", "'", "é", "€", "😀", "a\u00a0b",
		"\ufeffab", "a\ufeffb", "a\u2028b", "a\u2029", "a\u0085b", "a \u0085\u0085 b", "a\u0085--- b", "\x00", "a\x01b", "\x1b", "a\x7fb", "\u0080", "\uffff",
		long, long + "\n" + long, "x" + long, strings.Repeat("x", 100) + " " + strings.Repeat("y", 100), "'" + long, "\"" + long + "\\", long + "\x01" + long,
		strings.Repeat("é ", 60), "a" + strings.Repeat(" ", 90) + "b", "\xff", "a\xc3",
	}
	for _, s := range strs {
		compareYAML(t, map[string]any{"k": s})
		compareYAML(t, map[string]any{"list": []any{s, []any{s}, map[string]any{"k": s}}})
		if len(s) < 300 {
			compareYAML(t, map[string]any{s: "v", "z": map[string]any{s: []any{s}}})
		}
	}
	for _, f := range []any{0.0, math.Copysign(0, -1), 1.0, -1.0, 1.5, 1e20, 1e21, 1.5e300, 1e-7, 0.000001, 123456789012345678.0, 9.3e18, 1.8e19, 2e19, json.Number("1.0"), json.Number("10000000000000000000"), json.Number("-5")} {
		compareYAML(t, map[string]any{"n": f, "l": []any{f}})
	}
	compareYAML(t, map[string]any{"a10": 1.0, "a9": 2.0, "a09": 3.0, "a010": 4.0, "B": true, "b": false, "_": nil, "1": 1.0, "10": 1.0, "2": 1.0, "é": 1.0, "z0": 1.0, "z": 1.0, "": 1.0})
	compareYAML(t, map[string]any{"empty": map[string]any{}, "none": []any{}, "deep": []any{[]any{[]any{}}, map[string]any{"a": map[string]any{}}}, "m": []any{map[string]any{"a": 1.0, "b": []any{1.0, 2.0}}}})
	compareYAML(t, map[string]any{})
}

// FuzzJSONYAML: on any strings and numbers, in keys, values, lists and
// nested objects, the bytes are sigs.k8s.io/yaml's (or both refuse).
func FuzzJSONYAML(f *testing.F) {
	f.Add("a", "b", 1.0, `{"x": [1, "y", null]}`)
	f.Add("yes", "0x1F", 1e21, `"a\nb"`)
	f.Add("a: b", " #c", -0.5, `[]`)
	f.Add("line1\nline2\n\n", "é\u2028", 3.0, `{"": {}}`)
	f.Fuzz(func(t *testing.T, s1, s2 string, n float64, js string) {
		if n != n || n > 1e308 || n < -1e308 {
			return // not a JSON number
		}
		key := func(s string) string {
			if len(s) > 300 {
				return s[:300] // YAML drops simple keys past 1,024 bytes
			}
			return s
		}
		v := map[string]any{
			"a":     s1,
			key(s2): []any{s1, n, map[string]any{key(s1): s2}, true, nil, []any{}, map[string]any{}},
			"n":     map[string]any{"list": []any{s2, []any{s1}}},
		}
		var x any
		if json.Unmarshal([]byte(js), &x) == nil {
			v["json"] = x
		}
		compareYAML(t, v)
	})
}
