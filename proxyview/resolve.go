package proxyview

import (
	"context"
	"maps"
	"net/netip"
	"slices"
	"time"
)

// Resolver looks up host names. *net.Resolver is one.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// resolveTimeout bounds one lookup.
const resolveTimeout = 5 * time.Second

// resolveLoop resolves the host names of the gateways when they change
// and every Options.GatewayResolveInterval, and marks the gateways when
// an answer changes. It returns when ctx is done.
func (v *View) resolveLoop(ctx context.Context) {
	tick := time.NewTicker(v.conf.GatewayResolveInterval)
	defer tick.Stop()
	looked := map[string]bool{} // the names looked up so far
	for {
		select {
		case <-ctx.Done():
			return
		case <-v.namesChanged:
		case <-tick.C:
		}
		v.mu.Lock()
		names, prev := v.names, v.resolved
		v.mu.Unlock()
		next := make(map[string][]netip.Addr, len(names))
		for _, name := range names {
			lctx, cancel := context.WithTimeout(ctx, resolveTimeout)
			addrs, err := v.conf.Resolver.LookupNetIP(lctx, "ip", name)
			cancel()
			if err != nil {
				if ctx.Err() != nil {
					return
				}
				v.conf.Logger.Warn("network gateway host name not resolved; keeping its previous addresses",
					"host", name, "err", err.Error(), "previous", len(prev[name]))
				addrs = prev[name]
			}
			for i := range addrs {
				addrs[i] = addrs[i].Unmap()
			}
			slices.SortFunc(addrs, netip.Addr.Compare)
			next[name] = slices.Compact(addrs)
		}
		// The answers are stored before the mark that says so, so that
		// the apply that takes the mark (and learns the names were looked
		// up) reads them.
		v.mu.Lock()
		changed := !maps.EqualFunc(next, prev, slices.Equal)
		v.resolved = next
		v.mu.Unlock()
		var first []string
		for _, name := range names {
			if !looked[name] {
				looked[name] = true
				first = append(first, name)
			}
		}
		if changed || len(first) > 0 {
			v.loop.Mark(func(m *marks) {
				m.gateways = true
				m.looked = append(m.looked, first...)
			})
		}
	}
}

// namesLooked reports whether every host name the gateways use has been
// looked up at least once, as the marks taken so far say. Only apply
// calls it.
func (v *View) namesLooked() bool {
	v.mu.Lock()
	defer v.mu.Unlock()
	for _, name := range v.names {
		if !v.looked[name] {
			return false
		}
	}
	return true
}

// wantNames records the host names the gateways use and wakes the
// resolver when they changed; it returns what they resolved to so far.
func (v *View) wantNames(names []string) map[string][]netip.Addr {
	v.mu.Lock()
	defer v.mu.Unlock()
	if !slices.Equal(names, v.names) {
		v.names = names
		select {
		case v.namesChanged <- struct{}{}:
		default:
		}
	}
	return v.resolved
}
