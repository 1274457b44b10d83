package golden_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/meshreg/meshreg/internal/golden"
)

// printer reports as a test would, on stdout.
type printer struct{}

func (printer) Helper()                           {}
func (printer) Fatalf(format string, args ...any) { fmt.Printf("FATAL "+format+"\n", args...) }
func (printer) Errorf(format string, args ...any) { fmt.Printf("ERROR "+format+"\n", args...) }

func Example() {
	dir, _ := os.MkdirTemp("", "golden")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "want.json")

	golden.Check(printer{}, path, []byte(`{"version": 1}`), true)  // go test -update
	golden.Check(printer{}, path, []byte(`{"version": 1}`), false) // agrees: nothing said
	fmt.Println("checked")
	// Output:
	// checked
}
