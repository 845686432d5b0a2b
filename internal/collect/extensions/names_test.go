package extensions

import (
	"fmt"
	"strings"
	"testing"
)

// distinctNames: every reference maps back to its name, every name is
// listed once, and indexOf agrees; below and above the size at which the
// names are split in two and indexed side by side.
func TestDistinctNames(t *testing.T) {
	for _, modules := range []int{3, 1000} {
		var linking []*module
		for i := range modules {
			m := &module{}
			for j := range 20 {
				// Shared names and names of every length parity.
				m.torchUndefined = append(m.torchUndefined, fmt.Sprintf("_ZN2at%s%d", strings.Repeat("x", (i+j)%3), (i*7+j*13)%5000))
			}
			linking = append(linking, m)
		}
		names, refs, indexOf := distinctNames(linking)
		seen := map[string]bool{}
		for _, n := range names {
			if seen[n] {
				t.Fatalf("%d modules: %q listed twice", modules, n)
			}
			seen[n] = true
		}
		want := map[string]bool{}
		for i, m := range linking {
			for k, s := range m.torchUndefined {
				want[s] = true
				if j := refs[i][k]; names[j] != s {
					t.Fatalf("%d modules: module %d reference %d is %q, names[%d] = %q", modules, i, k, s, j, names[j])
				}
				if j, ok := indexOf(s); !ok || names[j] != s {
					t.Fatalf("%d modules: indexOf(%q) = %d, %v", modules, s, j, ok)
				}
			}
		}
		if len(want) != len(names) {
			t.Errorf("%d modules: %d names, want %d", modules, len(names), len(want))
		}
		if _, ok := indexOf("_ZN2at_not_referenced"); ok {
			t.Errorf("%d modules: indexOf found a name no module references", modules)
		}
	}
}
