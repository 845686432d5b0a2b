package cli

import (
	"io"
	"testing"
)

func BenchmarkNewRootCommand(b *testing.B) {
	ios := &IO{Out: io.Discard, Err: io.Discard}
	b.ReportAllocs()
	for b.Loop() {
		NewRootCommand(ios)
	}
}

func BenchmarkMainVersion(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		Main([]string{"--version"}, nil, io.Discard, io.Discard)
	}
}
