//go:build !linux

package source

// AdviseRandomReads: see advise_linux.go.
var AdviseRandomReads = "yes"

func adviseRandom(File) {}
