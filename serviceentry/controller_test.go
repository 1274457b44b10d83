package serviceentry

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"istio.io/api/meta/v1alpha1"
	"istio.io/api/networking/v1alpha3"
	networkingv1 "istio.io/client-go/pkg/apis/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/meshreg/meshreg/internal/manifest"
	"github.com/meshreg/meshreg/model"
	"github.com/meshreg/meshreg/registry"
)

const selSE = `apiVersion: networking.istio.io/v1
kind: ServiceEntry
metadata: {name: sel, namespace: ns}
spec:
  hosts: [sel.internal]
  addresses: [10.9.0.1]
  resolution: STATIC
  ports: [{number: 80, name: http}]
  workloadSelector: {labels: {app: a}}
`

const otherSE = `apiVersion: networking.istio.io/v1
kind: ServiceEntry
metadata: {name: other, namespace: ns}
spec:
  hosts: [other.internal]
  addresses: [10.9.0.2]
  resolution: STATIC
  ports: [{number: 80, name: http}]
  workloadSelector: {labels: {app: b}}
`

func we(name, ns, app, ip string) string {
	return fmt.Sprintf("apiVersion: networking.istio.io/v1\nkind: WorkloadEntry\nmetadata: {name: %s, namespace: %s}\nspec: {address: %s, labels: {app: %s}}\n", name, ns, ip, app)
}

func pod(name, ns, app, ip string) string {
	return fmt.Sprintf("apiVersion: v1\nkind: Pod\nmetadata: {name: %s, namespace: %s, labels: {app: %s}}\nstatus: {podIP: %s, conditions: [{type: Ready, status: 'True'}]}\n", name, ns, app, ip)
}

func addrs(c *Controller, host string) []string {
	var out []string
	for _, ep := range c.Endpoints(model.ServiceKey{Namespace: "ns", Hostname: model.Hostname(host)}, registry.EndpointQuery{}) {
		out = append(out, ep.Address()+"/"+ep.Workload())
	}
	return out
}

// describe renders events compactly: "svc add sel.internal",
// "eps sel.internal [10.0.0.1]", "wl update WorkloadEntry/ns/w".
func describe(evs []registry.Event) []string {
	var out []string
	for _, e := range evs {
		switch e := e.(type) {
		case registry.ServiceEvent:
			out = append(out, fmt.Sprintf("svc %v %s", e.Type, e.Service().Hostname))
		case registry.EndpointsEvent:
			var as []string
			for _, ep := range e.Endpoints {
				as = append(as, ep.Address())
			}
			out = append(out, fmt.Sprintf("eps %s %v", e.Service.Hostname, as))
		case registry.WorkloadEvent:
			w := e.Workload()
			out = append(out, fmt.Sprintf("wl %v %v/%s/%s", e.Type, w.Kind, w.Namespace, w.Name))
		}
	}
	return out
}

func expectEvents(t *testing.T, r *recorder, want ...string) {
	t.Helper()
	synctest.Wait()
	if got := describe(r.take()); !slices.Equal(got, want) {
		t.Errorf("events:\n got %q\nwant %q", got, want)
	}
}

// Selected workloads follow the selector on every add, update and delete
// of either side, and a change touches only the entries that select it.
func TestSelectionFollowsChanges(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src, _ := NewStaticSource(load(t, selSE+"---\n"+otherSE)...)
		c := start(t, src, Options{})
		synctest.Wait()
		rec := &recorder{}
		defer c.Subscribe(rec)()
		synctest.Wait()
		rec.take()

		// WorkloadEntry add: selected; published as a workload.
		src.Upsert(load(t, we("w1", "ns", "a", "10.0.0.1"))...)
		expectEvents(t, rec, "wl add WorkloadEntry/ns/w1", "eps sel.internal [10.0.0.1]")
		// The same again: nothing.
		src.Upsert(load(t, we("w1", "ns", "a", "10.0.0.1"))...)
		expectEvents(t, rec)
		// A WorkloadEntry in another namespace with the labels: not selected.
		src.Upsert(load(t, we("w9", "elsewhere", "a", "10.0.0.9"))...)
		expectEvents(t, rec, "wl add WorkloadEntry/elsewhere/w9")
		// Relabel: moves from sel to other.
		src.Upsert(load(t, we("w1", "ns", "b", "10.0.0.1"))...)
		expectEvents(t, rec, "wl update WorkloadEntry/ns/w1", "eps other.internal [10.0.0.1]", "eps sel.internal []")
		// Pod add, update (new IP), delete.
		p := podEvent(t, pod("p1", "ns", "a", "10.1.0.1"))
		c.HandleWorkload(p)
		expectEvents(t, rec, "eps sel.internal [10.1.0.1]")
		p2 := podEvent(t, pod("p1", "ns", "a", "10.1.0.2"))
		c.HandleWorkload(registry.WorkloadEvent{Type: model.EventUpdate, Previous: p.Current, Current: p2.Current})
		expectEvents(t, rec, "eps sel.internal [10.1.0.2]")
		c.HandleWorkload(registry.WorkloadEvent{Type: model.EventDelete, Previous: p2.Current})
		expectEvents(t, rec, "eps sel.internal []")
		// A Pod of another namespace, and another cluster's
		// WorkloadEntry without the labels: not selected.
		c.HandleWorkload(podEvent(t, pod("p9", "elsewhere", "a", "10.1.0.9")))
		c.HandleWorkload(registry.WorkloadEvent{Type: model.EventAdd, Current: &model.WorkloadInstance{Kind: model.KindWorkloadEntry, Namespace: "ns", Name: "x"}})
		expectEvents(t, rec)
		// The entry's selector changes: it follows.
		src.Upsert(load(t, replace(selSE, "{app: a}", "{app: b}"))...)
		expectEvents(t, rec, "svc update sel.internal", "eps sel.internal [10.0.0.1]")
		// WorkloadEntry delete.
		src.DeleteWorkloadEntry("ns", "w1")
		expectEvents(t, rec, "wl delete WorkloadEntry/ns/w1", "eps other.internal []", "eps sel.internal []")
		// Entry delete.
		src.DeleteServiceEntry("ns", "sel")
		expectEvents(t, rec, "svc delete sel.internal")
	})
}

func replace(s, old, new string) string {
	if !strings.Contains(s, old) {
		panic("no " + old)
	}
	return strings.Replace(s, old, new, 1)
}

// A bad update removes only that entry, with a diagnostic; fixing it
// brings it back; the other entry sees no event.
func TestInvalidEntryIsolated(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src, _ := NewStaticSource(load(t, selSE+"---\n"+otherSE)...)
		c := start(t, src, Options{ClusterID: "c9"})
		synctest.Wait()
		rec := &recorder{}
		defer c.Subscribe(rec)()
		synctest.Wait()
		rec.take()

		src.Upsert(load(t, replace(selSE, "[10.9.0.1]", "[10.9.0.1/99]"))...)
		expectEvents(t, rec, "svc delete sel.internal")
		ds := c.Diagnostics()
		if len(ds) != 1 || ds[0].Kind != "ServiceEntry" || ds[0].Name != "sel" || ds[0].Severity != model.Error || ds[0].Cluster != "c9" {
			t.Fatalf("diagnostics = %v", ds)
		}
		src.Upsert(load(t, selSE)...)
		expectEvents(t, rec, "svc add sel.internal")
		if ds := c.Diagnostics(); len(ds) != 0 {
			t.Fatalf("diagnostics after the fix = %v", ds)
		}
	})
}

// A VIP never changes while its entry exists, whatever comes and goes,
// and a fresh registry over the final set agrees (no collision here).
func TestAutoVIPStableAndDeterministic(t *testing.T) {
	dnsSE := func(name, host string) string {
		return fmt.Sprintf("apiVersion: networking.istio.io/v1\nkind: ServiceEntry\nmetadata: {name: %s, namespace: ns}\nspec: {hosts: [%s], resolution: DNS, ports: [{number: 443, name: tls}]}\n", name, host)
	}
	vip := func(c *Controller, host string) netip.Addr {
		s := c.ServiceByKey(model.ServiceKey{Namespace: "ns", Hostname: model.Hostname(host)})
		if s == nil || len(s.AutoAddresses) != 2 {
			t.Fatalf("%s: %v", host, s)
		}
		return s.AutoAddresses[0]
	}
	synctest.Test(t, func(t *testing.T) {
		src := &StaticSource{}
		c := start(t, src, Options{})
		src.Upsert(load(t, dnsSE("a", "a.com"))...)
		synctest.Wait()
		a := vip(c, "a.com")
		for i := range 20 {
			src.Upsert(load(t, dnsSE(fmt.Sprint("x", i), fmt.Sprintf("x%d.com", i)))...)
			synctest.Wait()
			if i%3 == 0 {
				src.DeleteServiceEntry("ns", fmt.Sprint("x", i))
			}
			// An update of a's entry that keeps its host keeps its VIP.
			src.Upsert(load(t, replace(dnsSE("a", "a.com"), "443", fmt.Sprint(1000+i)))...)
			synctest.Wait()
			if got := vip(c, "a.com"); got != a {
				t.Fatalf("a.com moved from %v to %v", a, got)
			}
		}
		fresh := start(t, src, Options{})
		synctest.Wait()
		for _, s := range c.Services() {
			if got := vip(fresh, string(s.Hostname)); got != s.AutoAddresses[0] {
				t.Errorf("%s: %v at run time, %v fresh", s.Hostname, s.AutoAddresses[0], got)
			}
		}
	})
}

func TestRunTwiceAndNilSource(t *testing.T) {
	if _, err := New(nil, Options{}); err == nil {
		t.Error("New(nil) succeeded")
	}
	c, _ := New(&StaticSource{}, Options{})
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error)
	go func() { done <- c.Run(ctx) }()
	for !c.HasSynced() {
		time.Sleep(time.Millisecond)
	}
	if err := c.Run(ctx); !errors.Is(err, registry.ErrAlreadyRunning) {
		t.Errorf("second Run = %v", err)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Run = %v", err)
	}
	if c.Provider() != model.External || c.Cluster() != DefaultClusterID {
		t.Errorf("provider %v cluster %v", c.Provider(), c.Cluster())
	}
}

// failingSource stops with an error before syncing.
type failingSource struct{ *StaticSource }

func (*failingSource) Synced() <-chan struct{}   { return nil }
func (*failingSource) Run(context.Context) error { return errors.New("boom") }

func TestRunReturnsSourceError(t *testing.T) {
	c, _ := New(&failingSource{&StaticSource{}}, Options{})
	if err := c.Run(t.Context()); err == nil || err.Error() != "boom" {
		t.Errorf("Run = %v, want boom", err)
	}
}

// The informer source reads a cluster's objects, follows changes, and
// strips what the registry does not read.
func TestInformerSource(t *testing.T) {
	objs := load(t, selSE+"---\n"+we("w1", "ns", "a", "10.0.0.1"))
	client := manifest.IstioClientset(objs)
	src, err := NewInformerSource(client, InformerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	c, _ := New(src, Options{})
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error)
	go func() { done <- c.Run(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	}()
	eventually(t, func() bool { return c.HasSynced() })
	if got := addrs(c, "sel.internal"); !slices.Equal(got, []string{"10.0.0.1/ns/w1"}) {
		t.Fatalf("endpoints = %v", got)
	}

	w2 := toWorkloadEntry(load(t, we("w2", "ns", "a", "10.0.0.2"))[0])
	w2.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "kubectl"}}
	w2.Annotations = map[string]string{"big": "x", annotationHealthChecks: "true"}
	w2.Status.Conditions = []*v1alpha1.IstioCondition{{Type: "Reconciled", Status: "True"}, {Type: conditionHealthy, Status: "True"}}
	if _, err := client.NetworkingV1().WorkloadEntries("ns").Create(ctx, w2, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, func() bool { return len(addrs(c, "sel.internal")) == 2 })
	cached := src.WorkloadEntry("ns", "w2")
	if cached.ManagedFields != nil || len(cached.Annotations) != 1 {
		t.Errorf("not stripped: %+v", cached.ObjectMeta)
	}
	if cs := cached.Status.Conditions; len(cs) != 1 || cs[0].Type != conditionHealthy {
		t.Errorf("status conditions not stripped to Healthy: %v", cs)
	}
	// A ServiceEntry keeps its labels and its status addresses, not the
	// rest of its status.
	auto := toServiceEntry(load(t, "apiVersion: networking.istio.io/v1\nkind: ServiceEntry\nmetadata: {name: auto, namespace: ns, labels: {"+labelAutoAllocate+": 'true'}}\n"+
		"spec: {hosts: [auto.internal], resolution: DNS, ports: [{number: 443, name: tls, protocol: TLS}]}\n")[0])
	auto.Status.Addresses = []*v1alpha3.ServiceEntryAddress{{Value: "240.240.1.1", Host: "auto.internal"}}
	auto.Status.Conditions = []*v1alpha1.IstioCondition{{Type: "Reconciled", Status: "True"}}
	if _, err := client.NetworkingV1().ServiceEntries("ns").Create(ctx, auto, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	autoKey := model.ServiceKey{Namespace: "ns", Hostname: "auto.internal"}
	eventually(t, func() bool { return c.ServiceByKey(autoKey) != nil })
	if got := c.ServiceByKey(autoKey).AutoAddresses; len(got) != 1 || got[0].String() != "240.240.1.1" {
		t.Errorf("auto addresses = %v, want the status's", got)
	}
	if cached := src.ServiceEntry("ns", "auto"); cached.Labels[labelAutoAllocate] != "true" || len(cached.Status.Conditions) != 0 || len(cached.Status.Addresses) != 1 {
		t.Errorf("ServiceEntry not stripped as it should be: %+v %+v", cached.ObjectMeta, &cached.Status)
	}
	if err := client.NetworkingV1().ServiceEntries("ns").Delete(ctx, "auto", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := client.NetworkingV1().ServiceEntries("ns").Delete(ctx, "sel", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, func() bool { return len(c.Services()) == 0 })
	var _ *networkingv1.ServiceEntry = src.ServiceEntry("ns", "gone")
}

// eventually polls cond for up to 10 s; for real informers, which
// synctest cannot drive.
func eventually(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met in time")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// Options.Visibility gives each entry's services the visibility of its
// namespace's labels, and follows a change of the labels.
func TestVisibilityFollowsNamespaceLabels(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ns := func(labels string) string {
			return "apiVersion: v1\nkind: Namespace\nmetadata: {name: ns, labels: " + labels + "}\n"
		}
		src, _ := NewStaticSource(load(t, selSE+"---\n"+ns("{}"))...)
		vis := &model.ServiceEntryVisibility{Default: model.VisibilityNamespace, Policies: []model.VisibilityPolicy{
			{Visibility: model.VisibilityPublic, Rules: []*model.LabelSelector{{MatchLabels: map[string]string{"shared": "true"}}}},
			{Visibility: model.VisibilityNone, Rules: []*model.LabelSelector{{MatchLabels: map[string]string{"hidden": "true"}}}},
		}}
		c := start(t, src, Options{Visibility: vis})
		synctest.Wait()
		visibility := func() model.Visibility { return c.GetService("sel.internal").Visibility }
		if got := visibility(); got != model.VisibilityNamespace {
			t.Errorf("visibility %v, want the default, Namespace", got)
		}
		for _, tc := range []struct {
			labels string
			want   model.Visibility
		}{{"{shared: \"true\"}", model.VisibilityPublic}, {"{hidden: \"true\"}", model.VisibilityNone}, {"{}", model.VisibilityNamespace}} {
			if err := src.Upsert(load(t, ns(tc.labels))...); err != nil {
				t.Fatal(err)
			}
			synctest.Wait()
			if got := visibility(); got != tc.want {
				t.Errorf("namespace labels %s: visibility %v, want %v", tc.labels, got, tc.want)
			}
		}
	})
}
