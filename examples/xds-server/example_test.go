package main

import (
	"fmt"
	"io"
)

// With no flags, both servers listen on loopback only.
func Example() {
	c, err := parseFlags(nil, io.Discard)
	if err != nil {
		panic(err)
	}
	fmt.Println("xDS:", c.xdsAddr)
	fmt.Println("debug:", c.debugAddr)
	// Output:
	// xDS: 127.0.0.1:15010
	// debug: 127.0.0.1:15014
}
