package meshreg_test

import (
	"os"
	"strings"
	"testing"
)

// The README's quick start is the package example of registry/memory, so
// that `make test` compiles it and checks its output. This test keeps the
// two the same.
func TestReadmeQuickStartIsTheMemoryExample(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	example, err := os.ReadFile("registry/memory/example_test.go")
	if err != nil {
		t.Fatal(err)
	}

	// The README's Go block, without the comments that show the output.
	_, block, ok := strings.Cut(string(readme), "```go\n")
	block, _, ok2 := strings.Cut(block, "```")
	if !ok || !ok2 {
		t.Fatal("README.md has no ```go block")
	}
	var quick []string
	for _, line := range strings.Split(strings.TrimSpace(block), "\n") {
		if !strings.HasPrefix(line, "// ") {
			quick = append(quick, line)
		}
	}

	// The body of Example(), up to its output, unindented once.
	_, body, ok := strings.Cut(string(example), "\nfunc Example() {\n")
	body, _, ok2 = strings.Cut(body, "\t// Output:")
	if !ok || !ok2 {
		t.Fatal("registry/memory/example_test.go has no Example() with an Output comment")
	}
	var ex []string
	for _, line := range strings.Split(strings.TrimRight(body, "\n\t"), "\n") {
		ex = append(ex, strings.TrimPrefix(line, "\t"))
	}

	if got, want := strings.Join(quick, "\n"), strings.Join(ex, "\n"); got != want {
		t.Errorf("README quick start and registry/memory Example differ:\n--- README\n%s\n--- Example\n%s", got, want)
	}
}
