// Package golden compares what a test produced with a golden file, or
// rewrites the file when the test runs with -update: the one way the
// golden scenarios of every package (testdata/scenarios, testdata/eds)
// are checked.
//
// A test package declares its own -update flag (flag.Bool("update",
// ...)) and hands its value to Check. A rewritten golden is to be read
// before it is committed.
package golden
