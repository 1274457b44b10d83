package meshreg_test

import (
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/meshreg/meshreg/"

// TestNoImportPointsUp holds the layers of ARCHITECTURE.md ("The
// flow"): the contracts (model, registry) import no package of the
// module's but each other; the foundations in internal/ import only each
// other and the contracts; the tooling that imports the library lives in
// test/, which nothing but tests and tools imports.
func TestNoImportPointsUp(t *testing.T) {
	allowed := func(pkg, imp string) bool {
		switch {
		case pkg == "model":
			return false
		case pkg == "registry":
			return imp == "model"
		case strings.HasPrefix(pkg, "internal/"):
			return strings.HasPrefix(imp, "internal/") || imp == "model" || imp == "registry"
		case strings.HasPrefix(imp, "test/"):
			return strings.HasPrefix(pkg, "test/") || strings.HasPrefix(pkg, "examples/")
		}
		return true
	}
	checked := 0
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != "." && (name == "testdata" || name == "hack" || strings.HasPrefix(name, ".")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		pkg := filepath.ToSlash(filepath.Dir(path))
		for _, spec := range f.Imports {
			imp, _ := strconv.Unquote(spec.Path.Value)
			rel, ok := strings.CutPrefix(imp, module)
			if !ok {
				continue
			}
			checked++
			if !allowed(pkg, rel) {
				t.Errorf("%s imports %s: an import that points up", path, rel)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 100 {
		t.Fatalf("checked %d imports of the module's own; the walk missed the tree", checked)
	}
}
