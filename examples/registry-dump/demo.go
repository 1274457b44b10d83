package main

import (
	"embed"

	"github.com/meshreg/meshreg/test/sources"
)

// demo holds the embedded demo: two clusters, east (the config cluster,
// with the ServiceEntries and WorkloadEntries) and west.
//
//go:embed demo/*.yaml
var demo embed.FS

func demoClusters() ([]sources.Cluster, error) {
	return []sources.Cluster{
		{ID: "east", FS: demo, Manifests: "demo/east.yaml"},
		{ID: "west", FS: demo, Manifests: "demo/west.yaml"},
	}, nil
}
