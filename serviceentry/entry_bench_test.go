package serviceentry

import (
	"context"
	"fmt"
	"testing"
	"time"

	networkingv1alpha3 "istio.io/api/networking/v1alpha3"
	networkingv1 "istio.io/client-go/pkg/apis/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/meshreg/meshreg/model"
	"github.com/meshreg/meshreg/registry"
)

// entryBenchNamespaces is how many namespaces the entries and their
// WorkloadEntries are spread over.
const entryBenchNamespaces = 10

// benchEntry is entry i of the ServiceEntry benchmarks: a STATIC host
// without addresses (so the registry allocates its VIPs) selecting the
// twenty WorkloadEntries labelled app=svc-i of its namespace; team is a
// label of the entry, which a change flips.
func benchEntry(i int, team string) *networkingv1.ServiceEntry {
	ns := fmt.Sprint("ns-", i%entryBenchNamespaces)
	return &networkingv1.ServiceEntry{
		ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprint("svc-", i), Namespace: ns, Labels: map[string]string{"team": team},
			CreationTimestamp: metav1.NewTime(time.Date(2024, 1, 1, 0, 0, i, 0, time.UTC))},
		Spec: networkingv1alpha3.ServiceEntry{
			Hosts:            []string{fmt.Sprintf("svc-%d.%s.internal", i, ns)},
			Location:         networkingv1alpha3.ServiceEntry_MESH_INTERNAL,
			Resolution:       networkingv1alpha3.ServiceEntry_STATIC,
			Ports:            []*networkingv1alpha3.ServicePort{{Number: 80, Name: "http", Protocol: "HTTP"}},
			WorkloadSelector: &networkingv1alpha3.WorkloadSelector{Labels: map[string]string{"app": fmt.Sprint("svc-", i)}},
		},
	}
}

// entryBenchWorld is the source of the ServiceEntry benchmarks: n
// entries (benchEntry), each selecting twenty of 20n WorkloadEntries
// (benchWorkloadEntry), and a running controller over it, synced.
func entryBenchWorld(b *testing.B, n int) (*StaticSource, *Controller) {
	b.Helper()
	objs := make([]runtime.Object, 0, 21*n)
	for i := range n {
		objs = append(objs, benchEntry(i, "a"))
		for j := range 20 {
			objs = append(objs, benchWorkloadEntry(i, j, "v1"))
		}
	}
	src, err := NewStaticSource(objs...)
	if err != nil {
		b.Fatal(err)
	}
	c, err := New(src, Options{})
	if err != nil {
		b.Fatal(err)
	}
	return src, c
}

// benchWorkloadEntry is WorkloadEntry j of entry i, of a version.
func benchWorkloadEntry(i, j int, version string) *networkingv1.WorkloadEntry {
	k := i*20 + j
	return &networkingv1.WorkloadEntry{
		ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("we-%d-%d", i, j), Namespace: fmt.Sprint("ns-", i%entryBenchNamespaces)},
		Spec: networkingv1alpha3.WorkloadEntry{
			Address: fmt.Sprintf("10.%d.%d.%d", k>>16, (k>>8)&255, k&255),
			Labels:  map[string]string{"app": fmt.Sprint("svc-", i), "version": version},
		},
	}
}

// runEntryBench runs c, waits for it to sync, then measures change(i)
// (applied through src) until the entry of host has an event of kind
// wantService (a service event) or not (an endpoints event).
func runEntryBench(b *testing.B, c *Controller, host model.Hostname, wantService bool, change func(i int)) {
	b.Helper()
	events := make(chan struct{}, 1)
	signal := func() {
		select {
		case events <- struct{}{}:
		default:
		}
	}
	defer c.Subscribe(registry.HandlerFuncs{
		ServiceFunc: func(e registry.ServiceEvent) {
			if wantService && e.Current != nil && e.Current.Hostname == host {
				signal()
			}
		},
		EndpointsFunc: func(e registry.EndpointsEvent) {
			if !wantService && e.Service.Hostname == host {
				signal()
			}
		},
	})()
	defer running(b, c)()
	for !c.HasSynced() {
		time.Sleep(time.Millisecond)
	}
	for _, svc := range c.Services() {
		if svc.Hostname == host {
			if got := len(c.Endpoints(svc.Key(), registry.EndpointQuery{})); got != 20 {
				b.Fatalf("the entry has %d endpoints, want 20", got)
			}
		}
	}
	for len(events) > 0 {
		<-events // the entry's arrival
	}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		change(i)
		select {
		case <-events:
		case <-time.After(5 * time.Second):
			b.Fatalf("no event at change %d", i)
		}
	}
}

// running runs c until the returned stop is called, which reports Run's
// error.
func running(b *testing.B, c *Controller) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()
	return func() {
		cancel()
		if err := <-done; err != nil {
			b.Error(err)
		}
	}
}

// The entry whose change, or whose workload's, the benchmarks measure.
const benchChanged = 7

var benchChangedHost = model.Hostname(fmt.Sprintf("svc-%d.ns-%d.internal", benchChanged, benchChanged%entryBenchNamespaces))

// BenchmarkServiceEntryChange is a change of one ServiceEntry (a label of
// the entry, so its service changes) among n entries, each selecting
// twenty of 20n WorkloadEntries, from the source's notice to the
// service's event. An entry's change should cost what it changes,
// whatever the number of other entries: the cost at 5,000 entries over
// the cost at 1,000 is the figure to watch.
func BenchmarkServiceEntryChange(b *testing.B) {
	for _, n := range []int{1000, 5000} {
		b.Run(fmt.Sprintf("entries=%d", n), func(b *testing.B) {
			src, c := entryBenchWorld(b, n)
			versions := [2]*networkingv1.ServiceEntry{benchEntry(benchChanged, "b"), benchEntry(benchChanged, "a")}
			runEntryBench(b, c, benchChangedHost, true, func(i int) {
				if err := src.Upsert(versions[i%2]); err != nil {
					b.Fatal(err)
				}
			})
		})
	}
}

// BenchmarkWorkloadEntryChange is a change of one WorkloadEntry (its
// version label) that one of n entries selects, from the source's notice
// to the entry's endpoints event: it too should not grow with the number
// of entries.
func BenchmarkWorkloadEntryChange(b *testing.B) {
	for _, n := range []int{1000, 5000} {
		b.Run(fmt.Sprintf("entries=%d", n), func(b *testing.B) {
			src, c := entryBenchWorld(b, n)
			versions := [2]*networkingv1.WorkloadEntry{benchWorkloadEntry(benchChanged, 3, "v2"), benchWorkloadEntry(benchChanged, 3, "v1")}
			runEntryBench(b, c, benchChangedHost, false, func(i int) {
				if err := src.Upsert(versions[i%2]); err != nil {
					b.Fatal(err)
				}
			})
		})
	}
}
