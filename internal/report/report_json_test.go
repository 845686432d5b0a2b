package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// TestJSONIndentsAsEncoder checks that JSON writes what a json.Encoder with
// SetIndent("", "  ") and SetEscapeHTML(false) writes, byte for byte: on
// values with every shape (empty and nested objects and arrays, strings
// with quotes, backslashes, brackets, commas, colons and escapes), and on
// the repository's committed JSON documents (the knowledge base, model
// configs, recorded live answers).
func TestJSONIndentsAsEncoder(t *testing.T) {
	values := []any{
		nil, 1, "x", []int{}, map[string]any{}, []any{[]any{}, map[string]any{}},
		map[string]any{"a\"b": `c\"d`, "e": []any{"[", "]", "{", "}", ",", ":", `\`, "\\\\\"", "<&>", "\u2028", "\x01"}},
		map[string]any{"x": map[string]any{"y": []any{1.5, true, false, nil, map[string]any{"z": []string{}}}}},
		struct {
			A []string          `json:"a"`
			B map[string]string `json:"b,omitempty"`
			C *int              `json:"c"`
		}{A: []string{"é", "日本"}},
	}
	var files []string
	for _, g := range []string{"../kb/data/*.json", "../model/testdata/device-configs/*.json", "../live/testdata/recorded/*.json"} {
		m, _ := filepath.Glob(g)
		files = append(files, m...)
	}
	if len(files) < 10 {
		t.Fatalf("found %d committed JSON documents, want the kb's, model's and live's", len(files))
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var v any
		if json.Unmarshal(b, &v) == nil {
			values = append(values, v)
		}
	}
	// The output is written a chunk at a time: cut it after every token,
	// and after every few, as well as in the usual chunks.
	defer func(n int) { indentChunk = n }(indentChunk)
	for _, chunk := range []int{indentChunk, 1, 7} {
		indentChunk = chunk
		for i, v := range values {
			var want bytes.Buffer
			enc := json.NewEncoder(&want)
			enc.SetIndent("", "  ")
			enc.SetEscapeHTML(false)
			if err := enc.Encode(v); err != nil {
				t.Fatal(err)
			}
			var got bytes.Buffer
			if err := JSON(&got, v); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got.Bytes(), want.Bytes()) {
				t.Errorf("chunks of %d bytes, value %d: got\n%s\nwant\n%s", chunk, i, got.Bytes(), want.Bytes())
			}
		}
	}
}

// FuzzIndentJSON: any JSON value, re-encoded, indents as json.Indent does.
func FuzzIndentJSON(f *testing.F) {
	for _, s := range []string{`{"a":[1,{"b":"c\"]"}],"d":{}}`, `[[],[{}],"\\"]`, `"x"`, `{"k":"v,:{}"}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var v any
		if json.Unmarshal([]byte(s), &v) != nil {
			return
		}
		var want bytes.Buffer
		enc := json.NewEncoder(&want)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		if err := enc.Encode(v); err != nil {
			return
		}
		var got bytes.Buffer
		if err := JSON(&got, v); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got.Bytes(), want.Bytes()) {
			t.Fatalf("got\n%s\nwant\n%s", got.Bytes(), want.Bytes())
		}
		// The same, written after every token.
		var cut bytes.Buffer
		if err := (indenter{&cut}).writeSegments([][]byte{compactOf(t, v)}, 1); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(cut.Bytes(), want.Bytes()) {
			t.Fatalf("written token by token: got\n%s\nwant\n%s", cut.Bytes(), want.Bytes())
		}
	})
}

// compactOf is what a json.Encoder without indent writes for v.
func compactOf(t testing.TB, v any) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// BenchmarkIndentJSON indents a doctor-sized document (FASTPATH_JSON=FILE,
// e.g. doctor --json of a scale tree; a generated one otherwise).
func BenchmarkIndentJSON(b *testing.B) {
	var v any
	if p := os.Getenv("FASTPATH_JSON"); p != "" {
		raw, err := os.ReadFile(p)
		if err != nil {
			b.Fatal(err)
		}
		if err := json.Unmarshal(raw, &v); err != nil {
			b.Fatal(err)
		}
	} else {
		var list []any
		for i := range 5000 {
			list = append(list, map[string]any{"name": fmt.Sprintf("pkg-%d", i), "version": "1.0", "requires": []string{"numpy>=1.26", `a "quoted" \ name`}})
		}
		v = map[string]any{"distributions": list}
	}
	src := compactOf(b, v)
	b.SetBytes(int64(len(src)))
	dst := make([]byte, 0, 2*len(src))
	for b.Loop() {
		dst = indentJSON(dst[:0], src)
	}
}
