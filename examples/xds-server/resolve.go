package main

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"strings"
)

// staticResolver answers the host names -resolve gave, and hands every
// other name to the system's resolver. It is a flag.Value.
type staticResolver map[string][]netip.Addr

func (r *staticResolver) String() string {
	if r == nil {
		return ""
	}
	return fmt.Sprint(map[string][]netip.Addr(*r))
}

// Set reads one NAME=IP[,IP...].
func (r *staticResolver) Set(v string) error {
	name, ips, ok := strings.Cut(v, "=")
	if !ok || name == "" || ips == "" {
		return fmt.Errorf("%q is not NAME=IP[,IP...]", v)
	}
	var addrs []netip.Addr
	for ip := range strings.SplitSeq(ips, ",") {
		a, err := netip.ParseAddr(strings.TrimSpace(ip))
		if err != nil {
			return fmt.Errorf("%q: %q is not an IP address", v, ip)
		}
		addrs = append(addrs, a)
	}
	if *r == nil {
		*r = staticResolver{}
	}
	(*r)[strings.ToLower(strings.TrimSuffix(name, "."))] = addrs
	return nil
}

// LookupNetIP implements proxyview.Resolver.
func (r staticResolver) LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error) {
	if addrs, ok := r[strings.ToLower(strings.TrimSuffix(host, "."))]; ok {
		return addrs, nil
	}
	return net.DefaultResolver.LookupNetIP(ctx, network, host)
}
