package golden_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/meshreg/meshreg/internal/golden"
)

// recorder records what Check reports.
type recorder struct{ fatal, errs []string }

func (r *recorder) Helper() {}
func (r *recorder) Fatalf(format string, args ...any) {
	r.fatal = append(r.fatal, fmt.Sprintf(format, args...))
}
func (r *recorder) Errorf(format string, args ...any) {
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}

func TestCheck(t *testing.T) {
	path := filepath.Join(t.TempDir(), "want.json")

	var missing recorder
	golden.Check(&missing, path, []byte("a\n"), false)
	if len(missing.fatal) != 1 || !strings.Contains(missing.fatal[0], "-update") {
		t.Errorf("a missing golden: fatal %q, want one saying to run with -update", missing.fatal)
	}

	var update recorder
	golden.Check(&update, path, []byte("a\n"), true)
	if b, err := os.ReadFile(path); err != nil || string(b) != "a\n" || len(update.fatal)+len(update.errs) > 0 {
		t.Errorf("-update wrote %q, %v; reported %v %v", b, err, update.fatal, update.errs)
	}

	var same recorder
	golden.Check(&same, path, []byte("a\n"), false)
	if len(same.fatal)+len(same.errs) > 0 {
		t.Errorf("an equal golden reported %v %v", same.fatal, same.errs)
	}

	var differs recorder
	golden.Check(&differs, path, []byte("b\n"), false)
	if len(differs.errs) != 1 || !strings.Contains(differs.errs[0], `"a\n"`) || !strings.Contains(differs.errs[0], `"b\n"`) {
		t.Errorf("a different golden: errors %q, want one with the difference", differs.errs)
	}
}
