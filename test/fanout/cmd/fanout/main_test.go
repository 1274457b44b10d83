package main

import (
	"fmt"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// table needs the reports of both systems, apart.
func Example_table() {
	fmt.Println(table([]string{"meshreg-1.json"}))
	fmt.Println(table([]string{"--"}))
	// Output:
	// table: want MESHREG.json... -- ISTIO.json...
	// fanout: a table needs reports of both systems
}
