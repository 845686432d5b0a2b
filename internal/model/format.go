package model

import (
	"fmt"
	"sort"
	"strings"
)

// FormatKinds is "48 linear_attention, 16 full_attention", largest first.
func FormatKinds(counts map[string]int) string {
	type kc struct {
		k string
		n int
	}
	var l []kc
	for k, n := range counts {
		l = append(l, kc{k, n})
	}
	sort.Slice(l, func(i, j int) bool {
		if l[i].n != l[j].n {
			return l[i].n > l[j].n
		}
		return l[i].k < l[j].k
	})
	var parts []string
	for _, e := range l {
		parts = append(parts, fmt.Sprintf("%d %s", e.n, e.k))
	}
	return strings.Join(parts, ", ")
}

// FormatLayerKinds is FormatKinds, or what is known when the config lists
// no per-layer kinds (never an empty list).
func FormatLayerKinds(counts map[string]int, numLayers int) string {
	if len(counts) == 0 {
		if numLayers == 0 {
			return "no layer count in config.json"
		}
		return "kinds not listed in config.json"
	}
	return FormatKinds(counts)
}

// FormatModelType is the model_type, with the nested language model a
// wrapper was judged by: "lfm2_vl (lfm2 in text_config)".
func FormatModelType(r *Report) string {
	switch {
	case r.Family != "" && r.Family == r.ModelType:
		// A family that nests its own text model (qwen3_5): nothing to add.
		return r.ModelType
	case r.TextConfig != "" && r.TextModelType != "":
		return fmt.Sprintf("%s (%s in %s)", r.ModelType, r.TextModelType, r.TextConfig)
	case r.TextConfig != "":
		return fmt.Sprintf("%s (language model in %s)", r.ModelType, r.TextConfig)
	case r.Family != "" && r.Family != r.ModelType:
		return fmt.Sprintf("%s (judged as %s)", r.ModelType, r.Family)
	}
	return r.ModelType
}

// CodeModelType is the model_type whose modeling module builds the
// report's layers (the family it was judged as, else the nested language
// model's, else its own): the module the live probe imports and the
// measurements are keyed by.
func (r *Report) CodeModelType() string {
	for _, mt := range []string{r.Family, r.TextModelType} {
		if mt != "" {
			return mt
		}
	}
	return r.ModelType
}
