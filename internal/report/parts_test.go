package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/fastpath-dev/fastpath/internal/facts"
	"github.com/fastpath-dev/fastpath/internal/finding"
)

// A doctor report encoded in parts is the report encoded whole, byte for
// byte: lists of every length around the piece size, with strings that
// need escaping (HTML characters are kept, as the Encoder keeps them),
// and a distribution named like a placeholder.
func TestDoctorPartsAsEncoder(t *testing.T) {
	defer func(n int) { partsMin = n }(partsMin)
	partsMin = 2
	for _, n := range []int{1, 2, partSize - 1, partSize, partSize + 1, 2*partSize + 3} {
		f := &facts.Facts{Schema: "s", Python: facts.Python{Selected: &facts.PythonEnv{Kind: "venv", NumDists: n},
			Others: []facts.PythonEnv{{Kind: "system", Distributions: []facts.Distribution{{Name: "other"}}}}},
			Warnings: []string{"<&> \"quoted\" \u2028"}}
		for i := range n {
			f.Python.Selected.Distributions = append(f.Python.Selected.Distributions, facts.Distribution{
				Name: fmt.Sprintf("pkg-%d<&>", i), Version: "1.0+é", Requires: []string{"a>=1", "\x00fastpath-part-"}})
			f.Extensions = append(f.Extensions, facts.Extension{Dist: fmt.Sprintf("pkg-%d", i), Path: fmt.Sprintf("/x/\"%d\".so", i),
				Needed: []string{"libc10.so"}, SASS: []string{"sm_90"}, TargetSets: [][]string{{"sm_90"}, {}}})
		}
		d := Doctor{Schema: "s", Facts: f, Findings: []finding.Finding{{ID: "x", Title: "a<b"}}}
		if _, ok := doctorParts(d); !ok {
			t.Fatalf("%d: not encoded in parts", n)
		}
		var want bytes.Buffer
		enc := json.NewEncoder(&want)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		if err := enc.Encode(d); err != nil {
			t.Fatal(err)
		}
		for _, chunk := range []int{256 << 10, 1, 7} {
			var got bytes.Buffer
			if err := (indenter{&got}).writeSegments(must(doctorParts(d)), chunk); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got.Bytes(), want.Bytes()) {
				t.Errorf("%d distributions and extensions, writes of %d bytes: the report in parts differs from the whole", n, chunk)
			}
		}
		var got bytes.Buffer
		if err := JSON(&got, d); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got.Bytes(), want.Bytes()) {
			t.Errorf("%d distributions and extensions: JSON differs from the whole", n)
		}
	}
}

func must(segs [][]byte, ok bool) [][]byte {
	if !ok {
		panic("not encoded in parts")
	}
	return segs
}

// Small reports, and reports without a selected environment or without
// extensions, are encoded whole.
func TestDoctorPartsOnlyWhenBig(t *testing.T) {
	f := &facts.Facts{Python: facts.Python{Selected: &facts.PythonEnv{Distributions: make([]facts.Distribution, 10)}}, Extensions: make([]facts.Extension, 10)}
	if _, ok := doctorParts(Doctor{Facts: f}); ok {
		t.Error("20 list elements encoded in parts")
	}
	for _, f := range []*facts.Facts{nil, {Extensions: make([]facts.Extension, partsMin)},
		{Python: facts.Python{Selected: &facts.PythonEnv{Distributions: make([]facts.Distribution, partsMin)}}}} {
		if _, ok := doctorParts(Doctor{Facts: f}); ok {
			t.Errorf("%+v: encoded in parts", f)
		}
	}
}
