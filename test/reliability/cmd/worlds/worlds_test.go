package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/meshreg/meshreg/internal/manifest"
)

// Two worlds are written, one directory each, and every file decodes:
// objects exist only in namespaces that exist.
func TestWritesWorlds(t *testing.T) {
	dir := t.TempDir()
	var stderr bytes.Buffer
	if code := run([]string{"-n", "2", "-seed", "7", "-o", dir}, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	total := 0
	for _, world := range []string{"world-7", "world-8"} {
		for _, c := range []string{"a", "b"} {
			path := filepath.Join(dir, world, "cluster-"+c+".yaml")
			objs, err := manifest.LoadFile(path)
			if err != nil {
				t.Fatalf("%s: %v", path, err)
			}
			total += len(objs)
			namespaces := map[string]bool{}
			for _, o := range objs {
				if o.GetObjectKind().GroupVersionKind().Kind == "Namespace" {
					namespaces[accessor(t, o).GetName()] = true
				}
			}
			for _, o := range objs {
				if ns := accessor(t, o).GetNamespace(); ns != "" && !namespaces[ns] {
					t.Errorf("%s: an object in namespace %s, which the file does not hold", path, ns)
				}
			}
		}
	}
	if total == 0 {
		t.Error("the worlds hold no objects")
	}
	entries, err := os.ReadDir(dir)
	if err != nil || len(entries) != 2 {
		t.Errorf("want 2 world directories, got %v (%v)", entries, err)
	}
}

func accessor(t *testing.T, o runtime.Object) metav1.Object {
	t.Helper()
	m, err := meta.Accessor(o)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestUsage(t *testing.T) {
	for _, args := range [][]string{{}, {"-n", "1"}, {"-o", t.TempDir(), "extra"}, {"-bogus"}} {
		var stderr bytes.Buffer
		if code := run(args, &stderr); code != 2 || !strings.Contains(strings.ToLower(stderr.String()), "usage") {
			t.Errorf("run(%q) = %d, %q; want 2 and a usage line", args, code, stderr.String())
		}
	}
}
