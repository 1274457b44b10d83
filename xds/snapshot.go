package xds

import (
	"sync"

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

// kindOf returns the kind of a type URL; false for a type the package
// does not serve.
func kindOf(typeURL string) (kind, bool) {
	for k, url := range typeURLs {
		if url == typeURL {
			return kind(k), true
		}
	}
	return 0, false
}

// nodeSnapshot is what a node is served: per type, a version and the
// resources, each with the version at which it last changed. It
// implements go-control-plane's cache.ResourceSnapshot and is immutable
// once handed to the cache.
//
// go-control-plane's own Snapshot versions the resources of a type
// together, and for delta clients hashes every resource again on each
// snapshot; here each resource keeps the version of the update that last
// changed it, so a delta client is sent the resources that changed and no
// others, without hashing.
type nodeSnapshot struct {
	kinds [numKinds]kindSnapshot
}

type kindSnapshot struct {
	version  string
	raw      map[string]types.Resource
	versions map[string]string
	// items are raw with their TTLs, which only state-of-the-world
	// responses read: made on first use.
	items func() map[string]types.ResourceWithTTL
}

var _ cachev3.ResourceSnapshot = (*nodeSnapshot)(nil)

func newKindSnapshot(version string, entries map[string]entry) kindSnapshot {
	ks := kindSnapshot{
		version:  version,
		raw:      make(map[string]types.Resource, len(entries)),
		versions: make(map[string]string, len(entries)),
	}
	for name, e := range entries {
		ks.raw[name] = e.res
		ks.versions[name] = e.version
	}
	raw := ks.raw
	ks.items = sync.OnceValue(func() map[string]types.ResourceWithTTL {
		items := make(map[string]types.ResourceWithTTL, len(raw))
		for name, r := range raw {
			items[name] = types.ResourceWithTTL{Resource: r}
		}
		return items
	})
	return ks
}

func (s *nodeSnapshot) kind(typeURL string) *kindSnapshot {
	if k, ok := kindOf(typeURL); ok {
		return &s.kinds[k]
	}
	return &kindSnapshot{}
}

// GetVersion returns the version of a type: "" for a type not served.
func (s *nodeSnapshot) GetVersion(typeURL string) string { return s.kind(typeURL).version }

// GetResourcesAndTTL returns the resources of a type, by name; they never
// have a TTL. The map is shared and must not be modified.
func (s *nodeSnapshot) GetResourcesAndTTL(typeURL string) map[string]types.ResourceWithTTL {
	if k := s.kind(typeURL); k.items != nil {
		return k.items()
	}
	return nil
}

// GetResources returns the resources of a type, by name. The map is
// shared and must not be modified.
func (s *nodeSnapshot) GetResources(typeURL string) map[string]types.Resource {
	return s.kind(typeURL).raw
}

// ConstructVersionMap does nothing: the versions are kept as resources
// change.
func (s *nodeSnapshot) ConstructVersionMap() error { return nil }

// GetVersionMap returns the version of each resource of a type, by name.
// The map is shared and must not be modified.
func (s *nodeSnapshot) GetVersionMap(typeURL string) map[string]string {
	return s.kind(typeURL).versions
}
