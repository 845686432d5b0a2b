package kb

import (
	"encoding/json"
	"fmt"
	"sort"
	"sync"
)

// FamiliesData is data/families.json: per model family, which layer kinds
// depend on which kernel packages and what happens without them.
type FamiliesData struct {
	Source    string `json:"source"`
	Mechanism struct {
		// PerFunctionFrom is the first transformers release that resolves
		// each kernel function alone (hub kernel, package, torch).
		PerFunctionFrom string          `json:"per_function_from"`
		Note            string          `json:"note"`
		KernelsWindows  []KernelsWindow `json:"kernels_windows"`
		HubDisableEnv   string          `json:"hub_disable_env"`
	} `json:"mechanism"`
	// Packages are packages.json's kernel packages, by name (filled on
	// load: families.json names them only in its function sets).
	Packages     map[string]KernelPackage `json:"-"`
	FunctionSets map[string][]KernelFunc  `json:"function_sets"`
	Families     map[string]Family        `json:"families"`
	// ConfigReading is how transformers finds a config's language model
	// and its layers, for every model_type (not only the families).
	ConfigReading ConfigReading              `json:"config_reading"`
	AttnImpls     map[string]AttnImplRequire `json:"attention_implementations"`
	Slowdowns     []Slowdown                 `json:"slowdowns"`
}

// KernelsWindow is the `kernels` version range a transformers release
// accepts for Hub kernels: Min <= version < Below.
type KernelsWindow struct {
	TransformersFrom string `json:"transformers_from"`
	Min              string `json:"min"`
	Below            string `json:"below"`
	Checked          string `json:"checked"`
}

// KernelPackage is a kernel distribution.
type KernelPackage struct {
	Import string `json:"import"` // the import name transformers uses
	// Dists are the distribution names that ship Import (fla-core ships
	// fla; flash-linear-attention depends on it).
	Dists  []string `json:"dists"`
	Native bool     `json:"native"` // ships compiled extensions (Triton-only packages do not)
	// LegacyMinVersion is what transformers' is_*_available() demands up to
	// 5.14; LegacyMinVersionMamba2 the same for the mamba2 families.
	LegacyMinVersion       string `json:"legacy_min_version,omitempty"`
	LegacyMinVersionMamba2 string `json:"legacy_min_version_mamba2,omitempty"`
	MinVersion             string `json:"min_version,omitempty"`
	Hub                    string `json:"hub,omitempty"`     // Hugging Face Hub kernel repository
	Install                string `json:"install,omitempty"` // what to pip install
	Note                   string `json:"note,omitempty"`
}

// KernelFunc is one function transformers resolves from a kernel package.
type KernelFunc struct {
	Name             string `json:"name"`
	Package          string `json:"package"` // key of Packages
	Module           string `json:"module"`
	MinVersionLegacy string `json:"min_version_legacy,omitempty"`
	// TorchRefs are the modeling-module attributes that hold the torch
	// reference of the function, in the order to try them.
	TorchRefs []string `json:"torch_refs,omitempty"`
}

// Family is one model_type.
type Family struct {
	Kinds  map[string]KindKernels `json:"kinds"`
	Layout string                 `json:"layout"`
	// Layers is Layout as data: the rule internal/model applies to a
	// config.json to find each layer's kind.
	Layers *LayerRule `json:"layers"`
	// OracleVariants are the configs scripts/transformers-layer-kinds.py
	// has transformers' own configuration class write for the family ({}
	// for its defaults first), to check Layers against.
	OracleVariants []map[string]any `json:"oracle_variants"`
	// Bench names the routine of internal/live/bench.py that times this
	// family's kernel layers ("gated_delta_net"); "" when none does.
	Bench  string `json:"bench,omitempty"`
	Nested bool   `json:"nested,omitempty"`
	// TextModelTypes are the model_types of the family's own text-only
	// configuration (qwen3_5_text): a config of one is judged as the family.
	TextModelTypes []string `json:"text_model_types,omitempty"`
	// UseMambaKernelsFalse is what config use_mamba_kernels=false does.
	UseMambaKernelsFalse string `json:"use_mamba_kernels_false,omitempty"`
	// RaisesBefore: transformers releases before this one raise when the
	// kernels are missing (Raises says how), unless use_mamba_kernels=False.
	RaisesBefore  string   `json:"raises_before,omitempty"`
	Raises        string   `json:"raises,omitempty"`
	RaisesChecked string   `json:"raises_checked,omitempty"`
	Checked       []string `json:"checked"`
	AbsentIn      []string `json:"absent_in,omitempty"`
}

// ConfigReading is what transformers' PreTrainedConfig does with every
// config.json before a family's own class looks at it.
type ConfigReading struct {
	Source string `json:"source"`
	// TextConfigKeys are the nested configs that hold a wrapper's language
	// model, in the order to try them at each level.
	TextConfigKeys []string `json:"text_config_keys"`
	// TextConfigKeysOnly limits a key to the model_types (of the config
	// holding it) whose class reads its language model there.
	TextConfigKeysOnly map[string][]string `json:"text_config_keys_only,omitempty"`
	// TextDefaults is, per wrapper model_type, the model_type of the
	// language model its class builds when the nested config names none
	// (the wrappers of the knowledge base's families).
	TextDefaults map[string]string `json:"text_defaults,omitempty"`
	// LayerCountKeys are num_hidden_layers and its attribute_map aliases.
	LayerCountKeys []string `json:"layer_count_keys"`
	// LegacyLayerTypes is _LEGACY_LAYER_TYPE_REMAP: old kind spellings.
	LegacyLayerTypes map[string]string `json:"legacy_layer_types"`
	// OwnLayouts are, per model_type that is not a family, the ways its
	// configuration class works out its layer count or kinds from fields
	// of its own, where the generic reading would count something else.
	OwnLayouts     map[string]OwnLayout `json:"own_layouts,omitempty"`
	OwnLayoutsNote string               `json:"own_layouts_note,omitempty"`
	Note           string               `json:"note"`
}

// OwnLayout is one configuration class's own derivation of its layers
// (config_reading.own_layouts_note describes each part).
type OwnLayout struct {
	Source string `json:"source"`
	// Count: the layers are PerUnit times the Key field (Default when
	// absent); a num_hidden_layers present instead is rounded down to a
	// multiple of PerUnit (longcat_flash: 2 attention sublayers per layer).
	Count *struct {
		Key     string `json:"key"`
		PerUnit int    `json:"per_unit"`
		Default int    `json:"default"`
	} `json:"count,omitempty"`
	// Pairs: a saved per-block list (List) that holds Marker is one layer
	// per pair of entries: every other entry is a layer's kind and the
	// layer count is halved (dory's attention+mlp blocks).
	Pairs *struct {
		List   string `json:"list"`
		Marker string `json:"marker"`
	} `json:"pairs,omitempty"`
	// Cycle: the kinds repeat the list under Key (Default when absent) up
	// to the layer count (at most Repeat times the list); an entry Match
	// is Kind, any other Other (recurrent_gemma's block_types).
	Cycle *struct {
		Key     string   `json:"key"`
		Default []string `json:"default"`
		Repeat  int      `json:"repeat"`
		Match   string   `json:"match"`
		Kind    string   `json:"kind"`
		Other   string   `json:"other"`
	} `json:"cycle,omitempty"`
}

// FamilyOf is the family a model_type is judged as: itself, or the family
// whose text_model_types lists it; "" when none.
func (d *FamiliesData) FamilyOf(mt string) string {
	if f, ok := d.Families[mt]; ok && f.Layers != nil {
		return mt
	}
	for name, f := range d.Families {
		for _, t := range f.TextModelTypes {
			if t == mt && f.Layers != nil {
				return name
			}
		}
	}
	return ""
}

// LayerRule is how a family's configuration class derives each layer's
// kind (families.json's layers_note describes the rules).
type LayerRule struct {
	// Lists are per-layer lists tried first, in order. Strict: a list must
	// have exactly num_hidden_layers entries; AnyLength: the list alone
	// sets the layer count.
	Lists     []string `json:"lists,omitempty"`
	Strict    bool     `json:"strict,omitempty"`
	AnyLength bool     `json:"any_length,omitempty"`
	// Rule is uniform, interval, period, indices, pattern, default or
	// one_indexed_sets.
	Rule string `json:"rule"`
	Kind string `json:"kind,omitempty"` // uniform
	// Key and Default: the interval or period field and its default, or
	// the indices / pattern field.
	Key     string `json:"key,omitempty"`
	Default int    `json:"default,omitempty"`
	// Base and SkipFirst: interval's layer i matches where
	// (i+Base) % interval == 0, never layer 0 when SkipFirst.
	Base      int  `json:"base,omitempty"`
	SkipFirst bool `json:"skip_first,omitempty"`
	// OffsetKey, OffsetDefault and Prefix: period's layer i (counted after
	// Prefix) matches where i % period == offset.
	OffsetKey     string   `json:"offset_key,omitempty"`
	OffsetDefault int      `json:"offset_default,omitempty"`
	Prefix        []string `json:"prefix,omitempty"`
	Match         string   `json:"match,omitempty"`
	Other         string   `json:"other,omitempty"`
	// Absent is what indices does without its field: none, all, unknown
	// (with AbsentNote).
	Absent     string `json:"absent,omitempty"`
	AbsentNote string `json:"absent_note,omitempty"`
	// Pattern maps pattern's characters to kinds; DefaultKinds is the
	// class's default list without one.
	Pattern      map[string]string `json:"pattern,omitempty"`
	DefaultKinds []string          `json:"default_kinds,omitempty"`
	// Runs is default's list as ["kind", count] runs.
	Runs []LayerRun `json:"runs,omitempty"`
	// Object and Sets: one_indexed_sets' object and its 1-indexed lists;
	// Then applies when they are absent.
	Object string `json:"object,omitempty"`
	Sets   []struct {
		Key  string `json:"key"`
		Kind string `json:"kind"`
	} `json:"sets,omitempty"`
	Then *LayerRule `json:"then,omitempty"`
	// From names where the kinds came from when the rule does not derive
	// it from its fields.
	From string `json:"from,omitempty"`
}

// LayerRun is count layers of one kind, written ["kind", count].
type LayerRun struct {
	Kind  string
	Count int
}

// UnmarshalJSON reads ["kind", count].
func (r *LayerRun) UnmarshalJSON(b []byte) error {
	var pair []json.RawMessage
	if err := json.Unmarshal(b, &pair); err != nil || len(pair) != 2 {
		return fmt.Errorf("a run is [\"kind\", count], got %s", b)
	}
	if err := json.Unmarshal(pair[0], &r.Kind); err != nil {
		return err
	}
	return json.Unmarshal(pair[1], &r.Count)
}

// DefaultList expands Runs.
func (r *LayerRule) DefaultList() []string {
	var out []string
	for _, run := range r.Runs {
		for i := 0; i < run.Count; i++ {
			out = append(out, run.Kind)
		}
	}
	return out
}

// KindKernels is what one layer kind needs.
type KindKernels struct {
	Sets []string `json:"sets"` // keys of FunctionSets
	// SetsFrom515 replace Sets from transformers 5.15 where the family's
	// per-function code resolves fewer functions.
	SetsFrom515 []string `json:"sets_from_5_15,omitempty"`
	Without     string   `json:"without"`
}

// AttnImplRequire is what a config's attn_implementation needs.
type AttnImplRequire struct {
	Package    string `json:"package"`
	Module     string `json:"module"`
	MinVersion string `json:"min_version,omitempty"`
	Without    string `json:"without"`
	Hub        string `json:"hub,omitempty"`
	// MinCapability is the oldest GPU the package's kernels run on
	// ("8.0"); OnlyCapabilityMajor, where set, the only GPU majors they
	// run on ([9]: Hopper); GPUSource cites both.
	MinCapability       string `json:"min_capability,omitempty"`
	OnlyCapabilityMajor []int  `json:"only_capability_major,omitempty"`
	GPUSource           string `json:"gpu_source,omitempty"`
}

// Slowdown is a published measurement of the fallback's cost.
type Slowdown struct {
	Text     string   `json:"text"`
	Source   string   `json:"source"`
	Families []string `json:"families"`
}

var (
	familiesOnce sync.Once
	familiesData FamiliesData
)

// Families returns the parsed data/families.json (a build defect if it does
// not parse: the package's tests catch it).
func Families() *FamiliesData {
	familiesOnce.Do(func() {
		familiesData = familiesTable() // generated into tables_gen.go
		// The kernel packages live in packages.json, the one package list.
		familiesData.Packages = KernelPackages()
	})
	return &familiesData
}

// Functions returns the functions a layer kind needs; from515 picks the
// per-function (5.15+) list where it differs.
func (d *FamiliesData) Functions(k KindKernels, from515 bool) []KernelFunc {
	sets := k.Sets
	if from515 && len(k.SetsFrom515) > 0 {
		sets = k.SetsFrom515
	}
	var out []KernelFunc
	for _, s := range sets {
		out = append(out, d.FunctionSets[s]...)
	}
	return out
}

// BenchFamilies are the model types bench.py's routine times, sorted.
func (d *FamiliesData) BenchFamilies(routine string) []string {
	var out []string
	for mt, f := range d.Families {
		if f.Bench == routine {
			out = append(out, mt)
		}
	}
	sort.Strings(out)
	return out
}
