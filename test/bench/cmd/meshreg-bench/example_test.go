package main

import (
	"fmt"
	"io"
)

// The presets are small, medium, large and xl; another name is refused.
func Example() {
	err := run([]string{"-preset", "huge"}, io.Discard, io.Discard)
	fmt.Println(err)
	// Output:
	// unknown preset "huge" (have small, medium, large, xl)
}
