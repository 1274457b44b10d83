package kube

import (
	"maps"
	"slices"
	"sync"
	"sync/atomic"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/meshreg/meshreg/model"
)

// The initial conversion: once the informers have delivered their lists,
// every object is converted at once, on one pool of
// Options.InitialSyncWorkers goroutines (Run's among them): first the
// pods' workloads, memoized, then the services' endpoints, the same
// computation as a change's, without memos.

// prepare does the part of the initial conversion that needs only the
// services and their slices, while other lists (in a large cluster the
// pods', the longest) are still coming: it sizes the store for the
// services and the slices' endpoints (about one workload each), and
// converts every service (see state). The initial conversion then finds
// the store sized (Reserve keeps the first estimate) and reuses each
// conversion whose Service object is still the one converted; one that
// changed in between is converted again. Services of namespaces the
// selector leaves out are converted too (the namespaces' list may not be
// in yet): the initial conversion drops them.
func (c *Controller) prepare() {
	c.prepared = true
	endpoints := 0
	for _, byName := range c.cl.slices {
		for _, s := range byName {
			endpoints += len(s.endpoints)
		}
	}
	c.store.Reserve(len(c.cl.services), endpoints)
	for key, obj := range c.cl.services {
		c.state(key, obj)
	}
}

// prime marks the controller primed and converts every object the
// informers' initial lists delivered: nothing was marked dirty before
// (markService, markPod), and the store is still empty. It returns the
// number of conversions.
func (c *Controller) prime() int {
	c.primed = true
	c.dirty.reset()
	workloads := c.memoizePods()
	svcs := inListOrder(c.listed.services, c.cl.services)
	c.listed.services = nil
	keys := make([]types.NamespacedName, 0, len(c.cl.services))
	for _, svc := range svcs {
		keys = append(keys, types.NamespacedName{Namespace: svc.Namespace, Name: svc.Name})
	}
	for key := range c.cl.slices {
		if c.cl.services[key] == nil {
			keys = append(keys, key) // slices without their service
		}
	}
	keys = c.mcsOnlyKeys(keys)
	c.syncServices(keys, func() {
		c.store.Reserve(len(c.cl.services), len(c.cl.pods))
		// The store is empty: syncPod of every pod would publish
		// exactly these, and withdraw nothing.
		c.store.UpsertWorkloads(workloads)
		c.syncGateways()
		c.primeMetadata()
	})
	return len(c.cl.pods) + len(keys)
}

// minPerWorker is the fewest services, or pods, worth a goroutine of
// their own in the initial conversion.
const minPerWorker = 64

// memoizePods memoizes the workload of every pod of a selected namespace,
// and returns them: the workloads to publish.
// The workloads are computed by up to Options.InitialSyncWorkers
// goroutines, this one included, which read the cluster only, each with a
// labelSharer of its own; each pod's memo is written to its own slot by
// the goroutine that computed it, then to podMemos by this one, and the
// shared port maps are taken under a mutex of their own.
func (c *Controller) memoizePods() []*model.WorkloadInstance {
	selected := slices.DeleteFunc(inListOrder(c.listed.pods, c.cl.pods), func(pod *podInfo) bool {
		return !c.namespaceSelected(pod.GetNamespace())
	})
	c.listed.pods = nil
	results := make([]*model.WorkloadInstance, len(selected))
	memos := make([]podMemo, len(selected)) // memos[i] is selected[i]'s, written by its goroutine
	workers := max(1, min(c.opts.InitialSyncWorkers, len(selected)/minPerWorker))
	sharers := make([]*labelSharer, workers)
	for i := range sharers {
		sharers[i] = newLabelSharer()
	}
	// Each node's locality, read once: a node runs many pods.
	type nodeEnv struct {
		node *corev1.Node
		loc  model.Locality
	}
	nodes := make(map[string]nodeEnv, len(c.cl.nodes))
	for name, n := range c.cl.nodes {
		nodes[name] = nodeEnv{node: n, loc: nodeLocality(n.Labels)}
	}
	var portsMu sync.Mutex
	parallel(workers, len(selected), func(worker, i int) {
		pod := selected[i]
		node := nodes[pod.nodeName] // as podEnv and memoize would find it
		env := c.clusterEnv()
		env.node, env.sharer = node.loc, sharers[worker]
		w, err := podInstance(pod, env)
		if err != nil {
			return // a pod without a workload has no memo
		}
		portsMu.Lock()
		w.PortMap = c.portMaps.acquire(pod) // w is not shared yet
		portsMu.Unlock()
		memos[i] = podMemo{pod: pod, node: node.node, network: c.net.cluster, w: w}
		results[i] = w
	})
	if len(c.podMemos) == 0 {
		c.podMemos = make(map[*podInfo]podMemo, len(memos))
	}
	for _, m := range memos {
		if m.w != nil {
			c.podMemos[m.pod] = m
		}
	}
	return slices.DeleteFunc(results, func(w *model.WorkloadInstance) bool { return w == nil })
}

// inListOrder returns the objects of current: first those of the
// informers' initial lists (listed) that are still current, in the order
// the informers delivered them, then any other (added by a watch since)
// in no particular order. The initial conversion visits the objects so
// rather than in a map's random order, which BenchmarkPrime shows to be
// slower: an informer decodes its list, allocating each object and what
// it points to (a pod's labels), in the order it delivers it.
func inListOrder[T interface {
	comparable
	GetNamespace() string
	GetName() string
}](listed []T, current map[types.NamespacedName]T) []T {
	out := make([]T, 0, len(current))
	for _, o := range listed {
		if current[types.NamespacedName{Namespace: o.GetNamespace(), Name: o.GetName()}] == o {
			out = append(out, o)
		}
	}
	if len(out) == len(current) {
		return out
	}
	inList := make(map[T]bool, len(out))
	for _, o := range out {
		inList[o] = true
	}
	for _, o := range current {
		if !inList[o] {
			out = append(out, o)
		}
	}
	return out
}

// The initial conversion's goroutines share their work through indexes:
// each takes the next index not taken, until none is left. parallel is
// the plain pool; syncServices runs its own goroutines over the same
// indexes, since the goroutine that started them also writes the
// results as they come.

// indexes hands out each of the indexes [0, n) once, to any goroutine.
type indexes struct {
	next atomic.Int64
	n    int
}

// take returns the next index, or false when every index is taken.
func (x *indexes) take() (int, bool) {
	i := int(x.next.Add(1)) - 1
	return i, i < x.n
}

// parallel calls f(worker, i) for every i in [0, n) on up to workers
// goroutines, this one included, and returns when all calls have. worker
// numbers the goroutine making the call, from 0 (this one) to workers-1:
// the calls of one worker are made one at a time.
func parallel(workers, n int, f func(worker, i int)) {
	x := &indexes{n: n}
	work := func(worker int) {
		for i, ok := x.take(); ok; i, ok = x.take() {
			f(worker, i)
		}
	}
	var wg sync.WaitGroup
	for w := 1; w < workers; w++ {
		wg.Go(func() { work(w) })
	}
	work(0)
	wg.Wait()
}

// initialResult is one service's initial conversion, computed by a
// worker of syncServices.
type initialResult struct {
	key   types.NamespacedName
	st    *svcState // nil: left to syncService
	eps   []*model.Endpoint
	diags []model.Diagnostic
}

// syncServices runs meanwhile, then converts every service of keys. The
// services' endpoints are computed by up to Options.InitialSyncWorkers
// goroutines, this one included: the others start before meanwhile, and
// this one joins them once meanwhile is done, writing each result as it
// comes and computing a service itself whenever none is waiting. The
// workers read the cluster and the pods' memos, which nothing changes
// meanwhile (meanwhile must not either); this goroutine alone writes the
// services' states and the store.
func (c *Controller) syncServices(keys []types.NamespacedName, meanwhile func()) {
	env := clusterView{c: c}
	workers := min(c.opts.InitialSyncWorkers, len(keys)/minPerWorker)
	if workers <= 1 {
		meanwhile()
		for _, key := range keys {
			c.syncService(key, env)
		}
		return
	}
	// The states prepare left, read by the workers while this goroutine
	// writes the results' states into a new map.
	prepared := c.svcs
	c.svcs = make(map[types.NamespacedName]*svcState, len(c.cl.services))
	cfg := c.serviceConfig()
	compute := func(key types.NamespacedName, w *endpointWork) initialResult {
		r := initialResult{key: key}
		obj := c.cl.services[key]
		if obj == nil || !c.namespaceSelected(key.Namespace) {
			return r
		}
		st := prepared[key]
		if nsTraffic := c.nsTraffic(key.Namespace); st == nil || st.obj != obj || st.nsTraffic != nsTraffic {
			st = c.newState(obj, nsTraffic, cfg)
		}
		w.slices = slices.AppendSeq(w.slices[:0], maps.Values(c.cl.slices[key]))
		var memo endpointMemo
		r.st = &svcState{obj: st.obj, nsTraffic: st.nsTraffic, svc: st.svc, diags: st.diags, drains: st.drains, disc: c.discoverability(key, false)}
		r.eps, r.diags, memo = serviceEndpoints(key.Namespace, st.svc, r.st.traits(), w.slices, env, &endpointMemo{}, w)
		r.st.memo = memo
		return r
	}
	var (
		x  = &indexes{n: len(keys)}
		wg sync.WaitGroup
		// Room for every result: the workers never wait for this
		// goroutine, which is busy with meanwhile first.
		results = make(chan initialResult, len(keys))
	)
	for range workers - 1 {
		wg.Go(func() {
			var w endpointWork
			for i, ok := x.take(); ok; i, ok = x.take() {
				results <- compute(keys[i], &w)
			}
		})
	}
	meanwhile()
	write := func(r initialResult) {
		if r.st == nil {
			c.syncService(r.key, env)
			return
		}
		c.svcs[r.key] = r.st
		c.writeService(r.key, r.st, r.eps, r.diags)
	}
	var w endpointWork
	for written := 0; written < len(keys); written++ {
		select {
		case r := <-results:
			write(r)
			continue
		default:
		}
		if i, ok := x.take(); ok {
			write(compute(keys[i], &w))
		} else {
			write(<-results) // every key is taken: wait for the workers
		}
	}
	wg.Wait()
}
