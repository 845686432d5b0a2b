package kb

import (
	"sync"
)

// MeasurementsData is data/measurements.json: what the torch fallback of a
// kernel function was measured to cost, per model and GPU.
type MeasurementsData struct {
	Source        string         `json:"source"`
	FallbackCosts []FallbackCost `json:"fallback_costs"`
}

// FallbackCost is one model's measured fallback costs on one machine.
type FallbackCost struct {
	ModelType    string `json:"model_type"`
	NumLayers    int    `json:"num_layers"`
	Kind         string `json:"kind"`
	KindLayers   int    `json:"kind_layers"`
	Model        string `json:"model"`
	GPU          string `json:"gpu"`
	Torch        string `json:"torch"`
	Transformers string `json:"transformers"`
	DType        string `json:"dtype"`
	Batch        int    `json:"batch"`
	Command      string `json:"command"`
	Date         string `json:"date"`
	Source       string `json:"source"`
	// LayerMS is one whole layer of Kind, fast and fallback, per seq_len.
	LayerMS []struct {
		SeqLen   int     `json:"seq_len"`
		Fast     float64 `json:"fast"`
		Fallback float64 `json:"fallback"`
	} `json:"layer_ms"`
	Functions []FunctionCost `json:"functions"`
}

// FunctionCost is what one function's fallback adds to one forward pass
// (a prefill of SeqLen tokens, or one decode step) over all KindLayers.
type FunctionCost struct {
	Function     string  `json:"function"`
	Package      string  `json:"package"`
	Phase        string  `json:"phase"`
	SeqLen       int     `json:"seq_len,omitempty"`
	PerForwardMS float64 `json:"per_forward_ms"`
}

var (
	measOnce sync.Once
	measData MeasurementsData
)

// Measurements returns the parsed data/measurements.json.
func Measurements() *MeasurementsData {
	measOnce.Do(func() {
		measData = measurementsTable() // generated into tables_gen.go
	})
	return &measData
}

// FallbackCostFor is the measurement for a model of this type, layer count
// and kind count (the shapes it was measured at); ok false when none.
func (d *MeasurementsData) FallbackCostFor(modelType string, numLayers int, kind string, kindLayers int) (FallbackCost, bool) {
	for _, m := range d.FallbackCosts {
		if m.ModelType == modelType && m.NumLayers == numLayers && m.Kind == kind && m.KindLayers == kindLayers {
			return m, true
		}
	}
	return FallbackCost{}, false
}

// LayerFastMS is one fast layer's time at seqLen (0 unknown).
func (m FallbackCost) LayerFastMS(seqLen int) float64 {
	for _, l := range m.LayerMS {
		if l.SeqLen == seqLen {
			return l.Fast
		}
	}
	return 0
}
