package main

import (
	"fmt"
	"log/slog"

	"github.com/meshreg/meshreg/aggregate"
	"github.com/meshreg/meshreg/internal/sources"
)

// buildRegistry turns the source flags into an aggregate registry, not yet
// running, exactly as registry-dump does. With no source it is an empty
// aggregate. Its errors are usage errors: bad flags, unreadable files.
func buildRegistry(c *config, log *slog.Logger) (*aggregate.Controller, error) {
	cfg, err := c.sources.Config(log)
	if err != nil {
		return nil, err
	}
	if len(cfg.Clusters) == 0 {
		return aggregate.New(aggregate.Options{Logger: log}), nil
	}
	built, err := sources.Build(cfg)
	if err != nil {
		return nil, fmt.Errorf("sources: %w", err)
	}
	return built.Aggregate, nil
}
