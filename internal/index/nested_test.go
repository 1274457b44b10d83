package index_test

import (
	"testing"

	"github.com/meshreg/meshreg/internal/index"
)

func TestNested(t *testing.T) {
	m := map[string]map[int]bool{}
	index.AddTo(m, "a", 1, true)
	index.AddTo(m, "a", 2, true)
	index.RemoveFrom(m, "a", 1)
	if len(m["a"]) != 1 || !m["a"][2] {
		t.Fatalf("after adding 1 and 2 and removing 1: %v", m)
	}
	index.RemoveFrom(m, "a", 2)
	index.RemoveFrom(m, "b", 1) // absent: nothing happens
	if len(m) != 0 {
		t.Fatalf("the key of an emptied inner map stays: %v", m)
	}
}
