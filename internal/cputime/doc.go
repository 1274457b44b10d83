// Package cputime reads the CPU time the process has used, user and
// system, all goroutines': what benchmarks report as cpu-ns/op when the
// work of an operation runs on goroutines other than the benchmark's.
package cputime
