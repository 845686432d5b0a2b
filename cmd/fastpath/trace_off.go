//go:build !fastpath_trace

package main

// startTrace does nothing in a normal build: the execution tracer is only in
// builds made to look at where a run waits (trace_on.go).
func startTrace() (stop func()) { return func() {} }
