package cli

import (
	"context"
	"io"
	"testing"

	"github.com/fastpath-dev/fastpath/internal/fixture"
)

// BenchmarkDoctorSeed is `fastpath doctor` on the seed container tree:
// collection, diagnosis and the text report (target: under 20 ms).
func BenchmarkDoctorSeed(b *testing.B) {
	dir := b.TempDir()
	if err := fixture.Seed(dir); err != nil {
		b.Fatal(err)
	}
	ios := &IO{Out: io.Discard, Err: io.Discard}
	o := &DoctorOptions{Source: SourceFlags{Root: dir, GPUs: fixture.SeedGPUs, Env: fixture.SeedEnv}}
	for b.Loop() {
		err := RunDoctor(context.Background(), o, ios)
		if _, ok := err.(findingsError); err != nil && !ok {
			b.Fatal(err)
		}
	}
}

// BenchmarkDoctorHost is `fastpath doctor` on this machine (target: under
// 100 ms with several pyenv Pythons and the live nvcc/gcc/nvidia-smi calls).
func BenchmarkDoctorHost(b *testing.B) {
	ios := &IO{Out: io.Discard, Err: io.Discard}
	o := &DoctorOptions{}
	for b.Loop() {
		err := RunDoctor(context.Background(), o, ios)
		if _, ok := err.(findingsError); err != nil && !ok {
			b.Fatal(err)
		}
	}
}
