package serviceentry

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	networkingv1 "istio.io/client-go/pkg/apis/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/meshreg/meshreg/model"
	"github.com/meshreg/meshreg/registry"
)

// seYAML is a ServiceEntry of host svc.example.com in namespace ns:
// created at day (of January 2024), with the spec lines given (ports,
// resolution, ...), MESH_INTERNAL and one inline endpoint unless they
// say otherwise.
func seYAML(ns, name string, day int, spec ...string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "apiVersion: networking.istio.io/v1\nkind: ServiceEntry\nmetadata: {name: %s, namespace: %s, creationTimestamp: \"2024-01-%02dT00:00:00Z\"}\nspec:\n  hosts: [svc.example.com]\n", name, ns, day)
	has := func(key string) bool {
		return slices.ContainsFunc(spec, func(s string) bool { return strings.HasPrefix(s, key+":") })
	}
	if !has("resolution") {
		b.WriteString("  resolution: STATIC\n")
	}
	if !has("endpoints") && !has("workloadSelector") {
		fmt.Fprintf(&b, "  endpoints: [{address: 10.0.0.%d}]\n", day)
	}
	for _, s := range spec {
		b.WriteString("  " + s + "\n")
	}
	return b.String()
}

// precedenceEntries converts ServiceEntries and orders them as the state
// does for their host (the winner first).
func precedenceEntries(t *testing.T, yamls ...string) []*entry {
	t.Helper()
	var es []*entry
	for _, y := range yamls {
		e, err := newEntry(loadSE(t, y), convCtx{Cluster: "Kubernetes"}, nsView{})
		if err != nil {
			t.Fatalf("newEntry: %v", err)
		}
		es = append(es, e)
	}
	slices.SortFunc(es, func(a, b *entry) int {
		return model.ComparePrecedence(a.service("svc.example.com"), b.service("svc.example.com"))
	})
	return es
}

func describePorts(ps []model.Port) []string {
	var out []string
	for _, p := range ps {
		s := fmt.Sprintf("%s/%d/%s", p.Name, p.Port, p.Protocol)
		if p.Origin != "" {
			s += " from " + p.Origin
		}
		out = append(out, s)
	}
	return out
}

func describeUnmerged(us []unmerged) []string {
	var out []string
	for _, u := range us {
		why := "differs in " + strings.Join(u.differs, ",")
		if u.holder != nil {
			why = "held by " + u.holder.ref.Name
		}
		out = append(out, fmt.Sprintf("%s %s/%d: %s", u.entry.ref.Name, u.port.Name, u.port.Port, why))
	}
	return out
}

// The ports of a host's entries merge as Istio's sidecar scope merges
// them (appendSidecarServices, canMergeServices), but for a name already
// the host's, which meshreg does not merge.
func TestMergeService(t *testing.T) {
	const (
		http  = "ports: [{number: 80, name: http, protocol: HTTP}]"
		grpc  = "ports: [{number: 9090, name: grpc, protocol: GRPC}]"
		extra = "ports: [{number: 81, name: extra, protocol: TCP}]"
	)
	for _, tc := range []struct {
		name     string
		entries  []string
		ports    []string
		unmerged []string
	}{{
		name:    "one entry",
		entries: []string{seYAML("ns", "a", 1, http)},
		ports:   []string{"http/80/HTTP"},
	}, {
		name:    "disjoint ports: the younger's appended",
		entries: []string{seYAML("ns", "young", 2, grpc), seYAML("ns", "old", 1, http)},
		ports:   []string{"http/80/HTTP", "grpc/9090/GRPC from young"},
	}, {
		name:    "a port both declare alike is the older's, silently",
		entries: []string{seYAML("ns", "old", 1, http), seYAML("ns", "young", 2, "ports: [{number: 80, name: http, protocol: HTTP, targetPort: 8080}, {number: 81, name: extra, protocol: TCP}]")},
		ports:   []string{"http/80/HTTP", "extra/81/TCP from young"},
	}, {
		name:     "one number, two names: the older's kept",
		entries:  []string{seYAML("ns", "old", 1, http), seYAML("ns", "young", 2, "ports: [{number: 80, name: web, protocol: HTTP}]")},
		ports:    []string{"http/80/HTTP"},
		unmerged: []string{"young web/80: held by old"},
	}, {
		name:     "one number, two protocols: the older's kept",
		entries:  []string{seYAML("ns", "old", 1, http), seYAML("ns", "young", 2, "ports: [{number: 80, name: http, protocol: TCP}]")},
		ports:    []string{"http/80/HTTP"},
		unmerged: []string{"young http/80: held by old"},
	}, {
		name:     "one name, two numbers: not merged (Istio merges it)",
		entries:  []string{seYAML("ns", "old", 1, http), seYAML("ns", "young", 2, "ports: [{number: 8080, name: http, protocol: HTTP}]")},
		ports:    []string{"http/80/HTTP"},
		unmerged: []string{"young http/8080: held by old"},
	}, {
		name: "three entries: the middle one's port holds against the youngest",
		entries: []string{
			seYAML("ns", "c", 3, "ports: [{number: 81, name: py, protocol: TCP}, {number: 82, name: pz, protocol: TCP}]"),
			seYAML("ns", "a", 1, http),
			seYAML("ns", "b", 2, "ports: [{number: 81, name: px, protocol: TCP}]"),
		},
		ports:    []string{"http/80/HTTP", "px/81/TCP from b", "pz/82/TCP from c"},
		unmerged: []string{"c py/81: held by b"},
	}, {
		name:    "same creation time: by name",
		entries: []string{seYAML("ns", "b", 1, grpc), seYAML("ns", "a", 1, http)},
		ports:   []string{"http/80/HTTP", "grpc/9090/GRPC from b"},
	}, {
		name:     "another resolution: not merged",
		entries:  []string{seYAML("ns", "old", 1, http), seYAML("ns", "young", 2, extra, "resolution: DNS")},
		ports:    []string{"http/80/HTTP"},
		unmerged: []string{"young extra/81: differs in resolution"},
	}, {
		name:     "other labels: not merged",
		entries:  []string{seYAML("ns", "old", 1, http), strings.Replace(seYAML("ns", "young", 2, extra), "namespace: ns,", "namespace: ns, labels: {team: x},", 1)},
		ports:    []string{"http/80/HTTP"},
		unmerged: []string{"young extra/81: differs in labels"},
	}, {
		name:     "a workloadSelector against inline endpoints: not merged",
		entries:  []string{seYAML("ns", "old", 1, http), seYAML("ns", "young", 2, extra, "workloadSelector: {labels: {app: a}}")},
		ports:    []string{"http/80/HTTP"},
		unmerged: []string{"young extra/81: differs in workloadSelector"},
	}, {
		name:    "the same workloadSelector: merged",
		entries: []string{seYAML("ns", "old", 1, http, "workloadSelector: {labels: {app: a}}"), seYAML("ns", "young", 2, extra, "workloadSelector: {labels: {app: a}}")},
		ports:   []string{"http/80/HTTP", "extra/81/TCP from young"},
	}, {
		name:     "exportTo * against none: not merged, as in Istio",
		entries:  []string{seYAML("ns", "old", 1, http), seYAML("ns", "young", 2, extra, `exportTo: ["*"]`)},
		ports:    []string{"http/80/HTTP"},
		unmerged: []string{"young extra/81: differs in exportTo"},
	}, {
		name:    "exportTo as a set: the same namespaces in another order merge",
		entries: []string{seYAML("ns", "old", 1, http, `exportTo: [".", "other"]`), seYAML("ns", "young", 2, extra, `exportTo: ["other", "."]`)},
		ports:   []string{"http/80/HTTP", "extra/81/TCP from young"},
	}, {
		name: "several reasons, and the port both declare alike is no warning",
		entries: []string{seYAML("ns", "old", 1, http), strings.Replace(seYAML("ns", "young", 2,
			"ports: [{number: 80, name: http, protocol: HTTP}, {number: 81, name: extra, protocol: TCP}]", "resolution: DNS"),
			"namespace: ns,", "namespace: ns, labels: {team: x},", 1)},
		ports:    []string{"http/80/HTTP"},
		unmerged: []string{"young extra/81: differs in resolution,labels"},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			es := precedenceEntries(t, tc.entries...)
			svc, skipped := mergeService("svc.example.com", es)
			if got := describePorts(svc.Ports); !slices.Equal(got, tc.ports) {
				t.Errorf("ports:\n got %q\nwant %q", got, tc.ports)
			}
			if got := describeUnmerged(skipped); !slices.Equal(got, tc.unmerged) {
				t.Errorf("unmerged:\n got %q\nwant %q", got, tc.unmerged)
			}
			if len(es) > 1 && len(svc.Ports) == len(es[0].service("svc.example.com").Ports) && svc != es[0].service("svc.example.com") {
				t.Error("nothing merged, yet the service is a copy of the winner's")
			}
			for _, e := range es {
				for _, p := range e.service("svc.example.com").Ports {
					if p.Origin != "" {
						t.Errorf("entry %s's own service was written: port %s has origin %s", e.ref.Name, p.Name, p.Origin)
					}
				}
			}
		})
	}
}

// The merged service keeps the oldest entry's attributes, whatever the
// younger entries say.
func TestMergeServiceKeepsWinnersAttributes(t *testing.T) {
	es := precedenceEntries(t,
		seYAML("ns", "young", 2, "ports: [{number: 9090, name: grpc, protocol: GRPC}]", "location: MESH_EXTERNAL",
			"addresses: [10.90.0.2]", "subjectAltNames: [young-sa]"),
		seYAML("ns", "old", 1, "ports: [{number: 80, name: http, protocol: HTTP}]", "location: MESH_INTERNAL",
			"addresses: [10.90.0.1]", "subjectAltNames: [old-sa]"))
	svc, _ := mergeService("svc.example.com", es)
	old := es[0].service("svc.example.com")
	if svc.Name != "old" || svc.MeshExternal || !slices.Equal(svc.ServiceAccounts, []string{"old-sa"}) ||
		fmt.Sprint(svc.Addresses) != fmt.Sprint(old.Addresses) || !svc.CreationTime.Equal(old.CreationTime) {
		t.Errorf("merged service %+v: want the attributes of the oldest entry %+v", svc, old)
	}
	if got := describePorts(svc.Ports); !slices.Equal(got, []string{"http/80/HTTP", "grpc/9090/GRPC from young"}) {
		t.Errorf("ports %q", got)
	}
}

// dumpOf runs a controller over the objects, applied one by one in the
// order given, and returns its dump.
func dumpOf(t *testing.T, yamls []string) string {
	t.Helper()
	var out bytes.Buffer
	synctest.Test(t, func(t *testing.T) {
		src, _ := NewStaticSource()
		c := start(t, src, Options{})
		synctest.Wait()
		for _, y := range yamls {
			if err := src.Upsert(load(t, y)...); err != nil {
				t.Fatal(err)
			}
			synctest.Wait()
		}
		if err := registry.WriteJSON(&out, c); err != nil {
			t.Fatal(err)
		}
	})
	return out.String()
}

// The merged service, its endpoints and the warnings are a function of
// the entries, whatever order they arrive in, and whatever came and went
// before.
func TestMergeOrderIndependent(t *testing.T) {
	entries := []string{
		seYAML("ns", "a", 1, "ports: [{number: 80, name: http, protocol: HTTP}]"),
		seYAML("ns", "b", 2, "ports: [{number: 81, name: px, protocol: TCP}, {number: 80, name: http, protocol: HTTP}]"),
		seYAML("ns", "c", 3, "ports: [{number: 81, name: py, protocol: TCP}, {number: 82, name: pz, protocol: TCP}]"),
		seYAML("ns", "d", 3, "ports: [{number: 83, name: pw, protocol: TCP}]", "resolution: DNS"),
	}
	want := dumpOf(t, entries)
	for _, s := range []string{`"name": "px"`, `"name": "pz"`, "not merged into the host"} {
		if !strings.Contains(want, s) {
			t.Fatalf("the reference dump lacks %s:\n%s", s, want)
		}
	}
	perms := [][]int{{3, 2, 1, 0}, {2, 0, 3, 1}, {1, 3, 0, 2}, {0, 2, 1, 3}}
	for _, p := range perms {
		var ordered []string
		for _, i := range p {
			ordered = append(ordered, entries[i])
		}
		if got := dumpOf(t, ordered); got != want {
			t.Errorf("order %v: dump differs:\n got %s\nwant %s", p, got, want)
		}
	}
	// A younger entry that first held the host alone, with other ports,
	// ends as the others' younger.
	first := seYAML("ns", "c", 3, "ports: [{number: 80, name: other, protocol: TCP}]")
	if got := dumpOf(t, append([]string{first}, entries...)); got != want {
		t.Errorf("after an update: dump differs:\n got %s\nwant %s", got, want)
	}
}

// The warnings name the younger entry and the one that holds the port,
// and say what became of the endpoints; a tenant's entry in another
// namespace adds no port to this namespace's host.
func TestMergeWarningsAndNamespaces(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src, _ := NewStaticSource(load(t, strings.Join([]string{
			seYAML("ns", "old", 1, "ports: [{number: 80, name: http, protocol: HTTP}]"),
			seYAML("ns", "young", 2, "ports: [{number: 80, name: web, protocol: HTTP}, {number: 8080, name: http, protocol: HTTP}]"),
			seYAML("tenant", "grab", 3, "ports: [{number: 9999, name: admin, protocol: TCP}]", `exportTo: ["*"]`),
			seYAML("tenant", "early", 1, "ports: [{number: 9998, name: debug, protocol: TCP}]", `exportTo: ["*"]`),
		}, "---\n"))...)
		c := start(t, src, Options{})
		synctest.Wait()
		var own, tenant *model.Service
		for _, s := range c.Services() {
			switch s.Namespace {
			case "ns":
				own = s
			case "tenant":
				tenant = s
			}
		}
		if own == nil || tenant == nil {
			t.Fatalf("services %v: want one per namespace", c.Services())
		}
		if got := describePorts(own.Ports); !slices.Equal(got, []string{"http/80/HTTP"}) {
			t.Errorf("ns's host has ports %q: want its own entries' alone", got)
		}
		if got := describePorts(tenant.Ports); !slices.Equal(got, []string{"debug/9998/TCP", "admin/9999/TCP from grab"}) {
			t.Errorf("tenant's host has ports %q", got)
		}
		eps := c.Endpoints(own.Key(), registry.EndpointQuery{})
		var got []string
		for _, ep := range eps {
			got = append(got, fmt.Sprintf("%s %s:%d", ep.ServicePortName, ep.Address(), ep.Port))
		}
		// young's http endpoint serves port 80, the host's port of that
		// name, as Istio's EDS sends it; its web endpoint is not used.
		if want := []string{"http 10.0.0.1:80", "http 10.0.0.2:8080"}; !slices.Equal(got, want) {
			t.Errorf("ns's endpoints %q, want %q", got, want)
		}
		var msgs []string
		for _, d := range c.Diagnostics() {
			if d.Kind != "ServiceEntry" || d.Severity != model.Warning {
				continue
			}
			if d.Namespace != "ns" || d.Name != "young" {
				t.Errorf("warning on %s/%s: want only young's: %s", d.Namespace, d.Name, d.Message)
			}
			msgs = append(msgs, d.Message)
		}
		slices.Sort(msgs)
		want := []string{
			"host svc.example.com: port 80 (web/HTTP) not merged into the host: entry old declares port 80 as http/HTTP, which is kept; its endpoints are not used",
			"host svc.example.com: port 8080 (http/HTTP) not merged into the host: entry old gives the name http to port 80, which is kept; its endpoints serve the host's port 80 of that name",
		}
		if !slices.Equal(msgs, want) {
			t.Errorf("warnings:\n got %q\nwant %q", msgs, want)
		}
		// Deleting the younger entry removes its warnings.
		src.DeleteServiceEntry("ns", "young")
		synctest.Wait()
		for _, d := range c.Diagnostics() {
			if d.Name == "young" {
				t.Errorf("warning left after young's deletion: %s", d.Message)
			}
		}
	})
}

// FuzzMergeService merges two arbitrary entries of one host: no panic;
// the service's port names and numbers are unique, the oldest entry's
// ports come first, unchanged; every port of the younger entry is the
// host's as declared, merged, or reported; every endpoint is for a port
// of the service.
func FuzzMergeService(f *testing.F) {
	f.Add([]byte(`{"resolution":"STATIC","ports":[{"number":80,"name":"http"}],"endpoints":[{"address":"1.2.3.4"}]}`),
		[]byte(`{"resolution":"STATIC","ports":[{"number":80,"name":"web"},{"number":81,"name":"http"},{"number":82,"name":"x"}],"endpoints":[{"address":"1.2.3.5"}]}`))
	f.Add([]byte(`{"resolution":"DNS","ports":[{"number":443,"name":"tls","protocol":"TLS"}]}`),
		[]byte(`{"resolution":"DNS","exportTo":["."],"ports":[{"number":443,"name":"tls","protocol":"HTTPS"}]}`))
	f.Fuzz(func(t *testing.T, old, young []byte) {
		var es []*entry
		for i, spec := range [][]byte{old, young} {
			se := &networkingv1.ServiceEntry{}
			se.Name, se.Namespace = []string{"old", "young"}[i], "ns"
			se.CreationTimestamp = metav1.NewTime(time.Date(2024, 1, 1+i, 0, 0, 0, 0, time.UTC))
			if se.Spec.UnmarshalJSON(spec) != nil {
				return
			}
			se.Spec.Hosts = []string{"svc.example.com"}
			e, err := newEntry(se, testCtx, nsView{})
			if err != nil {
				return
			}
			es = append(es, e)
		}
		svc, skipped := mergeService("svc.example.com", es)
		names, numbers := map[string]bool{}, map[uint32]bool{}
		for _, p := range svc.Ports {
			if names[p.Name] || numbers[p.Port] {
				t.Fatalf("port %s/%d twice in %v", p.Name, p.Port, svc.Ports)
			}
			names[p.Name], numbers[p.Port] = true, true
		}
		if own := es[0].service("svc.example.com").Ports; !slices.Equal(svc.Ports[:len(own)], own) {
			t.Fatalf("ports %v do not start with the oldest entry's %v", svc.Ports, own)
		}
		for _, p := range es[1].ports {
			q, ok := svc.PortByNumber(p.Port)
			served := ok && q.Name == p.Name && q.Protocol == p.Protocol
			reported := slices.ContainsFunc(skipped, func(u unmerged) bool { return u.port == p })
			if served == reported {
				t.Fatalf("port %v: served %v, reported %v", p, served, reported)
			}
		}
		for _, ep := range mergeEndpoints(svc, es) {
			if _, ok := svc.PortByName(ep.ServicePortName); !ok {
				t.Fatalf("endpoint for port %q, which the service lacks", ep.ServicePortName)
			}
		}
	})
}
