package ipmap_test

import (
	"fmt"
	"net/netip"

	"github.com/meshreg/meshreg/internal/ipmap"
)

func ExampleMap() {
	var pods ipmap.Map[string]
	pods.Set(netip.MustParseAddr("10.1.0.7"), "ns/web-1")
	pods.Set(netip.MustParseAddr("fd00::7"), "ns/web-1")
	fmt.Println(pods.Get(netip.MustParseAddr("10.1.0.7")), pods.Len())
	_, ok := pods.Lookup(netip.MustParseAddr("10.1.0.8"))
	fmt.Println(ok)
	// Output:
	// ns/web-1 2
	// false
}
