package xds

import (
	"github.com/envoyproxy/go-control-plane/pkg/cache/types"
	cachev3 "github.com/envoyproxy/go-control-plane/pkg/cache/v3"
	resourcev3 "github.com/envoyproxy/go-control-plane/pkg/resource/v3"
)

// kind indexes the four resource types the package serves.
type kind int

const (
	listeners kind = iota
	routes
	clusters
	endpoints
	numKinds
)

// typeURLs are the type URLs of the kinds, in kind order.
var typeURLs = [numKinds]string{
	resourcev3.ListenerType, resourcev3.RouteType, resourcev3.ClusterType, resourcev3.EndpointType,
}

// Caches holds one go-control-plane LinearCache per resource type. A
// LinearCache versions each resource on its own, so a change to one
// service's resources is sent only to the clients watching them, and
// delta clients receive only what changed.
type Caches struct {
	byKind [numKinds]*cachev3.LinearCache
	mux    *cachev3.MuxCache
}

// NewCaches returns empty caches.
func NewCaches() *Caches {
	c := &Caches{mux: &cachev3.MuxCache{Caches: map[string]cachev3.Cache{}}}
	for k, url := range typeURLs {
		c.byKind[k] = cachev3.NewLinearCache(url)
		c.mux.Caches[url] = c.byKind[k]
	}
	c.mux.Classify = func(r *cachev3.Request) string { return r.GetTypeUrl() }
	c.mux.ClassifyDelta = func(r *cachev3.DeltaRequest) string { return r.GetTypeUrl() }
	return c
}

// Cache returns the cache a go-control-plane server serves: requests are
// routed to the cache of their type URL; other types are refused.
func (c *Caches) Cache() cachev3.Cache { return c.mux }

// Resources returns a copy of the resources of one type URL, by name; nil
// for a type the caches do not hold.
func (c *Caches) Resources(typeURL string) map[string]types.Resource {
	for k, url := range typeURLs {
		if url == typeURL {
			return c.byKind[k].GetResources()
		}
	}
	return nil
}

// Counts returns the number of resources of each type URL.
func (c *Caches) Counts() map[string]int {
	out := make(map[string]int, numKinds)
	for k, url := range typeURLs {
		out[url] = c.byKind[k].NumResources()
	}
	return out
}
