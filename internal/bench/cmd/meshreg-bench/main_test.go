package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestRunSmallOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("measures the small preset")
	}
	dir := t.TempDir()
	js, svg := filepath.Join(dir, "r.json"), filepath.Join(dir, "r.svg")
	var out, errb bytes.Buffer
	err := run([]string{"-preset", "small", "-runs", "1", "-changes", "50", "-noqueries", "-o", js, "-svg", svg}, &out, &errb)
	if err != nil {
		t.Fatalf("run: %v\n%s", err, errb.String())
	}
	if !strings.Contains(out.String(), "### small: 200 services × 10 endpoints = 2000 endpoints") {
		t.Errorf("markdown:\n%s", out.String())
	}
	for _, f := range []string{js, svg} {
		if st, err := os.Stat(f); err != nil || st.Size() == 0 {
			t.Errorf("%s not written: %v", f, err)
		}
	}
	// Re-rendering the JSON gives the same Markdown.
	var again bytes.Buffer
	if err := run([]string{"-from", js}, &again, &errb); err != nil {
		t.Fatal(err)
	}
	if again.String() != out.String() {
		t.Errorf("-from renders differently:\n%s\nvs\n%s", again.String(), out.String())
	}
}

func TestUnknownPreset(t *testing.T) {
	var out, errb bytes.Buffer
	if err := run([]string{"-preset", "huge"}, &out, &errb); err == nil || !strings.Contains(err.Error(), "unknown preset") {
		t.Errorf("err = %v, want unknown preset", err)
	}
}
