package main

import (
	"fmt"
	"log/slog"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/meshreg/meshreg/aggregate"
	"github.com/meshreg/meshreg/internal/sources"
)

// buildRegistry turns the source flags into an aggregate registry, not yet
// running, exactly as registry-dump does. With no source it is an empty
// aggregate. Every registry reports its metrics to metrics. Its errors
// are usage errors: bad flags, unreadable files.
func buildRegistry(c *config, log *slog.Logger, metrics prometheus.Registerer) (*aggregate.Controller, error) {
	cfg, err := c.sources.Config(log)
	if err != nil {
		return nil, err
	}
	cfg.Metrics = metrics
	if len(cfg.Clusters) == 0 {
		return aggregate.New(aggregate.Options{Logger: log, Metrics: metrics})
	}
	built, err := sources.Build(cfg)
	if err != nil {
		return nil, fmt.Errorf("sources: %w", err)
	}
	return built.Aggregate, nil
}
