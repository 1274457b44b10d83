// Command meshreg-bench measures meshreg against the bare-informer floor
// over generated clusters and writes the figures as JSON, Markdown and an
// SVG plot.
//
//	go run ./test/bench/cmd/meshreg-bench -preset small,medium,large -runs 3 \
//	    -o results.json -md results.md -svg bench.svg
//
// -from re-renders the Markdown and SVG of an earlier JSON without
// measuring. See BENCHMARKS.md for the method.
package main
