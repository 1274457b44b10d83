package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"go.uber.org/goleak"
)

// runMainEnv, set to 1, makes the test binary run the command instead of
// the tests: -isolate runs the binary it is in again for each system.
const runMainEnv = "MESHREG_BENCH_TEST_RUN_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(runMainEnv) == "1" {
		main()
		os.Exit(0)
	}
	goleak.VerifyTestMain(m)
}

func TestRunSmallOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("measures the small preset")
	}
	t.Setenv(runMainEnv, "1") // for the processes -isolate starts
	dir := t.TempDir()
	js, svg := filepath.Join(dir, "r.json"), filepath.Join(dir, "r.svg")
	var out, errb bytes.Buffer
	err := run([]string{"-preset", "small", "-runs", "2", "-systems", "floor,kube", "-changes", "50", "-noqueries", "-o", js, "-svg", svg}, &out, &errb)
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
	// Each system of each run was measured in a process of its own, in
	// the order of the run.
	rep, err := readReport(js)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range rep.Presets[0].Runs {
		for _, s := range r.Systems {
			got = append(got, fmt.Sprintf("%d %s", r.Run, s.System))
		}
	}
	if want := []string{"0 floor", "0 kube", "1 kube", "1 floor"}; !slices.Equal(got, want) {
		t.Errorf("runs and systems = %q, want %q", got, want)
	}
	for _, line := range []string{"small run 0: floor: preloaded", "small run 1: floor: preloaded"} {
		if !strings.Contains(errb.String(), line) {
			t.Errorf("log lacks %q:\n%s", line, errb.String())
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

func TestRunInProcess(t *testing.T) {
	if testing.Short() {
		t.Skip("measures the small preset")
	}
	var out, errb bytes.Buffer
	err := run([]string{"-isolate=false", "-preset", "small", "-runs", "1", "-systems", "kube", "-changes", "50", "-noqueries"}, &out, &errb)
	if err != nil {
		t.Fatalf("run: %v\n%s", err, errb.String())
	}
	// Only kube was measured: the floor's column is empty.
	if !strings.Contains(out.String(), "| initial sync (wall) | – | ") {
		t.Errorf("markdown:\n%s", out.String())
	}
}

func TestCPUProfileNeedsInProcess(t *testing.T) {
	var out, errb bytes.Buffer
	if err := run([]string{"-cpuprofile", filepath.Join(t.TempDir(), "p")}, &out, &errb); err == nil || !strings.Contains(err.Error(), "-isolate=false") {
		t.Errorf("err = %v, want one naming -isolate=false", err)
	}
}

func TestUnknownPreset(t *testing.T) {
	var out, errb bytes.Buffer
	if err := run([]string{"-preset", "huge"}, &out, &errb); err == nil || !strings.Contains(err.Error(), "unknown preset") {
		t.Errorf("err = %v, want unknown preset", err)
	}
}
