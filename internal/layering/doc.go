// Package layering holds no code: its test keeps fastpath's packages in the
// layers of docs/contributing.md ("Layout"), in the manner of go/build's
// deps_test.go. Each layer may import only the layers above it in the table
// in layering_test.go; an import upward, or a package missing from the
// table, fails `go test ./internal/layering`.
package layering
