package main

import (
	"errors"
	"fmt"
	"io/fs"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// A world that cannot be read stops the server before it listens.
func Example_run() {
	err := run("testdata/no-such-world.yaml", "127.0.0.1:0", "127.0.0.1:0", false)
	fmt.Println(errors.Is(err, fs.ErrNotExist))
	// Output:
	// true
}
