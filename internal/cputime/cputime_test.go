package cputime_test

import (
	"fmt"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/meshreg/meshreg/internal/cputime"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestProcessCountsWork(t *testing.T) {
	before := cputime.Process()
	if before <= 0 {
		t.Fatalf("Process() = %v at start, want > 0", before)
	}
	deadline := time.Now().Add(5 * time.Second)
	x := 0
	for cputime.Process()-before < 10*time.Millisecond {
		if time.Now().After(deadline) {
			t.Fatal("5 s of spinning did not count 10 ms of CPU")
		}
		for i := range 100000 {
			x += i
		}
	}
	_ = x
}

func ExampleProcess() {
	start := cputime.Process()
	// ... the work of b.N operations, on any goroutines ...
	used := cputime.Process() - start
	fmt.Println(used >= 0)
	// Output: true
}
