package kube

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"net/netip"
	"slices"
	"sync"
	"sync/atomic"
	"unsafe"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/meshreg/meshreg/model"
	"github.com/meshreg/meshreg/registry"
)

// flushLocked converts everything dirty and writes the results to the
// store: first the pods' workloads, then the services with their
// endpoints and diagnostics. Each result depends only on the objects, so
// the order of the flush does not matter. Before the initial lists have
// been delivered it does nothing. It returns the number of conversions.
// c.mu must be held.
func (c *Controller) flushLocked() int {
	if !c.primed {
		return 0
	}
	n := len(c.dirty.pods) + len(c.dirty.services)
	for key := range c.dirty.pods {
		c.syncPod(key)
	}
	for key := range c.dirty.services {
		c.syncService(key)
	}
	for key, pods := range c.dirty.patches {
		if _, done := c.dirty.services[key]; !done {
			c.patchService(key, pods)
			n++
		}
	}
	for key, ch := range c.dirty.slices {
		if _, done := c.dirty.services[key]; !done {
			c.patchSlice(key, ch)
			n++
		}
	}
	c.dirty.reset()
	return n
}

// patchSlice patches a service's endpoints for a change of one of its
// slices that onSlice found patchable (see sliceChangeOf): it removes the
// endpoints of the slice endpoints ch.old listed and ch.cur does not,
// adds those of the ones ch.cur lists anew, and rewrites the health of
// the ones whose conditions changed: what serviceEndpoints would compute
// when nothing else changed. The endpoint of a slice endpoint is the one
// whose primary address is the slice endpoint's address, per service
// port; a withheld one has none. Unchanged endpoints keep their identity.
//
// The service's dependencies gain those of the endpoints added and lose
// the pods and IPs of the ones removed; a node dependency stays until the
// service is next recomputed (so a node's change may recompute it for
// nothing in between), and its shape may gain offAddress but does not
// lose it. When the slice was added or removed or gained or lost
// endpoints, the service is recomputed instead where the patch would not
// be what a recomputation makes: when an endpoint added or removed is
// pending its pod (a diagnostic comes or goes), when an address or pod
// added is listed by another of the service's slice endpoints (they
// would be joined), when the namespace has WorkloadEntries (whose
// endpoints may sit at a slice endpoint's address), or when the service is gone (its
// diagnostics name its slices, even empty ones). c.mu must be held.
func (c *Controller) patchSlice(key types.NamespacedName, ch sliceChange) {
	membership := ch.old == nil || ch.cur == nil || len(ch.gone)+len(ch.added) > 0
	obj := c.objs.services[key]
	if obj == nil || !c.namespaceSelected(key.Namespace) {
		if membership {
			c.syncService(key)
		}
		return // no endpoints published
	}
	if membership && (len(c.objs.entries[key.Namespace]) > 0 || !c.addedAreNew(key, ch)) {
		c.syncService(key)
		return
	}
	svc, _ := c.convertService(key, obj)
	if svc.Resolution == model.Alias {
		return // no endpoints, no dependencies
	}
	draining := c.drains(svc)
	skey := svc.Key()
	prev := c.Reader.Endpoints(skey, registry.EndpointQuery{})
	var (
		base      = prev // prev with the health rewritten: a copy once it is
		rewritten bool
		gone      []int // indexes in prev of the endpoints removed
		added     []*model.Endpoint
		lost      []dep
		gained    []dep
		shape     = c.objs.shapes[key]
	)
	for _, i := range ch.gone {
		e := &ch.old.endpoints[i]
		if e.pod.Name != "" {
			if c.lookupPod(e.pod) == nil {
				c.syncService(key) // withheld, with its diagnostic
				return
			}
			lost = append(lost, dep{kind: depPod, name: e.pod})
		} else {
			lost = append(lost, dep{kind: depIP, ip: e.addrs[0]})
		}
		for _, p := range svc.Ports {
			num, ok := ch.old.ports.get(p.Name)
			if !ok {
				continue
			}
			j, ok := c.publishedAt(prev, e.addrs[0], p.Name, num)
			if !ok {
				c.syncService(key) // not what the last computation made
				return
			}
			gone = append(gone, j)
		}
	}
	rewrite := func(e *sliceEndpointInfo) { // the health of e's endpoints
		st := endpointHealth(e.conditions, draining)
		for _, p := range svc.Ports {
			num, ok := ch.cur.ports.get(p.Name)
			if !ok {
				continue
			}
			j, ok := c.publishedAt(prev, e.addrs[0], p.Name, num)
			if !ok || (prev[j].Health == st.health && prev[j].Serving == st.serving) {
				continue // withheld, or unchanged
			}
			if !rewritten {
				base, rewritten = slices.Clone(prev), true
			}
			ep := new(model.Endpoint)
			*ep = *prev[j]
			ep.Health, ep.Serving = st.health, st.serving
			base[j] = ep
		}
	}
	if ch.aligned {
		for i := range ch.cur.endpoints {
			if ch.old.endpoints[i].conditions != ch.cur.endpoints[i].conditions {
				rewrite(&ch.cur.endpoints[i])
			}
		}
	}
	for _, i := range ch.changed {
		rewrite(&ch.cur.endpoints[i])
	}
	for _, i := range ch.added {
		e := &ch.cur.endpoints[i]
		se := sliceEndpoint{
			addresses: e.addrs, pod: e.pod, nodeName: e.nodeName, conditions: e.conditions,
			ports: ch.cur.ports, slice: ch.cur.name,
		}
		var (
			anon model.Endpoint
			meta *model.Endpoint
			off  bool
		)
		if meta, gained, off = c.sliceEndpointMeta(key.Namespace, &se, gained, true, &anon); meta == nil {
			c.syncService(key) // pending, with a diagnostic
			return
		}
		if off {
			shape |= offAddress
		}
		added = appendSliceEndpoints(added, svc, &se, meta, endpointHealth(se.conditions, draining), nil)
	}
	if membership {
		c.objs.patchDeps(key, lost, gained)
		c.objs.setShape(key, shape)
	}
	switch {
	case len(gone)+len(added) > 0:
		slices.Sort(gone)
		c.store.SetEndpoints(skey, spliceEndpoints(base, gone, added))
	case rewritten:
		c.store.SetEndpoints(skey, base)
	}
}

// publishedAt returns the index in prev, a service's published list, of
// the endpoint of the slice endpoint at addr on the service port named
// port (number num in the slice), and whether it is there (not withheld).
// A WorkloadEntry's endpoint at the same address and port is not it.
func (c *Controller) publishedAt(prev []*model.Endpoint, addr netip.Addr, port string, num uint32) (int, bool) {
	probe := model.Endpoint{Addresses: []netip.Addr{addr}, ServicePortName: port, Cluster: c.opts.ClusterID, Port: num}
	for j := searchEndpoints(prev, &probe); j < len(prev) && model.CompareEndpoints(prev[j], &probe) == 0; j++ {
		if prev[j].WorkloadKind != model.KindWorkloadEntry {
			return j, true
		}
	}
	return 0, false
}

// addedAreNew reports whether every endpoint ch.cur gains has an address
// and a pod (if it names one) that no other endpoint of the service's
// slices lists: merging the slices again then makes it an endpoint of its
// own. c.mu must be held.
func (c *Controller) addedAreNew(key types.NamespacedName, ch sliceChange) bool {
	if len(ch.added) == 0 {
		return true
	}
	for _, s := range c.objs.slices[key] {
		for i := range s.endpoints {
			e := &s.endpoints[i]
			for _, k := range ch.added {
				n := &ch.cur.endpoints[k]
				if e == n {
					continue
				}
				if slices.Contains(e.addrs, n.addrs[0]) || (n.pod.Name != "" && e.pod == n.pod) {
					return false
				}
			}
		}
	}
	return true
}

// spliceEndpoints returns a copy of eps (sorted by
// model.CompareEndpoints) without the endpoints at the indexes gone
// (ascending) and with the endpoints added, each at its place in the
// order, found by a binary search: a list of thousands gaining one
// endpoint is copied, not compared.
func spliceEndpoints(eps []*model.Endpoint, gone []int, added []*model.Endpoint) []*model.Endpoint {
	slices.SortFunc(added, model.CompareEndpoints)
	out := make([]*model.Endpoint, 0, len(eps)-len(gone)+len(added))
	next := 0              // eps[:next] are placed
	keep := func(to int) { // eps[next:to], but those at the indexes gone
		for next < to {
			if len(gone) > 0 && gone[0] == next {
				gone, next = gone[1:], next+1
				continue
			}
			end := to
			if len(gone) > 0 && gone[0] < end {
				end = gone[0]
			}
			out = append(out, eps[next:end]...)
			next = end
		}
	}
	for _, ep := range added {
		keep(searchEndpoints(eps, ep))
		out = append(out, ep)
	}
	keep(len(eps))
	return out
}

// patchService rewrites the endpoints of a service that the given pods
// back, with the pods' current metadata: what serviceEndpoints would
// compute when nothing changed but those pods' metadata (see onPod). An
// endpoint took its metadata from a pod exactly when it names the pod as
// its workload. Unchanged endpoints keep their identity, the list its
// order (the sort keys are the slice's: port, address). When a pod is
// gone after all, the service is recomputed instead. c.mu must be held.
//
// A pod's endpoints are looked up by its IPs, per service port, in the
// sorted list: a pod's change reads a few of the service's endpoints,
// not every one (the patched list is still a copy of the whole, which
// the store compares pointer by pointer). Only for a service with an
// endpoint off its pod's addresses (endpointsShape offAddress) is the
// whole list walked.
func (c *Controller) patchService(key types.NamespacedName, pods []types.NamespacedName) {
	obj := c.objs.services[key]
	if obj == nil || !c.namespaceSelected(key.Namespace) {
		return // no endpoints published
	}
	svc, _ := c.convertService(key, obj)
	skey := svc.Key()
	p := endpointPatch{prev: c.Reader.Endpoints(skey, registry.EndpointQuery{})}
	if c.objs.shapes[key]&offAddress != 0 {
		for i, ep := range p.prev {
			if ep.WorkloadKind != model.KindPod {
				continue
			}
			pk := types.NamespacedName{Namespace: ep.WorkloadNamespace, Name: ep.WorkloadName}
			if !slices.Contains(pods, pk) {
				continue
			}
			pod := c.lookupPod(pk)
			if pod == nil {
				c.syncService(key)
				return
			}
			p.apply(i, c.podEndpoint(pod, true))
		}
	} else {
		for _, pk := range pods {
			pod := c.lookupPod(pk)
			if pod == nil {
				c.syncService(key)
				return
			}
			var meta *model.Endpoint // the pod's, once an endpoint names it
			for k := range pod.addrs {
				for _, port := range svc.Ports {
					probe := model.Endpoint{ServicePortName: port.Name, Cluster: c.opts.ClusterID, Addresses: pod.addrs[k : k+1]}
					for i := searchEndpoints(p.prev, &probe); i < len(p.prev) && sameAddress(p.prev[i], &probe); i++ {
						ep := p.prev[i]
						if ep.WorkloadKind != model.KindPod || ep.WorkloadName != pk.Name || ep.WorkloadNamespace != pk.Namespace {
							continue
						}
						if meta == nil {
							meta = c.podEndpoint(pod, true)
						}
						p.apply(i, meta)
					}
				}
			}
		}
	}
	if p.out != nil {
		c.store.SetEndpoints(skey, p.out)
	}
}

// sameAddress reports whether ep sorts with probe but for its port
// number: same service port, cluster and primary address.
func sameAddress(ep, probe *model.Endpoint) bool {
	return ep.ServicePortName == probe.ServicePortName && ep.Cluster == probe.Cluster &&
		len(ep.Addresses) > 0 && ep.Addresses[0] == probe.Addresses[0]
}

// endpointPatch is a published endpoint list with some endpoints
// replaced: out is a copy of prev, made at the first replacement.
type endpointPatch struct {
	prev, out []*model.Endpoint
}

// apply gives the endpoint at index i the pod metadata meta (see
// podEndpoint), keeping its addresses, port and health.
func (p *endpointPatch) apply(i int, meta *model.Endpoint) {
	ep := p.prev[i]
	n := *meta
	if !slices.Equal(meta.Addresses, ep.Addresses) {
		n.Addresses = ep.Addresses // the slice's, immutable
	}
	n.Hostname = ""
	n.Port = ep.Port
	n.ServicePortName = ep.ServicePortName
	n.Health, n.Serving = ep.Health, ep.Serving
	if n.Equals(ep) {
		return
	}
	if p.out == nil {
		p.out = slices.Clone(p.prev)
	}
	p.out[i] = new(model.Endpoint)
	*p.out[i] = n // n itself stays on the stack
}

// podEnv returns the environment of a pod on the named node.
func (c *Controller) podEnv(nodeName string) podEnv {
	env := c.clusterEnv()
	if n := c.objs.nodes[nodeName]; n != nil {
		env.node = nodeLocality(n.Labels)
	}
	return env
}

// clusterEnv returns the environment of a pod on an unknown node.
func (c *Controller) clusterEnv() podEnv {
	return podEnv{cluster: c.opts.ClusterID, trustDomain: c.opts.TrustDomain, network: c.net}
}

// syncPod publishes a pod's workload instance, or withdraws it when the
// pod is gone, out of the namespace selection, yields none, or does not
// serve (podServes).
func (c *Controller) syncPod(key types.NamespacedName) {
	wkey := model.WorkloadKey{Cluster: c.opts.ClusterID, Kind: model.KindPod, Namespace: key.Namespace, Name: key.Name}
	pod := c.lookupPod(key)
	if pod == nil {
		c.store.DeleteWorkload(wkey)
		return
	}
	w, err := c.podWorkload(pod)
	if err != nil {
		if !errors.Is(err, errPodNoIP) && !errors.Is(err, errPodTerminal) {
			c.log.Warn("pod not converted", "pod", key.String(), "error", err)
		}
		c.store.DeleteWorkload(wkey)
		return
	}
	if !podServes(pod) {
		// Memoized for its endpoints' metadata, but not published:
		// ServiceEntry selectors take only pods that can serve.
		c.store.DeleteWorkload(wkey)
		return
	}
	c.store.UpsertWorkload(w)
}

// lookupPod returns a pod of a selected namespace, or nil.
func (c *Controller) lookupPod(key types.NamespacedName) *podInfo {
	if !c.namespaceSelected(key.Namespace) {
		return nil
	}
	return c.objs.pods[key]
}

// podByIP returns the pod of namespace ns that lends its metadata to an
// endpoint at the first of addrs a pod holds (see podLendsByIP); among
// several such pods on one IP, the first by name. Nil when none: a pod
// of another namespace lends nothing.
func (c *Controller) podByIP(ns string, addrs []netip.Addr) *podInfo {
	for _, a := range addrs {
		var found *podInfo
		for _, k := range c.objs.podsByIP.Get(a) {
			if k.Namespace != ns || (found != nil && found.name < k.Name) {
				continue
			}
			if pod := c.lookupPod(k); pod != nil {
				found = pod
			}
		}
		if found != nil {
			return found
		}
	}
	return nil
}

// drains reports whether a service drains its endpoints: it has one of
// Options.DrainingLabels (see endpointHealth).
func (c *Controller) drains(svc *model.Service) bool {
	return slices.ContainsFunc(c.opts.DrainingLabels, func(l string) bool { return svc.Labels[l] != "" })
}

// serviceKey is the model key of the Service of that name.
func (c *Controller) serviceKey(key types.NamespacedName) model.ServiceKey {
	return model.ServiceKey{Namespace: key.Namespace, Hostname: model.KubeServiceHostname(key.Name, key.Namespace, c.opts.DomainSuffix)}
}

// serviceOwner is the store's diagnostics owner of a service: the
// service's own diagnostics and those of its slices.
func serviceOwner(key types.NamespacedName) string { return "Service/" + key.String() }

// syncService converts a service and computes its endpoints and
// diagnostics from the current objects, then writes all three.
func (c *Controller) syncService(key types.NamespacedName) {
	if c.primed {
		c.recomputed++
	}
	skey := c.serviceKey(key)
	owner := serviceOwner(key)
	obj := c.objs.services[key]
	if obj == nil || !c.namespaceSelected(key.Namespace) {
		delete(c.svcMemo, key)
		c.objs.setDeps(key, nil)
		c.objs.setShape(key, 0)
		c.store.DeleteService(skey)
		c.store.SetEndpoints(skey, nil)
		var diags []model.Diagnostic
		if c.namespaceSelected(key.Namespace) {
			diags = c.orphanSliceDiagnostics(key)
		}
		c.store.SetDiagnostics(owner, diags)
		return
	}
	svc, diags := c.convertService(key, obj)
	eps, epDiags, deps := c.serviceEndpoints(key, svc, &c.scratch, false)
	c.objs.setDeps(key, deps)
	c.objs.setShape(key, c.scratch.shape)
	c.writeService(key, svc, eps, append(diags, epDiags...))
}

// writeService writes a converted service, its endpoints and its
// diagnostics to the store.
func (c *Controller) writeService(key types.NamespacedName, svc *model.Service, eps []*model.Endpoint, diags []model.Diagnostic) {
	c.store.UpsertService(svc)
	c.store.SetEndpoints(svc.Key(), eps)
	c.store.SetDiagnostics(serviceOwner(key), diags)
}

// primeLocked marks the controller primed and converts every object the
// informers' initial lists delivered: nothing was marked dirty before
// (markService, markPod), and the store is still empty. The pods'
// workloads are computed and memoized first, spread over
// Options.InitialSyncWorkers goroutines (memoizePods); then those
// goroutines compute the services' endpoints, reading the controller's
// state only, while this one sizes the store and publishes the pods'
// workloads, then writes the services as they come and computes what is
// left. The services' dependencies are recorded, but the reverse index
// of them is left to objects.indexDeps, which Run calls once the
// registry is marked synced: it serves the changes to come, not the
// queries. It returns the number of conversions. c.mu must be held.
func (c *Controller) primeLocked() int {
	c.primed = true
	c.dirty.reset()
	workloads := c.memoizePods()
	svcs := make([]*corev1.Service, 0, len(c.objs.services))
	for _, svc := range c.objs.services {
		svcs = append(svcs, svc)
	}
	inMemoryOrder(svcs)
	keys := make([]types.NamespacedName, 0, len(c.objs.services))
	for _, svc := range svcs {
		keys = append(keys, types.NamespacedName{Namespace: svc.Namespace, Name: svc.Name})
	}
	for key := range c.objs.slices {
		if c.objs.services[key] == nil {
			keys = append(keys, key) // slices without their service
		}
	}
	c.syncServices(keys, func() {
		// Sizing the store's maps for the state touches tens of
		// megabytes: done here, the other goroutines are not kept
		// waiting.
		c.store.Reserve(len(c.objs.services), len(c.objs.pods))
		// The store is empty: syncPod of every pod would publish
		// exactly these, and withdraw nothing.
		c.store.UpsertWorkloads(workloads)
	})
	return len(c.objs.pods) + len(keys)
}

// prepareLocked does the part of the initial conversion that needs
// only the services and their slices, while other lists are still
// coming: it sizes the store for the services and the slices'
// endpoints (about one workload each), and converts every service,
// memoized (see convertService). The initial conversion then finds the
// store sized (Reserve keeps the first estimate) and reuses each
// conversion whose Service object is still the one converted; one that
// changed in between is converted again. Services of namespaces the
// selector leaves out are converted too, the namespaces' list being
// possibly not in yet: the initial conversion drops their memos. In a
// large cluster this moves a fifth of the initial conversion's memory
// (the services' 16 MB and the store's 22 MB of 191 at 10,000 services
// and 100,000 endpoints) off the time after the last list. c.mu must be
// held.
func (c *Controller) prepareLocked() {
	endpoints := 0
	for _, byName := range c.objs.slices {
		for _, s := range byName {
			endpoints += len(s.endpoints)
		}
	}
	c.store.Reserve(len(c.objs.services), endpoints)
	for key, obj := range c.objs.services {
		c.convertService(key, obj)
	}
}

// minPerWorker is the fewest services, or pods, worth a goroutine of
// their own in the initial conversion.
const minPerWorker = 64

// memoizePods memoizes the workload of every pod of a selected namespace,
// and returns those of the pods that serve (the workloads to publish). No pod has a memo yet: the pod handler
// computes none before the initial conversion. The workloads are computed
// and memoized by up to Options.InitialSyncWorkers goroutines, this one
// included, which read the controller's objects only (podInstance), each
// with a labelSharer of its own; each pod's memo is written by the
// goroutine that computed it, and the shared port maps are taken under a
// mutex of their own. c.mu must be held.
func (c *Controller) memoizePods() []*model.WorkloadInstance {
	var selected []*podInfo
	for key, pod := range c.objs.pods {
		if c.namespaceSelected(key.Namespace) {
			selected = append(selected, pod)
		}
	}
	inMemoryOrder(selected)
	results := make([]*model.WorkloadInstance, len(selected))
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
	nodes := make(map[string]nodeEnv, len(c.objs.nodes))
	for name, n := range c.objs.nodes {
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
		pod.memo = podMemo{node: node.node, network: c.net.cluster, w: w}
		if podServes(pod) {
			results[i] = w
		}
	})
	return slices.DeleteFunc(results, func(w *model.WorkloadInstance) bool { return w == nil })
}

// inMemoryOrder sorts objects by their address. The initial conversion
// visits the informers' objects in this order rather than in a map's
// (random) one: an informer's list is allocated in the order it came, so
// an object and what it points to (a pod's labels) sit near the previous
// one's, and the loop reads memory mostly forward instead of missing the
// cache at every object. At the large preset that made the pods'
// workloads a quarter faster. Go's collector does not move heap objects,
// and any order would be correct.
func inMemoryOrder[T any](objs []*T) {
	slices.SortFunc(objs, func(a, b *T) int {
		return cmp.Compare(uintptr(unsafe.Pointer(a)), uintptr(unsafe.Pointer(b)))
	})
}

// parallel calls f(worker, i) for every i in [0, n) on up to workers
// goroutines, this one included, and returns when all calls have. worker
// numbers the goroutine making the call, from 0 (this one) to workers-1:
// the calls of one worker are made one at a time.
func parallel(workers, n int, f func(worker, i int)) {
	var next atomic.Int64
	work := func(worker int) {
		for i := int(next.Add(1)) - 1; i < n; i = int(next.Add(1)) - 1 {
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

// syncServices runs meanwhile, then syncService for every key. The
// endpoints of existing services are computed by up to
// Options.InitialSyncWorkers goroutines, this one included: the others
// start before meanwhile, and this one joins them once meanwhile is done,
// writing each result as it comes and computing a service itself
// whenever none is waiting. The workers read the controller's objects
// and the pods' memos, which nothing changes meanwhile: c.mu is held, and
// this goroutine writes only what they do not read (the dependency
// index, the service memo, the store); meanwhile must not change the
// objects or the memos either. c.mu must be held.
func (c *Controller) syncServices(keys []types.NamespacedName, meanwhile func()) {
	workers := min(c.opts.InitialSyncWorkers, len(keys)/minPerWorker)
	if workers <= 1 {
		meanwhile()
		for _, key := range keys {
			c.syncService(key)
		}
		return
	}
	type result struct {
		key     types.NamespacedName
		done    bool // false: left to syncService
		obj     *corev1.Service
		svc     *model.Service
		svcDiag []model.Diagnostic
		eps     []*model.Endpoint
		epDiag  []model.Diagnostic
		deps    depSet
		shape   endpointsShape
	}
	var (
		next atomic.Int64
		wg   sync.WaitGroup
		cfg  = c.serviceConfig()
		// Room for every result: the workers never wait for this
		// goroutine, which is busy with meanwhile first.
		results = make(chan result, len(keys))
		// The memos prepareLocked left, read by the workers while this
		// goroutine writes the results' memos into a new map.
		prepared = c.svcMemo
	)
	c.svcMemo = make(map[types.NamespacedName]svcMemoEntry, len(c.objs.services))
	// take returns the index of the next key to compute, false when every
	// key is taken.
	take := func() (int, bool) {
		i := int(next.Add(1)) - 1
		return i, i < len(keys)
	}
	compute := func(i int, scratch *endpointScratch) result {
		r := result{key: keys[i], obj: c.objs.services[keys[i]]}
		if r.obj != nil && c.namespaceSelected(r.key.Namespace) {
			var deps []dep
			if e, ok := memoOf(prepared, r.key, r.obj); ok {
				r.svc, r.svcDiag = e.svc, e.diags
			} else {
				r.svc, r.svcDiag = convertService(r.obj, cfg)
			}
			r.eps, r.epDiag, deps = c.serviceEndpoints(r.key, r.svc, scratch, true)
			r.deps, r.shape, r.done = newDepSet(deps), scratch.shape, true
		}
		return r
	}
	for range workers - 1 {
		wg.Go(func() {
			var scratch endpointScratch
			for i, ok := take(); ok; i, ok = take() {
				results <- compute(i, &scratch)
			}
		})
	}
	meanwhile()
	write := func(r result) {
		if !r.done {
			c.syncService(r.key)
			return
		}
		diags := slices.Clip(r.svcDiag) // appended to below
		c.svcMemo[r.key] = svcMemoEntry{obj: r.obj, svc: r.svc, diags: diags}
		c.objs.recordDepSet(r.key, r.deps)
		c.objs.setShape(r.key, r.shape)
		c.writeService(r.key, r.svc, r.eps, append(diags, r.epDiag...))
	}
	var scratch endpointScratch
	for written := 0; written < len(keys); written++ {
		select {
		case r := <-results:
			write(r)
			continue
		default:
		}
		if i, ok := take(); ok {
			write(compute(i, &scratch))
		} else {
			write(<-results) // every key is taken: wait for the workers
		}
	}
	wg.Wait()
}

// convertService returns convertService(obj) for the controller's
// configuration, computed once per Service object: a service's endpoints
// change far more often than the service, and a conversion is a dozen
// allocations. The result depends on the object alone (the configuration
// is fixed), so an entry is reused for the same object; it goes with the
// service. c.mu must be held.
func (c *Controller) convertService(key types.NamespacedName, obj *corev1.Service) (*model.Service, []model.Diagnostic) {
	if e, ok := memoOf(c.svcMemo, key, obj); ok {
		return e.svc, e.diags
	}
	svc, diags := convertService(obj, c.serviceConfig())
	diags = slices.Clip(diags) // callers append to it
	c.svcMemo[key] = svcMemoEntry{obj: obj, svc: svc, diags: diags}
	return svc, diags
}

// serviceConfig is what convertService takes of the options.
func (c *Controller) serviceConfig() serviceConfig {
	return serviceConfig{cluster: c.opts.ClusterID, domainSuffix: c.opts.DomainSuffix, trustDomain: c.opts.TrustDomain}
}

// svcMemoEntry is a Service object's conversion.
type svcMemoEntry struct {
	obj   *corev1.Service
	svc   *model.Service
	diags []model.Diagnostic
}

// memoOf returns the memo of key in m when it was made from obj.
func memoOf(m map[types.NamespacedName]svcMemoEntry, key types.NamespacedName, obj *corev1.Service) (svcMemoEntry, bool) {
	e, ok := m[key]
	return e, ok && e.obj == obj
}

// orphanSliceDiagnostics reports the slices of a service that does not
// exist: their endpoints are held until it does.
func (c *Controller) orphanSliceDiagnostics(key types.NamespacedName) []model.Diagnostic {
	var out []model.Diagnostic
	for _, name := range slices.Sorted(maps.Keys(c.objs.slices[key])) {
		out = append(out, model.Diagnostic{
			Severity: model.Warning, Kind: "EndpointSlice", Namespace: key.Namespace, Name: name,
			Cluster: c.opts.ClusterID,
			Message: fmt.Sprintf("service %s not found; endpoints held until it exists", key),
		})
	}
	return out
}

// serviceEndpoints computes a service's endpoints from its slices, the
// pods they name, their nodes, and the WorkloadEntries it selects; it
// returns them with the diagnostics of the slices and what they were
// computed from. It works in s, where the dependencies live: they are
// valid until s's next use. With initial set (the initial conversion,
// see syncServices) it leaves the pods' memos as they are, as the
// conversion's goroutines share them, and does not look for endpoints to
// reuse in the store: the store has none yet, and its lock would only
// contend with the goroutine writing to it.
//
// An endpoint whose targetRef pod is not known is withheld and reported
// pending; the recorded dependency on the pod releases it when the pod
// arrives. An endpoint without a Pod targetRef takes the metadata of the
// live pod holding its address, if any, else only its node's topology.
func (c *Controller) serviceEndpoints(key types.NamespacedName, svc *model.Service, s *endpointScratch, initial bool) ([]*model.Endpoint, []model.Diagnostic, []dep) {
	s.shape = 0
	if svc.Resolution == model.Alias {
		return nil, nil, nil // ExternalName services have no endpoints
	}
	ses, diags, oneToOne := s.merger.merge(maps.Values(c.objs.slices[key]), c.opts.ClusterID)
	if !oneToOne {
		s.shape |= joined
	}
	draining := c.drains(svc)
	var (
		eps  = make([]*model.Endpoint, 0, len(ses)*len(svc.Ports))
		deps = s.deps[:0]
		// The service's current list: unchanged endpoints are taken
		// from it.
		reuse = &s.reuser
	)
	var prev []*model.Endpoint
	if !initial {
		prev = c.Reader.Endpoints(svc.Key(), registry.EndpointQuery{})
	}
	reuse.reset(prev, len(svc.Ports))
	defer reuse.reset(nil, 0) // no published list kept alive from here
	for i := range ses {
		se := &ses[i]
		var (
			anon model.Endpoint
			meta *model.Endpoint
			off  bool
		)
		if meta, deps, off = c.sliceEndpointMeta(key.Namespace, se, deps, !initial, &anon); meta == nil {
			diags = append(diags, model.Diagnostic{
				Severity: model.Warning, Kind: "EndpointSlice", Namespace: key.Namespace, Name: se.slice,
				Cluster: c.opts.ClusterID,
				Message: fmt.Sprintf("endpoint %s pending: pod %s is not known yet; withheld until it arrives", se.addresses[0], se.pod),
			})
			continue
		}
		if off {
			s.shape |= offAddress
		}
		eps = appendSliceEndpoints(eps, svc, se, meta, endpointHealth(se.conditions, draining), reuse)
	}
	if entries := c.objs.entries[key.Namespace]; len(entries) > 0 {
		// A WorkloadEntry joins the slices' endpoints, even at an address
		// a slice lists (a VM and a pod at one IP during a migration).
		for _, name := range slices.Sorted(maps.Keys(entries)) {
			we := entries[name]
			if !workloadEntrySelected(svc, we) || !workloadEntryReachable(we, c.opts.ClusterID, c.net.cluster) {
				continue
			}
			for _, ep := range workloadEntryEndpoints(svc, we, c.opts.ClusterID) {
				if old := reuse.find(-1, ep); old != nil {
					ep = old
				}
				eps = append(eps, ep)
			}
		}
	}
	if len(svc.Ports) > 1 {
		s.portMajor(eps, svc.Ports)
	}
	// Sorted and without repeats (the pods of a service share nodes), as
	// setDeps wants them.
	slices.SortFunc(deps, compareDeps)
	deps = slices.Compact(deps)
	s.keepDeps(deps)
	return eps, diags, deps
}

// sliceEndpointMeta returns the metadata of se's endpoints (see
// appendSliceEndpoints), for a service of namespace ns, and appends to
// deps what it is taken from: se's targetRef pod, or else the pods
// holding se's addresses (podByIP), and that pod's node.
// It returns nil for an endpoint whose targetRef pod is not known yet
// (pending: withheld). off reports a pod's endpoint at an address that is
// not the pod's (endpointsShape offAddress). The metadata of an endpoint
// that no pod backs is written to scratch; memo is podEndpoint's.
func (c *Controller) sliceEndpointMeta(ns string, se *sliceEndpoint, deps []dep, memo bool, scratch *model.Endpoint) (meta *model.Endpoint, _ []dep, off bool) {
	var pod *podInfo
	if se.hasPod() {
		deps = append(deps, dep{kind: depPod, name: se.pod})
		if pod = c.lookupPod(se.pod); pod == nil {
			return nil, deps, false
		}
	} else {
		for _, a := range se.addresses {
			deps = append(deps, dep{kind: depIP, ip: a})
		}
		pod = c.podByIP(ns, se.addresses)
	}
	if pod != nil {
		deps = append(deps, dep{kind: depNode, name: types.NamespacedName{Name: pod.nodeName}})
		return c.podEndpoint(pod, memo), deps, !slices.Contains(pod.addrs, se.addresses[0])
	}
	*scratch = anonymousEndpoint(se.addresses, se.nodeName, c.clusterEnv())
	return scratch, deps, false
}

// endpointScratch is the memory one service's endpoint computation
// works in, kept for the next one so that a change allocates little more
// than the endpoints it publishes. What serviceEndpoints returns from it
// (the dependencies) is valid until its next call.
type endpointScratch struct {
	merger sliceMerger
	reuser endpointReuser
	deps   []dep
	// shape is what serviceEndpoints found of the endpoints it
	// returned.
	shape endpointsShape
	// rank, start and endpoints are portMajor's.
	rank, start []int
	endpoints   []*model.Endpoint
}

// portMajor puts eps, built one slice endpoint at a time (in address
// order, each one's endpoints in the order of ports), in the order the
// store keeps (model.CompareEndpoints): by service port name, then
// address. Within a port the order is kept: a stable counting sort,
// linear where sorting would compare, and the store then finds the list
// sorted. The endpoints of WorkloadEntries, appended after the slices',
// come last in their port; the store sorts such a list.
func (s *endpointScratch) portMajor(eps []*model.Endpoint, ports []model.Port) {
	if cap(s.rank) < len(ports) {
		s.rank = make([]int, len(ports))
		s.start = make([]int, len(ports))
	}
	rank, start := s.rank[:len(ports)], s.start[:len(ports)]
	for k := range ports { // a port's place in name order
		rank[k] = 0
		for j := range ports {
			if ports[j].Name < ports[k].Name || (ports[j].Name == ports[k].Name && j < k) {
				rank[k]++
			}
		}
	}
	portOf := func(ep *model.Endpoint) int {
		for k := range ports {
			if ports[k].Name == ep.ServicePortName {
				return rank[k]
			}
		}
		return len(ports) - 1 // not a port of the service: last (the store sorts)
	}
	clear(start)
	for _, ep := range eps {
		if r := portOf(ep); r+1 < len(start) {
			start[r+1]++
		}
	}
	for r := 1; r < len(start); r++ {
		start[r] += start[r-1]
	}
	tmp := append(s.endpoints[:0], eps...)
	for _, ep := range tmp {
		r := portOf(ep)
		eps[start[r]] = ep
		start[r]++
	}
	clear(tmp) // no endpoint kept alive from here
	s.endpoints = tmp[:0]
	if cap(s.endpoints) > maxKeptEndpoints {
		s.endpoints = nil
	}
}

// maxKeptEndpoints bounds the endpoint buffer kept between computations.
const maxKeptEndpoints = 1 << 14

// maxKeptDeps bounds the dependency buffer kept between computations.
const maxKeptDeps = 4096

// keepDeps keeps deps' array for the next computation, unless it grew
// past maxKeptDeps.
func (s *endpointScratch) keepDeps(deps []dep) {
	if cap(deps) > maxKeptDeps {
		s.deps = nil
		return
	}
	s.deps = deps[:0]
}
