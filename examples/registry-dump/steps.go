package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/meshreg/meshreg/address"
	"github.com/meshreg/meshreg/internal/manifest"
	"github.com/meshreg/meshreg/model"
	"github.com/meshreg/meshreg/registry"
	"github.com/meshreg/meshreg/test/sources"
)

// A -step DIR=OUT brings, after the first state is printed, the clusters
// that DIR's cluster-<id>.yaml files name to those manifests (objects
// created, updated and deleted through the running registries and
// index), and writes the address index to OUT: the form of
// hack/ambient-oracle's -step, so that a change sequence compares with
// Istio's step by step.

// stepFlags are the -step flags, in order.
type stepFlags []string

func (s *stepFlags) String() string { return strings.Join(*s, ",") }
func (s *stepFlags) Set(v string) error {
	dir, out, ok := strings.Cut(v, "=")
	if !ok || dir == "" || out == "" {
		return fmt.Errorf("want DIR=OUT, got %q", v)
	}
	*s = append(*s, v)
	return nil
}

// stepQuiet is how long the index must hold still after a step before it
// is printed: the step's changes reach the registries through informers,
// with no signal of their arrival.
const stepQuiet = 300 * time.Millisecond

// runSteps applies each step and writes the index after it.
func runSteps(ctx context.Context, built *sources.Built, idx *address.Index, steps []string, timeout time.Duration) error {
	before, err := indexJSON(idx)
	if err != nil {
		return err
	}
	for _, s := range steps {
		dir, out, _ := strings.Cut(s, "=")
		files, err := filepath.Glob(filepath.Join(dir, "cluster-*.yaml"))
		if err != nil || len(files) == 0 {
			return fmt.Errorf("-step %s: no cluster-*.yaml", dir)
		}
		for _, f := range files {
			id := model.ClusterID(strings.TrimSuffix(strings.TrimPrefix(filepath.Base(f), "cluster-"), ".yaml"))
			mc := built.Manifests[id]
			if mc == nil {
				return fmt.Errorf("-step %s: cluster %s is not a manifest cluster of -cluster", dir, id)
			}
			objs, err := manifest.LoadFile(f)
			if err != nil {
				return fmt.Errorf("-step %s: %w", dir, err)
			}
			if err := mc.Apply(objs); err != nil {
				return fmt.Errorf("-step %s: cluster %s: %w", dir, id, err)
			}
		}
		if before, err = settle(ctx, built, idx, before, timeout); err != nil {
			return fmt.Errorf("-step %s: %w", dir, err)
		}
		if err := os.WriteFile(out, before, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// settle waits for the index to move from before (a step meant to change
// nothing is given up on after a while) and then to hold still, the
// aggregate and the index settled, and returns it.
func settle(ctx context.Context, built *sources.Built, idx *address.Index, before []byte, timeout time.Duration) ([]byte, error) {
	settled := func() bool { return registry.Settler(built.Aggregate).Settled() && idx.Settled() }
	deadline := time.Now().Add(timeout)
	moved := time.Now().Add(5 * time.Second)
	last, still := before, time.Now()
	for {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("the address index did not settle in %s", timeout)
		}
		cur, err := indexJSON(idx)
		if err != nil {
			return nil, err
		}
		if !settled() || !bytes.Equal(cur, last) {
			last, still = cur, time.Now()
			continue
		}
		if (time.Now().After(moved) || !bytes.Equal(cur, before)) && time.Since(still) >= stepQuiet {
			return cur, nil
		}
	}
}

func indexJSON(idx *address.Index) ([]byte, error) {
	var out bytes.Buffer
	err := address.WriteJSON(&out, idx.Snapshot())
	return out.Bytes(), err
}
