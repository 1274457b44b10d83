package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/meshreg/meshreg/aggregate"
)

// errSourcesNotWired is returned by buildRegistry for source flags it
// cannot build yet.
var errSourcesNotWired = errors.New("registry sources are not wired into xds-server yet")

// buildRegistry turns the source flags into an aggregate registry, not yet
// running. With no source it is an empty aggregate.
//
// TODO(sources): replace with the shared examples sources package, which
// builds the kube, serviceentry and manifest registries from these flags
// exactly as registry-dump does. The tests do not depend on this
// function: they build their registry themselves.
func buildRegistry(_ context.Context, c *config) (*aggregate.Controller, error) {
	agg := aggregate.New(aggregate.Options{})
	if len(c.clusters) > 0 {
		return nil, fmt.Errorf("cluster %s: %w", c.clusters[0].Name, errSourcesNotWired)
	}
	return agg, nil
}
