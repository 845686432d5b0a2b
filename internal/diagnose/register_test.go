package diagnose

import (
	"testing"

	"github.com/fastpath-dev/fastpath/internal/finding"
)

// TestRegisterCheck: a registered check runs with the listed ones (here a
// second copy of the ninja check, so missing-ninja comes out twice).
func TestRegisterCheck(t *testing.T) {
	f := healthy()
	f.Toolchain.Ninja = nil
	count := func() int {
		n := 0
		for _, fd := range Run(f) {
			if fd.ID == finding.MissingNinja {
				n++
			}
		}
		return n
	}
	if got := count(); got != 1 {
		t.Fatalf("missing-ninja %d times before registering", got)
	}
	n := len(checks)
	defer func() { checks = checks[:n] }()
	registerCheck(checkNinja)
	if got := count(); got != 2 {
		t.Fatalf("missing-ninja %d times after registering its check again, want 2", got)
	}
}
