package bench

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
)

// change is one write of the churn stream: flip the readiness of one
// endpoint of a slice, or set a label of one pod. Either changes exactly
// one endpoint (both its ports) of one service.
type change struct {
	slice bool
	ns    string
	name  string // slice or pod
	index int    // endpoint of the slice
	host  string // the service's hostname
}

// key is what a system's sink reports for the change: the floor the
// changed object (floorKey), a registry the service's hostname.
func (c change) key(floor bool) string {
	if floor {
		return c.floorKey()
	}
	return c.host
}

// floorKey is what the floor's sink reports for the change.
func (c change) floorKey() string {
	if c.slice {
		return "EndpointSlice/" + c.ns + "/" + c.name
	}
	return "Pod/" + c.ns + "/" + c.name
}

// churnStream returns n changes, half slice flips and half pod label
// changes, drawn with a fixed seed from the scenario.
func churnStream(sc *Scenario, n int) []change {
	rng := rand.New(rand.NewPCG(9, 9))
	out := make([]change, n)
	for i := range out {
		if i%2 == 0 {
			s := sc.Slices[rng.IntN(len(sc.Slices))]
			svc := s.Labels[discoveryv1.LabelServiceName]
			out[i] = change{slice: true, ns: s.Namespace, name: s.Name, index: rng.IntN(len(s.Endpoints)), host: hostname(s.Namespace, svc)}
		} else {
			p := sc.Pods[rng.IntN(len(sc.Pods))]
			out[i] = change{ns: p.Namespace, name: p.Name, host: hostname(p.Namespace, p.Labels["app"])}
		}
	}
	return out
}

func hostname(ns, svc string) string { return svc + "." + ns + ".svc." + DomainSuffix }

// writer applies changes through the clientset (its object tracker), as
// an API write: read the current object, change it, update it. One writer
// serves a whole run, so that every pod label it writes is new (a
// repeated value would be a no-op update, which registries rightly
// ignore).
type writer struct {
	client kubernetes.Interface
	gen    int
	// delivered holds the last version of each object that deliveries
	// built, by change.floorKey; version counts the versions built.
	delivered map[string]k8sruntime.Object
	version   int
}

func (w *writer) apply(ctx context.Context, c change) error {
	w.gen++
	if c.slice {
		sl, err := w.client.DiscoveryV1().EndpointSlices(c.ns).Get(ctx, c.name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		flipReady(sl, c.index)
		_, err = w.client.DiscoveryV1().EndpointSlices(c.ns).Update(ctx, sl, metav1.UpdateOptions{})
		return err
	}
	p, err := w.client.CoreV1().Pods(c.ns).Get(ctx, c.name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	setGeneration(p, w.gen)
	_, err = w.client.CoreV1().Pods(c.ns).Update(ctx, p, metav1.UpdateOptions{})
	return err
}

// flipReady flips the readiness (and serving) of the slice's endpoint i.
func flipReady(sl *discoveryv1.EndpointSlice, i int) {
	cond := &sl.Endpoints[i].Conditions
	ready := !(cond.Ready == nil || *cond.Ready)
	cond.Ready, cond.Serving = &ready, &ready
}

// setGeneration sets the pod's generation label to gen, in a new map.
func setGeneration(p *corev1.Pod, gen int) {
	p.Labels = mapWith(p.Labels, "bench.meshreg.io/generation", strconv.Itoa(gen))
}

func mapWith(m map[string]string, k, v string) map[string]string {
	out := make(map[string]string, len(m)+1)
	for k, v := range m {
		out[k] = v
	}
	out[k] = v
	return out
}

// ChurnResult is what a system did with the churn stream.
type ChurnResult struct {
	// Changes is the number of changes written one at a time, each
	// waited for before the next.
	Changes int `json:"changes"`
	// P50, P99 and Max are the latencies from the start of the write to
	// the system's report of it (the floor's update handler, the
	// registry's endpoints event), in nanoseconds.
	P50 int64 `json:"p50_ns"`
	P99 int64 `json:"p99_ns"`
	Max int64 `json:"max_ns"`
	// CPUPerChange is the process CPU time per change over the
	// sequential stream, writes included (ns).
	CPUPerChange int64 `json:"cpu_per_change_ns"`
	// HandlerCPUPerChange is CPUPerChange less the same stream's cost
	// with no system running (the writes alone): the system's cost per
	// change (ns).
	HandlerCPUPerChange int64 `json:"handler_cpu_per_change_ns"`
	// SteadyCPUPerChange is the median, over churnParts equal parts of
	// the sequential stream, of each part's CPU time per change (ns): a
	// figure that a garbage collection cycle or other background work
	// falling into one part does not move, where CPUPerChange takes it
	// in whole. HandlerSteadyCPUPerChange is it less the writes alone's.
	SteadyCPUPerChange        int64 `json:"steady_cpu_per_change_ns"`
	HandlerSteadyCPUPerChange int64 `json:"handler_steady_cpu_per_change_ns"`
	// DeliveredCPUPerChange, DeliveredSteadyCPUPerChange (the median of
	// churnParts parts) and DeliveredAllocsPerChange are the process's
	// CPU time and allocations per change when the same changes are
	// delivered to the system's watches directly, one at a time and
	// each waited for, with nothing written to the clientset (see
	// WatchTap): the system's own cost of a change, from the watch
	// event to its report, measured in one stream rather than as a
	// difference of two. DeliveredP50 is that stream's median latency
	// (ns).
	DeliveredCPUPerChange       int64 `json:"delivered_cpu_per_change_ns,omitempty"`
	DeliveredSteadyCPUPerChange int64 `json:"delivered_steady_cpu_per_change_ns,omitempty"`
	DeliveredAllocsPerChange    int64 `json:"delivered_allocs_per_change,omitempty"`
	DeliveredP50                int64 `json:"delivered_p50_ns,omitempty"`
	// WriteCPUPerChange, WriteSteadyCPUPerChange and WriteAllocsPerChange
	// are CPUPerChange, SteadyCPUPerChange and AllocsPerChange of the same
	// stream written to the same clientset just before the system
	// started: the writes alone, which the Handler figures subtract.
	WriteCPUPerChange       int64 `json:"write_cpu_per_change_ns,omitempty"`
	WriteSteadyCPUPerChange int64 `json:"write_steady_cpu_per_change_ns,omitempty"`
	WriteAllocsPerChange    int64 `json:"write_allocs_per_change,omitempty"`
	// AllocsPerChange and BytesPerChange are the heap allocations per
	// change over the sequential stream, writes included: steadier than
	// CPU time on a shared machine. HandlerAllocsPerChange is
	// AllocsPerChange less the writes' own.
	AllocsPerChange        int64 `json:"allocs_per_change"`
	BytesPerChange         int64 `json:"bytes_per_change"`
	HandlerAllocsPerChange int64 `json:"handler_allocs_per_change"`
	// GCCycles counts the garbage collection cycles that ended during
	// the sequential stream.
	GCCycles int64 `json:"gc_cycles"`
	// EventsPerSecond is the throughput of a burst of the same changes
	// with up to BurstWindow outstanding, one per key.
	EventsPerSecond float64 `json:"events_per_second"`
	// Missed counts changes whose report did not arrive within the
	// timeout; Stray counts reports that matched no change awaited.
	Missed int `json:"missed"`
	Stray  int `json:"stray"`
}

// BurstWindow bounds the changes outstanding in the burst: the fake
// clientset's watch channels hold 100 events and panic when full.
const BurstWindow = 50

const churnTimeout = 5 * time.Second

// runChurn writes the stream one change at a time, timing each to the
// system's report, then again as a burst. sys is nil to measure the
// writes alone.
func runChurn(ctx context.Context, w *writer, sys system, floor bool, stream []change) (ChurnResult, error) {
	res := ChurnResult{Changes: len(stream)}
	var seen <-chan string // nil: nothing to wait for
	if sys != nil {
		var unsink func()
		seen, unsink = sinkTo(sys)
		defer unsink()
	}
	sq, err := oneAtATime(stream, floor, seen, &res, func(i int) error {
		if err := w.apply(ctx, stream[i]); err != nil {
			return fmt.Errorf("churn write %s/%s: %w", stream[i].ns, stream[i].name, err)
		}
		return nil
	})
	if err != nil {
		return res, err
	}
	res.CPUPerChange, res.SteadyCPUPerChange = sq.cpu, sq.steady
	res.AllocsPerChange = sq.allocs
	res.BytesPerChange = sq.bytes
	res.GCCycles = sq.gcCycles
	if sys == nil {
		return res, nil
	}
	res.P50, res.P99, res.Max = int64(percentile(sq.lat, .5)), int64(percentile(sq.lat, .99)), int64(percentile(sq.lat, 1))

	// Burst: the same stream, up to BurstWindow changes in flight, of
	// as many keys: a change waits while its key's report is awaited, so
	// that each change has a report of its own (a registry may convert
	// changes of one object that come together at once, and report the
	// result once).
	start := time.Now()
	inflight, got := map[string]bool{}, 0
	timeout := time.NewTimer(churnTimeout)
	defer timeout.Stop()
	for i := 0; got < len(stream); {
		if i < len(stream) && len(inflight) < BurstWindow && !inflight[stream[i].key(floor)] {
			if err := w.apply(ctx, stream[i]); err != nil {
				return res, fmt.Errorf("churn write %s/%s: %w", stream[i].ns, stream[i].name, err)
			}
			inflight[stream[i].key(floor)] = true
			i++
			continue
		}
		select {
		case k := <-seen:
			if inflight[k] {
				delete(inflight, k)
				got++
			}
			timeout.Reset(churnTimeout)
		case <-timeout.C:
			res.Missed += len(stream) - got
			got = len(stream)
		}
	}
	res.EventsPerSecond = float64(len(stream)) / time.Since(start).Seconds()
	return res, nil
}

// sinkTo makes sys report to the returned channel, which holds a burst's
// reports; unsink stops it.
func sinkTo(sys system) (seen <-chan string, unsink func()) {
	ch := make(chan string, 4*BurstWindow)
	sys.setSink(func(key string) {
		select {
		case ch <- key:
		default: // the waiter reports the miss
		}
	})
	return ch, func() { sys.setSink(nil) }
}

// sequence is what oneAtATime measured.
type sequence struct {
	lat           []time.Duration // sorted
	cpu, steady   int64           // CPU per change: whole, median part
	allocs, bytes int64           // per change
	gcCycles      int64
}

// oneAtATime makes the stream's changes one at a time (apply(i) makes
// change i), each waited for on seen unless seen is nil, and measures
// the whole: latencies from the start of a change to its report, the
// process's CPU time per change over the whole and in churnParts parts,
// and allocations. A report that does not come counts in res.Missed,
// one for another change in res.Stray.
func oneAtATime(stream []change, floor bool, seen <-chan string, res *ChurnResult, apply func(i int) error) (sequence, error) {
	var sq sequence
	lat := make([]time.Duration, 0, len(stream))
	part := max(1, len(stream)/churnParts)
	var parts []int64 // CPU per change of each part
	m0 := allocs()
	cpu0 := cpuTime()
	mark := cpu0
	for i, c := range stream {
		t0 := time.Now()
		if err := apply(i); err != nil {
			return sq, err
		}
		if seen != nil {
			if await(seen, c.key(floor), res) {
				lat = append(lat, time.Since(t0))
			} else {
				res.Missed++
			}
		}
		if (i+1)%part == 0 {
			now := cpuTime()
			parts = append(parts, int64(now-mark)/int64(part))
			mark = now
		}
	}
	sq.cpu = int64(cpuTime()-cpu0) / int64(len(stream))
	sq.steady = median(parts)
	m1 := allocs()
	sq.allocs = int64(m1.Mallocs-m0.Mallocs) / int64(len(stream))
	sq.bytes = int64(m1.TotalAlloc-m0.TotalAlloc) / int64(len(stream))
	sq.gcCycles = int64(m1.NumGC - m0.NumGC)
	slices.Sort(lat)
	sq.lat = lat
	return sq, nil
}

// churnParts is the number of parts the sequential stream's CPU time is
// measured in, for ChurnResult.SteadyCPUPerChange.
const churnParts = 8

// await waits for key on seen, counting other keys as stray.
func await(seen <-chan string, key string, res *ChurnResult) bool {
	timeout := time.After(churnTimeout)
	for {
		select {
		case k := <-seen:
			if k == key {
				return true
			}
			res.Stray++
		case <-timeout:
			return false
		}
	}
}
