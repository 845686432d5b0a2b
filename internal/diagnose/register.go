package diagnose

// registerCheck adds a check from the file that defines it, after the
// checks diagnose.go lists (it runs after them, before the sort by
// severity). A new finding's check then lives in one file:
//
//	var _ = registerCheck(checkSomething)
//
// Package variables are initialised after those they depend on, so checks
// exists when this runs; files register in file-name order, which keeps the
// output deterministic.
func registerCheck(ch check) bool {
	checks = append(checks, ch)
	return true
}
