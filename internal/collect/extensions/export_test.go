package extensions

// ReadWholeUpTo sets the size up to which a library is read whole, for the
// duration of a test (0: every library is read a header at a time).
func ReadWholeUpTo(n int64) (restore func()) {
	old := wholeFileBytes
	wholeFileBytes = n
	return func() { wholeFileBytes = old }
}
