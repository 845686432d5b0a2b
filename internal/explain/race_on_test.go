//go:build race

package explain

// raceEnabled: the race detector multiplies allocation and memory use, so
// tests that measure memory skip under it (they run in the plain `go test`).
const raceEnabled = true
