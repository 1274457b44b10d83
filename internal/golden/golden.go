package golden

import (
	"os"

	"github.com/google/go-cmp/cmp"
)

// T is the part of *testing.T that Check uses.
type T interface {
	Helper()
	Fatalf(format string, args ...any)
	Errorf(format string, args ...any)
}

// Check compares got with the golden file at path; with update it
// writes got to path instead. A golden that cannot be read fails the
// test, saying to run with -update; one that differs fails it with the
// difference (-want +got).
func Check(t T, path string, got []byte, update bool) {
	t.Helper()
	if update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatalf("golden: %v", err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("golden: %v (run with -update to create it)", err)
		return
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("%s differs (-want +got):\n%s", path, diff)
	}
}
