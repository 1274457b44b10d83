package kube

import (
	"cmp"
	"net/netip"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/meshreg/meshreg/internal/ipmap"
	"github.com/meshreg/meshreg/model"
)

// objects is the controller's view of the cluster: the cached objects
// the informers delivered, the WorkloadEntries handed in, and the indexes
// that make every change incremental. It is not safe for concurrent use:
// the Controller guards it with its mutex.
type objects struct {
	services map[types.NamespacedName]*corev1.Service
	// slices by service (the kubernetes.io/service-name label), then
	// slice name; sliceOwner remembers each slice's service, to move it
	// when the label changes.
	slices     map[types.NamespacedName]map[string]*sliceInfo
	sliceOwner map[types.NamespacedName]types.NamespacedName
	pods       map[types.NamespacedName]*podInfo
	// podsByIP indexes the pods that lend their metadata by IP
	// (podLendsByIP) by each of their IPs;
	// several pods may briefly claim one IP while it is reused.
	podsByIP   ipmap.Map[list[types.NamespacedName]]
	podsByNode map[string]list[types.NamespacedName]
	nodes      map[string]*corev1.Node
	namespaces map[string]*corev1.Namespace
	// servicesByNS lists service names per namespace, for WorkloadEntry
	// selection.
	servicesByNS map[string]set[string]
	// entries are the WorkloadEntry instances handed in, by namespace
	// and name.
	entries map[string]map[string]*model.WorkloadInstance

	// deps records what each service's endpoints were computed from
	// (pods, pod IPs, nodes); rdeps is its inverse, the index from a pod,
	// IP or node to the services to recompute when it changes.
	deps    map[types.NamespacedName]depSet
	rdeps   map[nameDep]list[types.NamespacedName]
	rdepsIP ipmap.Map[list[types.NamespacedName]]
	// unindexed are the services whose deps recordDepSet recorded and
	// rdeps does not hold yet (see indexDeps).
	unindexed []types.NamespacedName
	// shapes holds, per service, what the computation of its endpoints
	// found that rules out a patch (see endpointsShape); a service
	// without an entry has none of it.
	shapes map[types.NamespacedName]endpointsShape
}

// endpointsShape is what the last computation of a service's endpoints
// found of their relation to the slices and pods they came from. The
// changes that patch the endpoints instead of recomputing them (see
// onPod, onSlice) keep addresses, pods and slices as they are, so the
// shape stays true until the next computation.
type endpointsShape uint8

const (
	// offAddress: an endpoint takes its metadata from a pod but its
	// primary address is none of the pod's IPs (a slice may list any
	// address with a pod's targetRef). A pod's endpoints are then not
	// all found by its IPs (see Controller.patchService).
	offAddress endpointsShape = 1 << iota
	// joined: merging the service's slices did not make one endpoint
	// of each address: an address is listed twice, or a pod's
	// addresses were joined (a dual-stack pod). A slice endpoint's
	// conditions are then not its endpoint's alone (see onSlice).
	joined
)

// set is a set of comparable values.
type set[K comparable] map[K]struct{}

func addTo[K, V comparable](m map[K]set[V], k K, v V) {
	s := m[k]
	if s == nil {
		s = set[V]{}
		m[k] = s
	}
	s[v] = struct{}{}
}

func removeFrom[K, V comparable](m map[K]set[V], k K, v V) {
	if s := m[k]; s != nil {
		delete(s, v)
		if len(s) == 0 {
			delete(m, k)
		}
	}
}

// appendToIPList and removeFromIPList are appendToList and
// removeFromList for an index by IP.
func appendToIPList[V comparable](m *ipmap.Map[list[V]], ip netip.Addr, v V) {
	m.Set(ip, append(m.Get(ip), v))
}

func removeFromIPList[V comparable](m *ipmap.Map[list[V]], ip netip.Addr, v V) {
	switch l, changed := m.Get(ip).remove(v); {
	case !changed:
	case len(l) == 0:
		m.Delete(ip)
	default:
		m.Set(ip, l)
	}
}

// list is a small set kept as a slice, for the index entries that hold
// one value or a few (the pods of an IP, the services computed from a
// pod) or a bounded number (the pods of a node: the kubelet's maxPods,
// 110 by default): a map per entry costs several times the memory and
// allocations. Adding appends (its callers know the value absent: see
// appendToList); removing is linear in the entry's size. Order carries
// no meaning.
type list[V comparable] []V

// remove returns l without v, and whether v was there. It works in
// place: no caller holds a list across a change of its index.
func (l list[V]) remove(v V) (list[V], bool) {
	i := slices.Index(l, v)
	if i < 0 {
		return l, false
	}
	l[i] = l[len(l)-1]
	return l[:len(l)-1], true
}

// appendToList adds v to the list of k, which the caller knows lacks it:
// no search of the list.
func appendToList[K, V comparable](m map[K]list[V], k K, v V) {
	m[k] = append(m[k], v)
}

func removeFromList[K, V comparable](m map[K]list[V], k K, v V) {
	switch l, changed := m[k].remove(v); {
	case !changed:
	case len(l) == 0:
		delete(m, k)
	default:
		m[k] = l
	}
}

// depKind says what a dep names.
type depKind uint8

const (
	depPod  depKind = iota + 1 // a pod, by namespace and name
	depIP                      // whichever pod has an IP
	depNode                    // a node, by name
)

// dep is something a service's endpoints were computed from.
type dep struct {
	kind depKind
	name types.NamespacedName
	ip   netip.Addr
}

// depSet is a service's recorded deps, kept in two arrays, right-sized
// when the service's endpoints are computed (patchDeps may leave room
// to spare) and held by no one else: the pods and nodes by name, and the
// IPs. IP deps are rare (endpoints without a Pod targetRef), so name deps
// do not pay for an address field nor IP deps for names.
type depSet struct {
	names []nameDep
	ips   []netip.Addr
}

// nameDep is a dep of kind depPod or depNode.
type nameDep struct {
	kind depKind
	name types.NamespacedName
}

// newDepSet stores deps, sorted (compareDeps) and without repeats.
func newDepSet(deps []dep) depSet {
	var s depSet
	n := 0
	for _, d := range deps {
		if d.kind == depIP {
			n++
		}
	}
	if n > 0 {
		s.ips = make([]netip.Addr, 0, n)
	}
	if len(deps) > n {
		s.names = make([]nameDep, 0, len(deps)-n)
	}
	for _, d := range deps {
		if d.kind == depIP {
			s.ips = append(s.ips, d.ip)
		} else {
			s.names = append(s.names, nameDep{kind: d.kind, name: d.name})
		}
	}
	return s
}

// equal reports whether s holds exactly deps (sorted, without repeats).
func (s depSet) equal(deps []dep) bool {
	if len(deps) != len(s.names)+len(s.ips) {
		return false
	}
	i, j := 0, 0
	for _, d := range deps {
		if d.kind == depIP {
			if j >= len(s.ips) || s.ips[j] != d.ip {
				return false
			}
			j++
		} else {
			if i >= len(s.names) || s.names[i] != (nameDep{kind: d.kind, name: d.name}) {
				return false
			}
			i++
		}
	}
	return true
}

// compareDeps orders deps by kind, then name, then IP. Each comparison is
// made only when the ones before it tie: a service's deps are sorted on
// every computation of its endpoints, a thousand for a service of a
// thousand pods, and cmp.Or would compare all four every time.
func compareDeps(a, b dep) int {
	if a.kind != b.kind {
		return cmp.Compare(a.kind, b.kind)
	}
	if c := strings.Compare(a.name.Namespace, b.name.Namespace); c != 0 {
		return c
	}
	if c := strings.Compare(a.name.Name, b.name.Name); c != 0 {
		return c
	}
	return a.ip.Compare(b.ip)
}

func newObjects() *objects {
	return &objects{
		services:     map[types.NamespacedName]*corev1.Service{},
		slices:       map[types.NamespacedName]map[string]*sliceInfo{},
		sliceOwner:   map[types.NamespacedName]types.NamespacedName{},
		pods:         map[types.NamespacedName]*podInfo{},
		podsByNode:   map[string]list[types.NamespacedName]{},
		nodes:        map[string]*corev1.Node{},
		namespaces:   map[string]*corev1.Namespace{},
		servicesByNS: map[string]set[string]{},
		entries:      map[string]map[string]*model.WorkloadInstance{},
		deps:         map[types.NamespacedName]depSet{},
		shapes:       map[types.NamespacedName]endpointsShape{},
		rdeps:        map[nameDep]list[types.NamespacedName]{},
	}
}

// setDeps replaces the recorded dependencies of a service; deps must be
// sorted (compareDeps) and without repeats.
func (o *objects) setDeps(svc types.NamespacedName, deps []dep) {
	o.indexDeps()
	if old, ok := o.deps[svc]; ok && old.equal(deps) {
		return // the index already holds every one
	}
	o.replaceDeps(svc, newDepSet(deps))
}

// patchDeps removes the deps lost from the recorded dependencies of svc
// and adds the deps gained (a dep in both stays), given in any order and
// with repeats, and keeps the reverse index: for a service of a thousand
// pods that gains or loses one, a few binary searches and two entries of
// the index, where setDeps would compare every dep.
func (o *objects) patchDeps(svc types.NamespacedName, lost, gained []dep) {
	if len(lost)+len(gained) == 0 {
		return
	}
	o.indexDeps()
	s := o.deps[svc] // its arrays are the map entry's alone: edited in place
	for _, d := range lost {
		if d.kind == depIP {
			if i, ok := slices.BinarySearchFunc(s.ips, d.ip, netip.Addr.Compare); ok {
				s.ips = slices.Delete(s.ips, i, i+1)
				removeFromIPList(&o.rdepsIP, d.ip, svc)
			}
			continue
		}
		nd := nameDep{kind: d.kind, name: d.name}
		if i, ok := slices.BinarySearchFunc(s.names, nd, compareNameDeps); ok {
			s.names = slices.Delete(s.names, i, i+1)
			removeFromList(o.rdeps, nd, svc)
		}
	}
	for _, d := range gained {
		if d.kind == depIP {
			if i, ok := slices.BinarySearchFunc(s.ips, d.ip, netip.Addr.Compare); !ok {
				s.ips = slices.Insert(s.ips, i, d.ip)
				appendToIPList(&o.rdepsIP, d.ip, svc)
			}
			continue
		}
		nd := nameDep{kind: d.kind, name: d.name}
		if i, ok := slices.BinarySearchFunc(s.names, nd, compareNameDeps); !ok {
			s.names = slices.Insert(s.names, i, nd)
			appendToList(o.rdeps, nd, svc)
		}
	}
	if len(s.names)+len(s.ips) == 0 {
		delete(o.deps, svc)
		return
	}
	o.deps[svc] = s
}

// recordDepSet records s as the dependencies of svc, which has none
// recorded, and leaves them out of the reverse index until indexDeps: the
// initial conversion records every service's and builds the index once
// the registry is marked synced (Run), as queries do not read it.
func (o *objects) recordDepSet(svc types.NamespacedName, s depSet) {
	if len(s.names)+len(s.ips) > 0 {
		o.deps[svc] = s
		o.unindexed = append(o.unindexed, svc)
	}
}

// indexDeps adds the dependencies that recordDepSet recorded to the
// reverse index. Every other use of the index calls it first.
func (o *objects) indexDeps() {
	if len(o.unindexed) == 0 {
		return
	}
	if len(o.rdeps) == 0 {
		// The initial conversion's dependencies are mostly pods and
		// nodes: one growth, not twenty.
		o.rdeps = make(map[nameDep]list[types.NamespacedName], len(o.pods)+len(o.nodes))
	}
	for _, svc := range o.unindexed {
		s := o.deps[svc]
		for _, d := range s.names {
			appendToList(o.rdeps, d, svc)
		}
		for _, ip := range s.ips {
			appendToIPList(&o.rdepsIP, ip, svc)
		}
	}
	o.unindexed = nil
}

// replaceDeps records s as the dependencies of svc in place of the old
// ones. Both are sorted (compareDeps), so they are walked together and
// the reverse index changes only for the deps added or gone: a service of
// a thousand pods that gains or loses one touches two entries, not two
// thousand.
func (o *objects) replaceDeps(svc types.NamespacedName, s depSet) {
	old := o.deps[svc]
	diffSorted(old.names, s.names, compareNameDeps,
		func(d nameDep) { removeFromList(o.rdeps, d, svc) },
		func(d nameDep) { appendToList(o.rdeps, d, svc) })
	diffSorted(old.ips, s.ips, netip.Addr.Compare,
		func(ip netip.Addr) { removeFromIPList(&o.rdepsIP, ip, svc) },
		func(ip netip.Addr) { appendToIPList(&o.rdepsIP, ip, svc) })
	if len(s.names)+len(s.ips) == 0 {
		delete(o.deps, svc)
		return
	}
	o.deps[svc] = s
}

// diffSorted calls gone for each element of a that b lacks, and added for
// each element of b that a lacks; a and b are sorted by cmp, without
// repeats.
func diffSorted[T any](a, b []T, cmp func(T, T) int, gone, added func(T)) {
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		c := 0
		switch {
		case j == len(b):
			c = -1
		case i == len(a):
			c = 1
		default:
			c = cmp(a[i], b[j])
		}
		switch {
		case c < 0:
			gone(a[i])
			i++
		case c > 0:
			added(b[j])
			j++
		default:
			i++
			j++
		}
	}
}

// compareNameDeps is compareDeps for deps of kind depPod and depNode.
func compareNameDeps(a, b nameDep) int {
	return compareDeps(dep{kind: a.kind, name: a.name}, dep{kind: b.kind, name: b.name})
}

// setShape records the shape of a service's endpoints.
func (o *objects) setShape(svc types.NamespacedName, sh endpointsShape) {
	if sh != 0 {
		o.shapes[svc] = sh
	} else if len(o.shapes) > 0 {
		delete(o.shapes, svc)
	}
}

// dependents returns the services whose endpoints were computed from d.
func (o *objects) dependents(d dep) list[types.NamespacedName] {
	o.indexDeps()
	if d.kind == depIP {
		return o.rdepsIP.Get(d.ip)
	}
	return o.rdeps[nameDep{kind: d.kind, name: d.name}]
}

// setPod stores (pod != nil) or removes a pod and keeps its indexes, and
// returns the pod it replaced.
func (o *objects) setPod(key types.NamespacedName, pod *podInfo) (old *podInfo) {
	old = o.pods[key]
	if old != nil && pod != nil && samePlacement(old, pod) && podLendsByIP(old) == podLendsByIP(pod) {
		// Indexed under the same IPs and node: only the entry changes.
		// (Most pod updates are of this kind; the index lists are
		// scanned by comparing keys, each a cold read.)
		o.pods[key] = pod
		return old
	}
	if old != nil {
		for _, a := range old.addrs {
			removeFromIPList(&o.podsByIP, a, key)
		}
		removeFromList(o.podsByNode, old.nodeName, key)
	}
	if pod == nil {
		delete(o.pods, key)
		return old
	}
	o.pods[key] = pod
	// The key is in no index list now (a pod is listed under its node,
	// and under its IPs when it lends its metadata by IP; its IPs are
	// distinct), so it is appended without a scan for it.
	if podLendsByIP(pod) {
		for _, a := range pod.addrs {
			o.podsByIP.Set(a, append(o.podsByIP.Get(a), key))
		}
	}
	o.podsByNode[pod.nodeName] = append(o.podsByNode[pod.nodeName], key)
	return old
}

// samePlacement reports whether two versions of a pod back the same
// endpoints: same node, same IPs, same liveness. (Whether it lends its
// metadata by IP, podLendsByIP, decides which endpoints without a
// targetRef it backs: setPod and onPod check that too.)
func samePlacement(old, pod *podInfo) bool {
	return old.nodeName == pod.nodeName && slices.Equal(old.addrs, pod.addrs) && podIsLive(old) == podIsLive(pod)
}

// setSlice stores (s != nil) or removes a slice under its service, and
// returns the services whose slices changed.
func (o *objects) setSlice(key types.NamespacedName, s *sliceInfo) []types.NamespacedName {
	owner, ok := o.sliceOwner[key]
	if ok && s != nil && sliceServiceName(s) == owner.Name {
		// The same service's slice still: only the entry changes.
		o.slices[owner][key.Name] = s
		return []types.NamespacedName{owner}
	}
	var touched []types.NamespacedName
	if ok {
		if m := o.slices[owner]; m != nil {
			delete(m, key.Name)
			if len(m) == 0 {
				delete(o.slices, owner)
			}
		}
		delete(o.sliceOwner, key)
		touched = append(touched, owner)
	}
	if s == nil {
		return touched
	}
	name := sliceServiceName(s)
	if name == "" {
		// Not a service's slice (no kubernetes.io/service-name label):
		// ignored, by rule.
		return touched
	}
	owner = types.NamespacedName{Namespace: key.Namespace, Name: name}
	m := o.slices[owner]
	if m == nil {
		m = map[string]*sliceInfo{}
		o.slices[owner] = m
	}
	m[key.Name] = s
	o.sliceOwner[key] = owner
	if len(touched) == 0 || touched[0] != owner {
		touched = append(touched, owner)
	}
	return touched
}

// slice returns the stored slice of that key, or nil.
func (o *objects) slice(key types.NamespacedName) *sliceInfo {
	owner, ok := o.sliceOwner[key]
	if !ok {
		return nil
	}
	return o.slices[owner][key.Name]
}

// setService stores (svc != nil) or removes a service.
func (o *objects) setService(key types.NamespacedName, svc *corev1.Service) (old *corev1.Service) {
	old = o.services[key]
	if svc == nil {
		delete(o.services, key)
		removeFrom(o.servicesByNS, key.Namespace, key.Name)
		return old
	}
	o.services[key] = svc
	addTo(o.servicesByNS, key.Namespace, key.Name)
	return old
}

// setEntry stores (we != nil) or removes a WorkloadEntry instance, and
// returns the one it replaced.
func (o *objects) setEntry(key types.NamespacedName, we *model.WorkloadInstance) (old *model.WorkloadInstance) {
	m := o.entries[key.Namespace]
	old = m[key.Name]
	if we == nil {
		if m != nil {
			delete(m, key.Name)
			if len(m) == 0 {
				delete(o.entries, key.Namespace)
			}
		}
		return old
	}
	if m == nil {
		m = map[string]*model.WorkloadInstance{}
		o.entries[key.Namespace] = m
	}
	m[key.Name] = we
	return old
}
