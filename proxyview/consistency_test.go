package proxyview

import (
	"fmt"
	"math/rand/v2"
	"net/netip"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/meshreg/meshreg/model"
)

// TestIncrementalAgreesWithRules edits a random registry over many
// generations and checks each snapshot's visible services, and the
// view's inbound targets (from the source's index), against the rules
// evaluated from scratch, and that no later generation changes an
// earlier snapshot's answers.
func TestIncrementalAgreesWithRules(t *testing.T) {
	namespaces := []string{"a", "b", "c", "d"}
	hosts := []string{"api.example.com", "db.internal", "x.a.svc.cluster.local", "y.b.svc.cluster.local"}
	exports := [][]string{nil, {"*"}, {"."}, {"~"}, {"a"}, {"b", "c"}, {".", "d"}, {"*", "~"}, {"~", "a"}}
	for seed := range uint64(20) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 7))
			defaults := exports[rng.IntN(4)] // nil, *, . or ~
			f := newFake()
			v, err := New(f, Options{DefaultServiceExportTo: defaults})
			if err != nil {
				t.Fatal(err)
			}
			type answers struct {
				snap    *Snapshot
				visible map[string][]string
			}
			var history []answers
			for range 30 {
				for range 1 + rng.IntN(6) {
					ns := namespaces[rng.IntN(len(namespaces))]
					h := hosts[rng.IntN(len(hosts))]
					key := model.ServiceKey{Namespace: ns, Hostname: model.Hostname(h)}
					if rng.IntN(5) == 0 {
						delete(f.services, key)
						delete(f.endpoints, key)
					} else {
						svc := serviceEntry(h, ns, rng.IntN(3), exports[rng.IntN(len(exports))]...)
						if rng.IntN(3) == 0 {
							svc.Provider = model.Kubernetes
						}
						var eps []*model.Endpoint
						for range rng.IntN(3) {
							eps = append(eps, ep(fmt.Sprintf("10.0.0.%d", rng.IntN(4)), on("", model.ClusterID([]string{"c1", "c2"}[rng.IntN(2)]))))
						}
						f.add(svc, eps...)
					}
					markFrom(v, f, key)
				}
				v.apply()
				s := v.Snapshot()
				a := answers{snap: s, visible: map[string][]string{}}
				for _, ns := range namespaces {
					a.visible[ns] = keys(s.Services(&Proxy{Namespace: ns}))
					want := keys(bruteVisible(f, ns, defaults))
					if diff := cmp.Diff(want, a.visible[ns]); diff != "" {
						for k, svc := range f.services {
							t.Logf("%s: %s exportTo %q created %s", k, svc.Provider, svc.ExportTo, svc.CreationTime)
						}
						t.Logf("defaults %q", defaults)
						t.Fatalf("generation %d, visible from %s (-rules +view):\n%s", s.Generation(), ns, diff)
					}
					for i := range 4 {
						ip := netip.AddrFrom4([4]byte{10, 0, 0, byte(i)})
						p := &Proxy{Namespace: ns, Cluster: "c1", IPs: []netip.Addr{ip}}
						got := targetStrings(v.Inbound(p))
						if diff := cmp.Diff(bruteInbound(f, p), got); diff != "" {
							t.Fatalf("generation %d, inbound of %s in %s (-rules +view):\n%s", s.Generation(), ip, ns, diff)
						}
					}
				}
				history = append(history, a)
			}
			for _, a := range history {
				for _, ns := range namespaces {
					if diff := cmp.Diff(a.visible[ns], keys(a.snap.Services(&Proxy{Namespace: ns}))); diff != "" {
						t.Fatalf("generation %d changed afterwards:\n%s", a.snap.Generation(), diff)
					}
				}
			}
		})
	}
}

// bruteVisible applies the visibility rules to every service, from
// scratch.
func bruteVisible(f *fakeSource, ns string, defaults []string) []*model.Service {
	visible := func(svc *model.Service) (ok, public bool) {
		e := svc.ExportTo
		if len(e) == 0 {
			e = defaults
			if e == nil {
				e = []string{"*"} // Options' default
			}
		}
		if slices.Contains(e, "*") {
			return true, true
		}
		if slices.Contains(e, "~") {
			return false, false
		}
		return slices.Contains(e, ns) || slices.Contains(e, ".") && svc.Namespace == ns, false
	}
	rank := func(svc *model.Service, public bool) int {
		switch {
		case svc.Namespace == ns:
			return 0
		case svc.Provider == model.Kubernetes:
			return 1
		case !public:
			return 2
		}
		return 3
	}
	best := map[model.Hostname]*model.Service{}
	bestRank := map[model.Hostname]int{}
	for _, svc := range f.services {
		ok, public := visible(svc)
		if !ok {
			continue
		}
		r := rank(svc, public)
		if b, found := best[svc.Hostname]; !found || r < bestRank[svc.Hostname] || r == bestRank[svc.Hostname] && model.ComparePrecedence(svc, b) < 0 {
			best[svc.Hostname], bestRank[svc.Hostname] = svc, r
		}
	}
	out := make([]*model.Service, 0, len(best))
	for _, s := range best {
		out = append(out, s)
	}
	slices.SortFunc(out, func(a, b *model.Service) int { return compareVisible(a, b) })
	return out
}

func bruteInbound(f *fakeSource, p *Proxy) []string {
	var out []model.ServiceTarget
	for key, eps := range f.endpoints {
		svc := f.services[key]
		if svc == nil || svc.Namespace != p.Namespace {
			continue
		}
		for _, e := range eps {
			if !slices.Contains(e.Addresses, p.IPs[0]) || svc.Provider == model.Kubernetes && e.Cluster != p.Cluster {
				continue
			}
			port, _ := svc.PortByName(e.ServicePortName)
			out = append(out, model.ServiceTarget{Service: svc, Port: port, TargetPort: e.Port})
		}
	}
	slices.SortFunc(out, compareTargets)
	return targetStrings(slices.CompactFunc(out, func(a, b model.ServiceTarget) bool { return compareTargets(a, b) == 0 }))
}

func targetStrings(ts []model.ServiceTarget) []string {
	var out []string
	for _, t := range ts {
		out = append(out, fmt.Sprintf("%s:%d->%d", t.Service.Key(), t.Port.Port, t.TargetPort))
	}
	return out
}

// compareTargets orders targets as ProxyTargets does: by service key,
// port and target port.
func compareTargets(a, b model.ServiceTarget) int {
	if c := a.Service.Key().Compare(b.Service.Key()); c != 0 {
		return c
	}
	if a.Port.Port != b.Port.Port {
		return int(a.Port.Port) - int(b.Port.Port)
	}
	return int(a.TargetPort) - int(b.TargetPort)
}
