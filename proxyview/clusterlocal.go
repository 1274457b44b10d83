package proxyview

import (
	"net"
	"strings"

	"github.com/meshreg/meshreg/model"
)

// clusterLocal says which hosts are cluster-local: the mesh's service
// settings, then the defaults they did not override (Istio's
// ClusterLocalHosts).
type clusterLocal struct {
	exact    map[model.Hostname]bool
	wildcard map[string]bool // by suffix, "*.foo.com" as ".foo.com", "*" as ""
}

func newClusterLocal(o Options) clusterLocal {
	suffix := o.DomainSuffix
	defaults := []string{"*.kube-system.svc." + suffix, "kubernetes.default.svc." + suffix}
	if host, _, err := net.SplitHostPort(o.DiscoveryAddress); err == nil && host != "" {
		if !strings.HasSuffix(host, suffix) {
			host += "." + suffix
		}
		defaults = append(defaults, host)
	}
	c := clusterLocal{exact: map[model.Hostname]bool{}, wildcard: map[string]bool{}}
	for _, s := range o.ServiceSettings {
		for _, h := range s.Hosts {
			if !s.ClusterLocal {
				// A host set not cluster-local removes the default it
				// names, or the wildcard default it falls under.
				for i, d := range defaults {
					if h == d || (strings.HasPrefix(d, "*") && strings.HasSuffix(h, d[1:])) {
						defaults[i] = ""
					}
				}
			}
			c.set(h, s.ClusterLocal)
		}
	}
	for _, d := range defaults {
		if d != "" {
			c.set(d, true)
		}
	}
	return c
}

func (c clusterLocal) set(h string, local bool) {
	if strings.HasPrefix(h, "*") {
		c.wildcard[h[1:]] = local
	} else {
		c.exact[model.Hostname(h)] = local
	}
}

// is reports whether host h is cluster-local: its exact setting, else
// that of the most specific (longest) wildcard that matches it; false
// when none does.
func (c clusterLocal) is(h model.Hostname) bool {
	if local, ok := c.exact[h]; ok && !h.IsWildcard() {
		return local
	}
	name := string(h)
	if h.IsWildcard() {
		if local, ok := c.wildcard[name[1:]]; ok {
			return local
		}
		name = name[1:]
	}
	best, local := -1, false
	for suffix, l := range c.wildcard {
		if len(suffix) > best && strings.HasSuffix(name, suffix) {
			best, local = len(suffix), l
		}
	}
	return local
}
