package bench_test

import (
	"fmt"

	"github.com/meshreg/meshreg/test/bench"
)

// The small preset: 200 Services of 10 endpoints each.
func ExampleGenerate() {
	s := bench.Generate(bench.Presets["small"])
	c := s.Counts()
	fmt.Println("namespaces", c.Namespaces, "nodes", c.Nodes, "zones", c.Zones)
	fmt.Println("services", c.Services, "ports", c.Ports)
	fmt.Println("pods", c.Pods, "slices", c.Slices, "slice endpoints", c.SliceEndpoints)
	fmt.Println("service entries", c.ServiceEntries)
	// Output:
	// namespaces 4 nodes 67 zones 3
	// services 200 ports 400
	// pods 2000 slices 200 slice endpoints 2000
	// service entries 10
}
