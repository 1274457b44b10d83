package main

import (
	"fmt"
	"log/slog"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/meshreg/meshreg/aggregate"
	"github.com/meshreg/meshreg/test/sources"
)

// buildRegistry turns the source flags into an aggregate registry, not yet
// running, exactly as registry-dump does, and returns what it was built
// from (nil with no source: then it is an empty aggregate). Every
// registry reports its metrics to metrics. Its errors are usage errors:
// bad flags, unreadable files.
func buildRegistry(c *config, log *slog.Logger, metrics prometheus.Registerer) (*aggregate.Controller, *sources.Built, error) {
	cfg, err := c.sources.Config(log)
	if err != nil {
		return nil, nil, err
	}
	cfg.Metrics = metrics
	if len(cfg.Clusters) == 0 {
		agg, err := aggregate.New(aggregate.Options{Logger: log, Metrics: metrics})
		return agg, nil, err
	}
	built, err := sources.Build(cfg)
	if err != nil {
		return nil, nil, fmt.Errorf("sources: %w", err)
	}
	return built.Aggregate, built, nil
}
