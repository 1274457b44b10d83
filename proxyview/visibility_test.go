package proxyview

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/meshreg/meshreg/model"
)

func TestVisibleServices(t *testing.T) {
	tests := []struct {
		name     string
		defaults []string
		services []string // built below by name
		from     string
		want     []string
	}{
		{name: "unset exportTo is the mesh default, public", from: "other",
			want: []string{"a/public.a.svc.cluster.local", "a/unset.a.svc.cluster.local", "b/listed.b.svc.cluster.local", "b/star-and-none.b.svc.cluster.local"}},
		{name: "own namespace sees its private services", from: "a",
			want: []string{"a/dot.a.svc.cluster.local", "a/own-by-name.a.svc.cluster.local", "a/public.a.svc.cluster.local", "a/unset.a.svc.cluster.local", "b/listed.b.svc.cluster.local", "b/star-and-none.b.svc.cluster.local"}},
		{name: "a namespace listed sees the service", from: "c",
			want: []string{"a/public.a.svc.cluster.local", "a/unset.a.svc.cluster.local", "b/listed.b.svc.cluster.local", "b/only-c.b.svc.cluster.local", "b/star-and-none.b.svc.cluster.local"}},
		{name: "~ hides from its own namespace too", from: "b",
			want: []string{"a/public.a.svc.cluster.local", "a/unset.a.svc.cluster.local", "b/listed.b.svc.cluster.local", "b/star-and-none.b.svc.cluster.local"}},
		{name: "mesh default private", defaults: []string{"."}, from: "other",
			want: []string{"a/public.a.svc.cluster.local", "b/listed.b.svc.cluster.local", "b/star-and-none.b.svc.cluster.local"}},
		{name: "mesh default private, own namespace", defaults: []string{"."}, from: "a",
			want: []string{"a/dot.a.svc.cluster.local", "a/own-by-name.a.svc.cluster.local", "a/public.a.svc.cluster.local", "a/unset.a.svc.cluster.local", "b/listed.b.svc.cluster.local", "b/star-and-none.b.svc.cluster.local"}},
		{name: "mesh default none", defaults: []string{"~"}, from: "a",
			want: []string{"a/dot.a.svc.cluster.local", "a/own-by-name.a.svc.cluster.local", "a/public.a.svc.cluster.local", "b/listed.b.svc.cluster.local", "b/star-and-none.b.svc.cluster.local"}},
		{name: "mesh default a namespace list", defaults: []string{"c"}, from: "c",
			want: []string{"a/public.a.svc.cluster.local", "a/unset.a.svc.cluster.local", "b/listed.b.svc.cluster.local", "b/only-c.b.svc.cluster.local", "b/star-and-none.b.svc.cluster.local"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFake()
			f.add(kube("unset", "a"))
			f.add(kube("public", "a", "*"))
			f.add(kube("dot", "a", "."))
			f.add(kube("own-by-name", "a", "a"))
			f.add(kube("hidden", "b", "~"))
			f.add(kube("only-c", "b", "c"))
			f.add(kube("listed", "b", "*", "c"))        // "*" wins over a list
			f.add(kube("star-and-none", "b", "*", "~")) // and over "~"
			s := f.snapshot(t, Options{DefaultServiceExportTo: tt.defaults})
			visible := s.Services(&Proxy{Namespace: tt.from})
			if !slices.IsSortedFunc(visible, func(a, b *model.Service) int { return strings.Compare(string(a.Hostname), string(b.Hostname)) }) {
				t.Errorf("services not sorted by hostname: %v", keys(visible))
			}
			got := keys(visible)
			slices.Sort(got)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("services visible from %q (-want +got):\n%s", tt.from, diff)
			}
			// Visible agrees with the list for services whose hostname
			// nothing else claims.
			for _, svc := range f.services {
				if in := slices.Contains(got, svc.Key().String()); s.Visible(svc, tt.from) != in {
					t.Errorf("Visible(%s, %q) = %v, but the list says %v", svc.Key(), tt.from, !in, in)
				}
			}
		})
	}
}

// TestHostnameClaimedTwice: when several visible services claim a
// hostname, one wins per namespace.
func TestHostnameClaimedTwice(t *testing.T) {
	tests := []struct {
		name     string
		services []*model.Service
		from     string
		want     string
	}{
		{name: "the oldest public entry", from: "x",
			services: []*model.Service{serviceEntry("api.example.com", "a", 5), serviceEntry("api.example.com", "b", 1)},
			want:     "b/api.example.com"},
		{name: "an entry exported to the namespace before a public one", from: "x",
			services: []*model.Service{serviceEntry("api.example.com", "a", 1), serviceEntry("api.example.com", "b", 5, "x")},
			want:     "b/api.example.com"},
		{name: "the namespace's own entry before one exported to it", from: "a",
			services: []*model.Service{serviceEntry("api.example.com", "a", 5), serviceEntry("api.example.com", "b", 1, "a")},
			want:     "a/api.example.com"},
		{name: "the namespace's own private entry before an older exported one", from: "a",
			services: []*model.Service{serviceEntry("api.example.com", "a", 5, "."), serviceEntry("api.example.com", "b", 1, "a")},
			want:     "a/api.example.com"},
		{name: "an entry not visible does not count", from: "x",
			services: []*model.Service{serviceEntry("api.example.com", "a", 1, "."), serviceEntry("api.example.com", "b", 5)},
			want:     "b/api.example.com"},
		{name: "none visible", from: "x",
			services: []*model.Service{serviceEntry("api.example.com", "a", 1, "."), serviceEntry("api.example.com", "b", 5, "~")},
			want:     ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFake()
			for _, s := range tt.services {
				f.add(s)
			}
			s := f.snapshot(t, Options{})
			got := ""
			if svc := s.Service(&Proxy{Namespace: tt.from}, "api.example.com"); svc != nil {
				got = svc.Key().String()
			}
			if got != tt.want {
				t.Errorf("from %q the hostname names %q, want %q", tt.from, got, tt.want)
			}
		})
	}
}

// TestKubernetesServiceWinsItsHostname: a ServiceEntry of another
// namespace that claims a Kubernetes Service's hostname, older and
// exported to the Service's namespace by name, never takes it: a hostile
// tenant cannot capture another namespace's service.
func TestKubernetesServiceWinsItsHostname(t *testing.T) {
	f := newFake()
	victim := f.add(kube("payments", "victim", "."))
	f.add(serviceEntry(string(victim.Hostname), "evil", -24*60, "victim"), ep("10.66.6.6"))
	s := f.snapshot(t, Options{})
	if got := s.Service(&Proxy{Namespace: "victim"}, victim.Hostname); got != victim {
		t.Errorf("from victim the hostname names %v, want the victim's Service", got)
	}
	for _, ns := range []string{"evil", "other"} {
		if got := s.Service(&Proxy{Namespace: ns}, victim.Hostname); got != nil {
			t.Errorf("from %s the hostname names %s, want nothing (neither is exported there)", ns, got.Key())
		}
	}
}

// TestOwnEntryBeatsForeignExport: a namespace exporting an entry for a
// host to another namespace does not capture that namespace's own entry
// for the host, whatever their ages.
func TestOwnEntryBeatsForeignExport(t *testing.T) {
	f := newFake()
	own := f.add(serviceEntry("db.internal", "victim", 10), ep("10.0.0.1"))
	f.add(serviceEntry("db.internal", "evil", 0, "victim"), ep("10.66.6.6"))
	s := f.snapshot(t, Options{})
	p := &Proxy{Namespace: "victim"}
	if got := s.Service(p, "db.internal"); got != own {
		t.Fatalf("from victim db.internal names %v, want the victim's own entry", got.Key())
	}
	if got := flat(s.Endpoints(p, own.Key(), "http")); len(got) != 1 || got[0] != " 10.0.0.1:8080 w1 Healthy" {
		t.Errorf("victim's endpoints = %q, want its own only", got)
	}
}

// With Options.ServiceEntryVisibility (Istio's applyToSidecars) a
// ServiceEntry's visibility caps its exportTo: Namespace to its own
// namespace when exportTo includes it, None to no one; an exportTo of
// "~" alone stays as it is. Without the option, exportTo alone decides.
func TestServiceEntryVisibilityCapsExportTo(t *testing.T) {
	tests := []struct {
		name       string
		exportTo   []string
		visibility model.Visibility
		capped     bool
		want       []string // the namespaces, of a, b, c, that see it
	}{
		{"public, capped", []string{"*"}, model.VisibilityPublic, true, []string{"a", "b", "c"}},
		{"namespace, public exportTo", []string{"*"}, model.VisibilityNamespace, true, []string{"a"}},
		{"namespace, unset exportTo (mesh default *)", nil, model.VisibilityNamespace, true, []string{"a"}},
		{"namespace, exportTo .", []string{"."}, model.VisibilityNamespace, true, []string{"a"}},
		{"namespace, exportTo its name and b", []string{"a", "b"}, model.VisibilityNamespace, true, []string{"a"}},
		{"namespace, exportTo b only", []string{"b"}, model.VisibilityNamespace, true, nil},
		{"none", []string{"*"}, model.VisibilityNone, true, nil},
		{"~ alone stays", []string{"~"}, model.VisibilityPublic, true, nil},
		{"namespace, not capped", []string{"*"}, model.VisibilityNamespace, false, []string{"a", "b", "c"}},
		{"none, not capped", []string{"b"}, model.VisibilityNone, false, []string{"b"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFake()
			se := serviceEntry("api.example.com", "a", 1, tt.exportTo...)
			se.Visibility = tt.visibility
			f.add(se)
			s := f.snapshot(t, Options{ServiceEntryVisibility: tt.capped})
			var got []string
			for _, ns := range []string{"a", "b", "c"} {
				visible := len(s.Services(&Proxy{Namespace: ns})) == 1
				if visible != s.Visible(se, ns) {
					t.Errorf("from %s: the list and Visible disagree", ns)
				}
				if visible {
					got = append(got, ns)
				}
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("visible from %v, want %v", got, tt.want)
			}
		})
	}
}
