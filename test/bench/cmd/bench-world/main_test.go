package main

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// The small preset's objects, counted by kind.
func Example_write() {
	var buf bytes.Buffer
	if err := write(&buf, "small"); err != nil {
		panic(err)
	}
	kinds := map[string]int{}
	for _, line := range strings.Split(buf.String(), "\n") {
		if k, ok := strings.CutPrefix(line, "kind: "); ok {
			kinds[k]++
		}
	}
	fmt.Println(kinds["Namespace"] > 0, kinds["Service"] > 0, kinds["Pod"] > 0, kinds["EndpointSlice"] > 0)
	fmt.Println(write(&buf, "nope"))
	// Output:
	// true true true true
	// no preset "nope" (have large, medium, small, xl)
}
