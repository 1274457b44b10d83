package wds

import (
	"maps"
	"slices"
	"strings"

	discoverygrpc "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"

	"github.com/meshreg/meshreg/address"
	"github.com/meshreg/meshreg/address/workloadapi"
)

// wildcard is the name that subscribes to every resource.
const wildcard = "*"

// client is what one stream's client asks for and holds, and computes
// what it must be sent. Only the stream's goroutine uses it.
type client struct {
	// wildcard says the client wants every resource.
	wildcard bool
	// names are the names it subscribed to, "*" aside: resource keys
	// and "network/IP" names.
	names map[string]struct{}
	// held are the resources it holds, by key.
	held map[string]held
	// absent are the subscribed names it was told do not exist (in
	// removed_resources), so that it is told once.
	absent map[string]struct{}
}

// held is a resource a client holds.
type held struct {
	version string
	// aliases are the subscribed names, other than its key, it was sent
	// for; sorted.
	aliases []string
	// reported says the client reported it on reconnection
	// (initial_resource_versions): its aliases are unknown.
	reported bool
}

// newClient returns the client of a stream's first request: a first
// request that subscribes to no name is a wildcard subscription (the
// "legacy wildcard" of the xDS protocol); subscribing to "*" and
// unsubscribing from it in the same request, as ztunnel does on demand,
// subscribes to nothing. The names of initial_resource_versions are what
// the client holds; unless it is a wildcard client, it stays subscribed
// to them, as istiod reads them.
func newClient(first *discoverygrpc.DeltaDiscoveryRequest) *client {
	c := &client{names: map[string]struct{}{}, held: map[string]held{}, absent: map[string]struct{}{}}
	c.wildcard = len(first.GetResourceNamesSubscribe()) == 0
	c.subscribe(first.GetResourceNamesSubscribe())
	c.unsubscribe(first.GetResourceNamesUnsubscribe())
	for name, version := range first.GetInitialResourceVersions() {
		c.held[name] = held{version: version, reported: true}
		if !c.wildcard && name != wildcard {
			c.names[name] = struct{}{}
		}
	}
	return c
}

// subscribe adds names; it reports whether the client turned wildcard,
// which makes every resource due.
func (c *client) subscribe(names []string) (turnedWildcard bool) {
	for _, n := range names {
		if n == wildcard {
			turnedWildcard = turnedWildcard || !c.wildcard
			c.wildcard = true
			continue
		}
		c.names[n] = struct{}{}
	}
	return turnedWildcard
}

// unsubscribe drops names. The resources the client held only for them
// are forgotten without a word: the client drops them itself.
func (c *client) unsubscribe(names []string) {
	if len(names) == 0 {
		return
	}
	dropped := map[string]struct{}{}
	for _, n := range names {
		if n == wildcard {
			c.wildcard = false
			continue
		}
		delete(c.names, n)
		delete(c.absent, n)
		dropped[n] = struct{}{}
	}
	for k, h := range c.held {
		if h.reported {
			continue
		}
		kept := slices.DeleteFunc(slices.Clone(h.aliases), func(a string) bool { _, ok := dropped[a]; return ok })
		if _, named := c.names[k]; c.wildcard || named || len(kept) > 0 {
			h.aliases = kept
			c.held[k] = h
			continue
		}
		delete(c.held, k)
	}
}

// encodeFunc encodes a resource; false skips it.
type encodeFunc func(key string, a *workloadapi.Address) (encoded, bool)

// diff brings the client to snap and returns what it must be sent:
// the resources added or changed for it, sorted by name, and the names
// removed, sorted. It looks at the keys given (those that changed since
// the client was last brought up to date), at every subscribed name,
// resolved again since an IP can move, and at what the client holds
// for a name; with all, at every resource.
func (c *client) diff(snap *address.Snapshot, keys map[string]struct{}, all bool, encode encodeFunc) ([]*discoverygrpc.Resource, []string) {
	due := maps.Clone(keys)
	if due == nil {
		due = map[string]struct{}{}
	}
	if all && c.wildcard {
		for k := range snap.All() {
			due[k] = struct{}{}
		}
	}
	// named: the keys some name resolves to; aliases: the names such a
	// resource goes by (address.Aliases), sent with it as Istio does.
	named := map[string]struct{}{}
	aliases := map[string][]string{}
	var missing []string
	for n := range c.names {
		rs := snap.Lookup(n)
		if len(rs) == 0 {
			missing = append(missing, n)
			continue
		}
		delete(c.absent, n)
		for _, r := range rs {
			named[r.Key] = struct{}{}
			due[r.Key] = struct{}{}
			if _, ok := aliases[r.Key]; !ok {
				aliases[r.Key] = address.Aliases(r.Address)
			}
		}
	}
	if all || !c.wildcard || len(c.names) > 0 {
		for k := range c.held {
			due[k] = struct{}{}
		}
	}

	var resources []*discoverygrpc.Resource
	removed := map[string]struct{}{}
	for k := range due {
		a := snap.Get(k)
		_, isNamed := named[k]
		h, had := c.held[k]
		if a == nil || !(c.wildcard || isNamed) {
			if had {
				removed[k] = struct{}{}
				delete(c.held, k)
			}
			continue
		}
		e, ok := encode(k, a)
		if !ok {
			continue
		}
		al := aliases[k]
		slices.Sort(al)
		if had && h.version == e.version && (h.reported || slices.Equal(h.aliases, al)) {
			c.held[k] = held{version: e.version, aliases: al}
			continue
		}
		c.held[k] = held{version: e.version, aliases: al}
		resources = append(resources, &discoverygrpc.Resource{Name: k, Version: e.version, Aliases: al, Resource: e.any})
	}
	for _, n := range missing {
		if _, told := c.absent[n]; told {
			continue
		}
		c.absent[n] = struct{}{}
		removed[n] = struct{}{}
	}
	slices.SortFunc(resources, func(a, b *discoverygrpc.Resource) int { return strings.Compare(a.Name, b.Name) })
	return resources, slices.Sorted(maps.Keys(removed))
}
