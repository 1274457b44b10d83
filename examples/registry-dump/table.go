package main

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/meshreg/meshreg/registry"
)

// writeTable renders a dump for people: one row per service with its
// ports, VIPs per cluster and endpoint counts by health, then the
// workloads count, the network gateways and the diagnostics.
func writeTable(w io.Writer, d *registry.Dump) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SERVICE\tNAMESPACE\tPROVIDER\tRESOLUTION\tPORTS\tVIPS\tENDPOINTS")
	for _, s := range d.Services {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n",
			s.Hostname, s.Namespace, s.Provider, s.Resolution, ports(s.Ports), vips(s), health(s.Endpoints))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(w, "\n%d services, %d endpoints, %d workloads\n", len(d.Services), countEndpoints(d), len(d.Workloads))
	if len(d.NetworkGateways) > 0 {
		fmt.Fprintf(w, "\nNETWORK GATEWAYS (%d)\n", len(d.NetworkGateways))
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "NETWORK\tCLUSTER\tADDRESS\tPORT\tHBONE\tSOURCE")
		for _, g := range d.NetworkGateways {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", g.Network, orDash(g.Cluster), g.Address, portOrDash(g.Port), portOrDash(g.HBONEPort), orDash(g.Source))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	if len(d.Diagnostics) == 0 {
		_, err := fmt.Fprintln(w, "\nno diagnostics")
		return err
	}
	fmt.Fprintf(w, "\nDIAGNOSTICS (%d)\n", len(d.Diagnostics))
	for _, dg := range d.Diagnostics {
		obj := dg.Kind + " " + dg.Namespace + "/" + dg.Name
		if dg.Namespace == "" {
			obj = dg.Kind + " " + dg.Name
		}
		if dg.Cluster != "" {
			obj += " [" + dg.Cluster + "]"
		}
		fmt.Fprintf(w, "%-7s  %s: %s\n", dg.Severity, obj, dg.Message)
	}
	return nil
}

func ports(ps []registry.DumpPort) string {
	if len(ps) == 0 {
		return "-"
	}
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = fmt.Sprintf("%d/%s", p.Port, p.Protocol)
		if p.Name != "" {
			out[i] = p.Name + ":" + out[i]
		}
	}
	return strings.Join(out, ",")
}

// vips renders "cluster=vip,vip cluster2=vip" and auto-allocated ones as
// "auto=vip".
func vips(s registry.DumpService) string {
	var parts []string
	for _, c := range sortedKeys(s.Addresses) {
		if len(s.Addresses[c]) > 0 {
			parts = append(parts, c+"="+strings.Join(s.Addresses[c], ","))
		}
	}
	if len(s.AutoAddresses) > 0 {
		parts = append(parts, "auto="+strings.Join(s.AutoAddresses, ","))
	}
	if s.ExternalName != "" {
		parts = append(parts, "alias="+s.ExternalName)
	}
	if len(parts) == 0 {
		return "-"
	}
	return strings.Join(parts, " ")
}

// health renders endpoint counts by health, in a fixed order, and the
// number of those only their own cluster's proxies may be sent
// (Multi-Cluster Services), e.g. "3 Healthy, 1 Draining; 2 cluster-local".
func health(eps []registry.DumpEndpoint) string {
	if len(eps) == 0 {
		return "0"
	}
	counts := map[string]int{}
	local := 0
	for _, e := range eps {
		counts[e.Health]++
		if e.Discoverability != "" {
			local++
		}
	}
	var parts []string
	for _, h := range []string{"Healthy", "Unhealthy", "Draining", "Terminating"} {
		if n := counts[h]; n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, h))
		}
	}
	out := strings.Join(parts, ", ")
	if local > 0 {
		out += fmt.Sprintf("; %d cluster-local", local)
	}
	return out
}

func countEndpoints(d *registry.Dump) int {
	n := 0
	for _, s := range d.Services {
		n += len(s.Endpoints)
	}
	return n
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func portOrDash(p uint32) string {
	if p == 0 {
		return "-"
	}
	return fmt.Sprint(p)
}
