package main

// The changes the benchmark makes through the fake client, and how it
// measures them: the wall time from the write to the index's published
// state, and the process CPU.

import (
	"context"
	"fmt"
	"math"
	"runtime/metrics"
	"sort"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"

	kubelib "istio.io/istio/pkg/kube"
	"istio.io/istio/pkg/workloadapi"
)

// cpuTime is the process's CPU time so far (user + system, every thread).
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		panic(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// gcCPU is the runtime's estimate of the CPU its garbage collector used so
// far (runtime/metrics /cpu/classes/gc/total:cpu-seconds).
func gcCPU() time.Duration {
	sample := []metrics.Sample{{Name: "/cpu/classes/gc/total:cpu-seconds"}}
	metrics.Read(sample)
	if sample[0].Value.Kind() != metrics.KindFloat64 {
		return 0
	}
	return time.Duration(sample[0].Value.Float64() * 1e9)
}

// settleCPU waits until the process is idle: less than 2% of one core used
// over two consecutive 250 ms windows. krt keeps working after the index
// reports HasSynced (queued recomputations whose output did not change make
// no XDS call), so quiet XDS is not enough after the initial build.
func settleCPU(timeout time.Duration) error {
	const window = 250 * time.Millisecond
	deadline := time.Now().Add(timeout)
	idle := 0
	for idle < 2 {
		if time.Now().After(deadline) {
			return fmt.Errorf("the process did not go idle within %v", timeout)
		}
		c := cpuTime()
		time.Sleep(window)
		if cpuTime()-c < window/50 {
			idle++
		} else {
			idle = 0
		}
	}
	return nil
}

// togglePodReady flips a Pod's Ready condition (and ContainersReady, as the
// kubelet does) through the fake client's status subresource, and returns
// the new readiness.
func togglePodReady(c kubelib.Client, nn types.NamespacedName) (bool, error) {
	ctx := context.Background()
	pods := c.Kube().CoreV1().Pods(nn.Namespace)
	p, err := pods.Get(ctx, nn.Name, metav1.GetOptions{})
	if err != nil {
		return false, err
	}
	ready := true
	for _, cond := range p.Status.Conditions {
		if cond.Type == corev1.PodReady && cond.Status == corev1.ConditionTrue {
			ready = false
		}
	}
	st := corev1.ConditionFalse
	if ready {
		st = corev1.ConditionTrue
	}
	found := false
	for i := range p.Status.Conditions {
		switch p.Status.Conditions[i].Type {
		case corev1.PodReady:
			found = true
			p.Status.Conditions[i].Status = st
		case corev1.ContainersReady:
			p.Status.Conditions[i].Status = st
		}
	}
	if !found {
		p.Status.Conditions = append(p.Status.Conditions, corev1.PodCondition{Type: corev1.PodReady, Status: st})
	}
	_, err = pods.UpdateStatus(ctx, p, metav1.UpdateOptions{})
	return ready, err
}

// servicePort is the port the Service change adds.
func servicePort(port int32) corev1.ServicePort {
	return corev1.ServicePort{Name: fmt.Sprintf("bench-%d", port), Protocol: corev1.ProtocolTCP, Port: port,
		TargetPort: intstr.FromInt32(8080)}
}

// setServicePort adds port to a Service (add) or removes it.
func setServicePort(c kubelib.Client, nn types.NamespacedName, port int32, add bool) error {
	ctx := context.Background()
	svcs := c.Kube().CoreV1().Services(nn.Namespace)
	s, err := svcs.Get(ctx, nn.Name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	if add {
		s.Spec.Ports = append(s.Spec.Ports, servicePort(port))
	} else {
		kept := s.Spec.Ports[:0]
		for _, p := range s.Spec.Ports {
			if p.Port != port {
				kept = append(kept, p)
			}
		}
		s.Spec.Ports = kept
	}
	_, err = svcs.Update(ctx, s, metav1.UpdateOptions{})
	return err
}

// writeCost is the fake client's own cost of a write, measured with the index
// not running (no informer watches): per write, the mean wall and CPU time.
type writeCost struct {
	writes int
	wall   time.Duration
	cpu    time.Duration
}

func (w writeCost) perWrite() (wall, cpu time.Duration) {
	if w.writes == 0 {
		return 0, 0
	}
	return w.wall / time.Duration(w.writes), w.cpu / time.Duration(w.writes)
}

// measureWrites runs n writes and returns their cost.
func measureWrites(n int, write func(i int) error) (writeCost, error) {
	t0, c0 := time.Now(), cpuTime()
	for i := 0; i < n; i++ {
		if err := write(i); err != nil {
			return writeCost{}, err
		}
	}
	return writeCost{writes: n, wall: time.Since(t0), cpu: cpuTime() - c0}, nil
}

// podWriteCost toggles the readiness of the Pods the pod-change phase will
// change, twice each (so they end as they were), with the index not running.
func podWriteCost(c kubelib.Client, w *world, changes int) (writeCost, error) {
	return measureWrites(2*changes, func(i int) error {
		_, err := togglePodReady(c, w.pods[(i/2)%len(w.pods)])
		return err
	})
}

// serviceWriteCost adds and removes a port on the Services the service-change
// phase will change, with the index not running.
func serviceWriteCost(c kubelib.Client, w *world, changes int) (writeCost, error) {
	return measureWrites(2*changes, func(i int) error {
		k := i / 2
		return setServicePort(c, w.services[k%len(w.services)], int32(20000+k), i%2 == 0)
	})
}

// waitUntil waits until cond holds: it checks it, then again each time the
// observer reports an update of a watched address (or every second, in case
// the state was reached by another path).
func (s *istiod) waitUntil(timeout time.Duration, what string, cond func() bool) error {
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			return fmt.Errorf("timed out after %v waiting for %s", timeout, what)
		}
		select {
		case <-s.xds.wake:
		case <-time.After(time.Second):
		}
	}
	return nil
}

// settle waits until the index has made no call into the XDS updater for
// quiet: the work a change started (other collections, the EDS shim) is done.
func (s *istiod) settle(quiet time.Duration) {
	last, since := s.xds.calls.Load(), time.Now()
	for time.Since(since) < quiet {
		time.Sleep(5 * time.Millisecond)
		if n := s.xds.calls.Load(); n != last {
			last, since = n, time.Now()
		}
	}
}

// podUID is the index's key of a Pod's workload.
func podUID(nn types.NamespacedName) string {
	return clusterID + "//Pod/" + nn.Namespace + "/" + nn.Name
}

// serviceKey is the index's key of a Service ("namespace/hostname").
func serviceKey(nn types.NamespacedName) string {
	return nn.Namespace + "/" + nn.Name + "." + nn.Namespace + ".svc." + domainSuffix
}

// changeResult is the measure of one kind of change.
type changeResult struct {
	Changes int `json:"changes"`
	// Wall time from the write (its start) to the index's published state.
	P50Ms float64 `json:"p50Ms"`
	P99Ms float64 `json:"p99Ms"`
	MaxMs float64 `json:"maxMs"`
	// Service change only: to every workload of the Service showing the new
	// port too (the Service's ports are in each workload's services map).
	AllWorkloadsP50Ms *float64 `json:"allWorkloadsP50Ms,omitempty"`
	AllWorkloadsP99Ms *float64 `json:"allWorkloadsP99Ms,omitempty"`
	// Process CPU per change: over all the changes, until the index was
	// quiet (raw); of the fake client's write alone, measured with the
	// index not running (write); raw − write (net).
	CPUMsRaw   float64 `json:"cpuMsRaw"`
	CPUMsWrite float64 `json:"cpuMsWrite"`
	CPUMsNet   float64 `json:"cpuMsNet"`
	// Of cpuMsRaw, the garbage collector's share (the runtime's estimate);
	// its cost grows with the whole live heap, the fake API server's
	// objects included.
	GCCPUMs float64 `json:"gcCpuMs"`
	// Wall time of the write alone (index not running), per write, and the
	// wall time over all the changes, per change.
	WriteWallMs     float64 `json:"writeWallMs"`
	TotalWallMsEach float64 `json:"totalWallMsPerChange"`
}

func ms(d time.Duration) float64 { return math.Round(float64(d)/1e3) / 1e3 }

// percentile is the nearest-rank p-quantile of ds (sorted in place).
func percentile(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	k := int(math.Ceil(p*float64(len(ds)))) - 1
	return ds[max(k, 0)]
}

func summarize(lat []time.Duration, totalWall, totalCPU, totalGC time.Duration, wc writeCost) changeResult {
	n := len(lat)
	wwall, wcpu := wc.perWrite()
	raw := totalCPU / time.Duration(n)
	return changeResult{
		Changes:         n,
		P50Ms:           ms(percentile(lat, 0.50)),
		P99Ms:           ms(percentile(lat, 0.99)),
		MaxMs:           ms(percentile(lat, 1)),
		CPUMsRaw:        ms(raw),
		CPUMsWrite:      ms(wcpu),
		CPUMsNet:        ms(raw - wcpu),
		GCCPUMs:         ms(totalGC / time.Duration(n)),
		WriteWallMs:     ms(wwall),
		TotalWallMsEach: ms(totalWall / time.Duration(n)),
	}
}

const changeTimeout = 2 * time.Minute

// quiet is how long the index must make no XDS call to be settled.
const quiet = 100 * time.Millisecond

// podChanges flips the readiness of n Pods (a different one each time,
// cycling) and waits, for each, until the index's workload of that Pod has
// the new status.
func (s *istiod) podChanges(c kubelib.Client, w *world, n int, wc writeCost) (changeResult, error) {
	s.settle(quiet)
	lat := make([]time.Duration, 0, n)
	t0, c0, g0 := time.Now(), cpuTime(), gcCPU()
	for i := 0; i < n; i++ {
		nn := w.pods[i%len(w.pods)]
		key := podUID(nn)
		s.xds.watch(key)
		start := time.Now()
		ready, err := togglePodReady(c, nn)
		if err != nil {
			return changeResult{}, err
		}
		want := workloadapi.WorkloadStatus_UNHEALTHY
		if ready {
			want = workloadapi.WorkloadStatus_HEALTHY
		}
		if err := s.waitUntil(changeTimeout, "workload "+key+" "+want.String(), func() bool {
			a := s.index.Lookup(key)
			return len(a) == 1 && a[0].GetWorkload().GetStatus() == want
		}); err != nil {
			return changeResult{}, err
		}
		lat = append(lat, time.Since(start))
		if d := lat[len(lat)-1]; d > 100*time.Millisecond {
			verbosef("pod change %d (%s) took %v", i, key, d)
		}
	}
	s.settle(quiet)
	wall, cpu := time.Since(t0)-quiet, cpuTime()-c0
	return summarize(lat, wall, cpu, gcCPU()-g0, wc), nil
}

// serviceChanges adds a port to n Services (a different one each time,
// cycling) and waits, for each, until the index's service has it, then until
// every workload of the service has it in its services map.
func (s *istiod) serviceChanges(c kubelib.Client, w *world, n int, wc writeCost) (changeResult, error) {
	s.settle(quiet)
	lat := make([]time.Duration, 0, n)
	all := make([]time.Duration, 0, n)
	t0, c0, g0 := time.Now(), cpuTime(), gcCPU()
	for k := 0; k < n; k++ {
		nn := w.services[k%len(w.services)]
		port := int32(30000 + k) // not a port of the write-cost phase: a real change each time
		key := serviceKey(nn)
		s.xds.watch(key)
		start := time.Now()
		if err := setServicePort(c, nn, port, true); err != nil {
			return changeResult{}, err
		}
		var svcWorkloads []string
		if err := s.waitUntil(changeTimeout, "service "+key+" port", func() bool {
			a := s.index.Lookup(key)
			if len(a) == 0 || a[0].GetService() == nil {
				return false
			}
			for _, p := range a[0].GetService().GetPorts() {
				if p.GetServicePort() == uint32(port) {
					svcWorkloads = svcWorkloads[:0]
					for _, wl := range a[1:] {
						svcWorkloads = append(svcWorkloads, wl.GetWorkload().GetUid())
					}
					return true
				}
			}
			return false
		}); err != nil {
			return changeResult{}, err
		}
		lat = append(lat, time.Since(start))
		s.xds.watch(svcWorkloads...)
		if err := s.waitUntil(changeTimeout, "workloads of "+key+" port", func() bool {
			for _, uid := range svcWorkloads {
				a := s.index.Lookup(uid)
				if len(a) != 1 || !hasServicePort(a[0].GetWorkload(), key, port) {
					return false
				}
			}
			return true
		}); err != nil {
			return changeResult{}, err
		}
		all = append(all, time.Since(start))
	}
	s.settle(quiet)
	wall, cpu := time.Since(t0)-quiet, cpuTime()-c0
	r := summarize(lat, wall, cpu, gcCPU()-g0, wc)
	p50, p99 := ms(percentile(all, 0.50)), ms(percentile(all, 0.99))
	r.AllWorkloadsP50Ms, r.AllWorkloadsP99Ms = &p50, &p99
	return r, nil
}

func hasServicePort(w *workloadapi.Workload, svcKey string, port int32) bool {
	for _, p := range w.GetServices()[svcKey].GetPorts() {
		if p.GetServicePort() == uint32(port) {
			return true
		}
	}
	return false
}
