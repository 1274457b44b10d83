package main

import (
	"errors"
	"flag"
	"io"
	"net"
	"net/netip"
	"slices"
	"testing"

	"github.com/meshreg/meshreg/model"
	"github.com/meshreg/meshreg/test/sources"
)

func TestDefaultAddressesAreLoopback(t *testing.T) {
	c, err := parseFlags(nil, io.Discard)
	if err != nil {
		t.Fatalf("parseFlags: %v", err)
	}
	for name, addr := range map[string]string{"-xds-addr": c.xdsAddr, "-debug-addr": c.debugAddr} {
		ap, err := netip.ParseAddrPort(addr)
		if err != nil {
			t.Fatalf("%s default %q: %v", name, addr, err)
		}
		if !ap.Addr().IsLoopback() {
			t.Errorf("%s default %q does not bind to loopback", name, addr)
		}
		// The address a listener gets from it is loopback too (port 0 so
		// that the test needs no free well-known port).
		lis, err := net.Listen("tcp", net.JoinHostPort(ap.Addr().String(), "0"))
		if err != nil {
			t.Fatalf("listen on %s's host: %v", name, err)
		}
		got := lis.Addr().(*net.TCPAddr).AddrPort().Addr()
		lis.Close()
		if !got.IsLoopback() {
			t.Errorf("%s listener bound to %s, not loopback", name, got)
		}
	}
}

func TestParseFlags(t *testing.T) {
	c, err := parseFlags([]string{
		"-xds-addr", ":18000", "-debug-addr", "0.0.0.0:18001",
		"-cluster", "east=./east", "-f", "./west.yaml", "-kubeconfig", "live=/kc",
		"-domain-suffix", "example.local", "-trust-domain", "td", "-namespace-selector", "mesh=on",
	}, io.Discard)
	if err != nil {
		t.Fatalf("parseFlags: %v", err)
	}
	want := []sources.Cluster{
		{ID: "east", Manifests: "./east"},
		{ID: "Kubernetes", Manifests: "./west.yaml"},
		{ID: "live", Kubeconfig: "/kc"},
	}
	got := c.sources.Clusters
	if len(got) != len(want) {
		t.Fatalf("clusters = %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("cluster %d = %+v, want %+v", i, got[i], want[i])
		}
	}
	if c.xdsAddr != ":18000" || c.debugAddr != "0.0.0.0:18001" || c.sources.DomainSuffix != "example.local" ||
		c.sources.TrustDomain != "td" || c.sources.NamespaceSelector != "mesh=on" {
		t.Errorf("config = %+v", c)
	}
	if c, _ := parseFlags(nil, io.Discard); c.sources.DomainSuffix != model.DefaultDomainSuffix || c.sources.TrustDomain != model.DefaultTrustDomain {
		t.Errorf("defaults = %+v", c)
	}
}

func TestParseFlagsErrors(t *testing.T) {
	for _, args := range [][]string{
		{"-cluster", "noequals"},
		{"-cluster", "=path"},
		{"-nope"},
		{"extra"},
		{"-resolve", "gw.example.net"},
		{"-resolve", "gw.example.net=not-an-ip"},
		{"-resolve", "=192.0.2.1"},
	} {
		_, err := parseFlags(args, io.Discard)
		var ue usageError
		if !errors.As(err, &ue) {
			t.Errorf("parseFlags(%q) = %v, want a usage error", args, err)
		}
	}
	if _, err := parseFlags([]string{"-h"}, io.Discard); !errors.Is(err, flag.ErrHelp) {
		t.Errorf("parseFlags(-h) = %v, want flag.ErrHelp", err)
	}
}

func TestResolveFlag(t *testing.T) {
	c, err := parseFlags([]string{"-resolve", "GW.example.net.=192.0.2.1, 2001:db8::1", "-resolve", "other.example=192.0.2.9"}, io.Discard)
	if err != nil {
		t.Fatalf("parseFlags: %v", err)
	}
	got, err := c.resolve.LookupNetIP(t.Context(), "ip", "gw.example.net")
	want := []netip.Addr{netip.MustParseAddr("192.0.2.1"), netip.MustParseAddr("2001:db8::1")}
	if err != nil || !slices.Equal(got, want) {
		t.Errorf("LookupNetIP(gw.example.net) = %v, %v; want %v", got, err, want)
	}
	if got, _ := c.resolve.LookupNetIP(t.Context(), "ip", "other.example"); !slices.Equal(got, []netip.Addr{netip.MustParseAddr("192.0.2.9")}) {
		t.Errorf("LookupNetIP(other.example) = %v", got)
	}
}
