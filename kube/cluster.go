package kube

import (
	"maps"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/meshreg/meshreg/internal/ipmap"
	"github.com/meshreg/meshreg/model"
)

// cluster is the controller's view of one cluster: the objects the
// informers delivered (in their lean forms), the WorkloadEntries handed
// in, and the indexes that find what an object's change affects (see
// graph.go). It holds no derived state: what is computed from it lives in
// the controller's memos and store. Only the controller's worker uses it.
type cluster struct {
	services map[types.NamespacedName]*corev1.Service
	// servicesByNS lists service names per namespace, for WorkloadEntry
	// selection.
	servicesByNS map[string]set[string]
	// slices by service (their kubernetes.io/service-name label), then
	// slice name; sliceOwner remembers each slice's service, to move it
	// when the label changes.
	slices     map[types.NamespacedName]map[string]*sliceInfo
	sliceOwner map[types.NamespacedName]types.NamespacedName
	pods       map[types.NamespacedName]*podInfo
	// podsByIP indexes the pods that lend their metadata by IP
	// (podLendsByIP) by each of their IPs; several pods may briefly
	// claim one IP while it is reused.
	podsByIP   ipmap.Map[list[types.NamespacedName]]
	podsByNode map[string]list[types.NamespacedName]
	nodes      map[string]*corev1.Node
	namespaces map[string]*corev1.Namespace
	// gatewaySvcs are the Services that may declare network gateways
	// (isGatewayCandidate); gatewayNodes the nodes with an external IP,
	// which NodePort gateways are reached at.
	gatewaySvcs  set[types.NamespacedName]
	gatewayNodes map[string]gatewayNode
	// gatewayAPI are the network gateways of each Gateway API Gateway
	// that declares some.
	gatewayAPI map[types.NamespacedName][]model.NetworkGateway
	// apiGateways are the Gateway API Gateways, gatewayClasses their
	// classes by name (Options.GatewayClient).
	apiGateways    map[types.NamespacedName]*gatewayInfo
	gatewayClasses map[string]*gatewayClassInfo
	// entries are the WorkloadEntry instances handed in, by namespace,
	// then by key (the cluster's and, under aggregate.ShareAcrossClusters,
	// other clusters' entries, which may share a namespace and name).
	entries map[string]map[model.WorkloadKey]*model.WorkloadInstance
	// exports and imports are the MCS API's ServiceExports and
	// ServiceImports (Options.MCS), by key.
	exports map[types.NamespacedName]*exportInfo
	imports map[types.NamespacedName]*importInfo

	// graph indexes the slices by the pods and addresses their
	// endpoints take metadata from.
	graph graph
}

func newCluster() *cluster {
	return &cluster{
		services:       map[types.NamespacedName]*corev1.Service{},
		servicesByNS:   map[string]set[string]{},
		slices:         map[types.NamespacedName]map[string]*sliceInfo{},
		sliceOwner:     map[types.NamespacedName]types.NamespacedName{},
		pods:           map[types.NamespacedName]*podInfo{},
		podsByNode:     map[string]list[types.NamespacedName]{},
		nodes:          map[string]*corev1.Node{},
		namespaces:     map[string]*corev1.Namespace{},
		gatewaySvcs:    set[types.NamespacedName]{},
		gatewayNodes:   map[string]gatewayNode{},
		gatewayAPI:     map[types.NamespacedName][]model.NetworkGateway{},
		apiGateways:    map[types.NamespacedName]*gatewayInfo{},
		gatewayClasses: map[string]*gatewayClassInfo{},
		entries:        map[string]map[model.WorkloadKey]*model.WorkloadInstance{},
		exports:        map[types.NamespacedName]*exportInfo{},
		imports:        map[types.NamespacedName]*importInfo{},
		graph:          newGraph(),
	}
}

// setService stores (svc != nil) or removes a service, and reports
// whether it was or is a gateway candidate.
func (cl *cluster) setService(key types.NamespacedName, svc *corev1.Service) (gateway bool) {
	_, gateway = cl.gatewaySvcs[key]
	delete(cl.gatewaySvcs, key)
	if svc == nil {
		delete(cl.services, key)
		removeFrom(cl.servicesByNS, key.Namespace, key.Name)
		return gateway
	}
	cl.services[key] = svc
	addTo(cl.servicesByNS, key.Namespace, key.Name)
	if isGatewayCandidate(svc) {
		cl.gatewaySvcs[key] = struct{}{}
		gateway = true
	}
	return gateway
}

// setSlice stores (s != nil) or removes a slice under its service, and
// returns the services whose slices changed: its service before and
// after (the same one, or none for a slice of no service).
func (cl *cluster) setSlice(key types.NamespacedName, s *sliceInfo) []types.NamespacedName {
	owner, had := cl.sliceOwner[key]
	var old *sliceInfo
	if had {
		old = cl.slices[owner][key.Name]
	}
	cl.graph.replaceSlice(key, old, s)
	if had && s != nil && s.service == owner.Name {
		cl.slices[owner][key.Name] = s // the same service's slice still
		return []types.NamespacedName{owner}
	}
	var touched []types.NamespacedName
	if had {
		if m := cl.slices[owner]; m != nil {
			delete(m, key.Name)
			if len(m) == 0 {
				delete(cl.slices, owner)
			}
		}
		delete(cl.sliceOwner, key)
		touched = append(touched, owner)
	}
	if s == nil || s.service == "" {
		// Gone, or a slice of no service: ignored, by rule.
		return touched
	}
	owner = types.NamespacedName{Namespace: key.Namespace, Name: s.service}
	m := cl.slices[owner]
	if m == nil {
		m = map[string]*sliceInfo{}
		cl.slices[owner] = m
	}
	m[key.Name] = s
	cl.sliceOwner[key] = owner
	if len(touched) == 0 || touched[0] != owner {
		touched = append(touched, owner)
	}
	return touched
}

// slice returns the stored slice of that key, or nil.
func (cl *cluster) slice(key types.NamespacedName) *sliceInfo {
	owner, ok := cl.sliceOwner[key]
	if !ok {
		return nil
	}
	return cl.slices[owner][key.Name]
}

// setPod stores (pod != nil) or removes a pod and keeps its indexes, and
// returns the pod it replaced.
func (cl *cluster) setPod(key types.NamespacedName, pod *podInfo) (old *podInfo) {
	old = cl.pods[key]
	if old != nil && pod != nil && old.nodeName == pod.nodeName &&
		podLendsByIP(old) == podLendsByIP(pod) && slices.Equal(old.addrs, pod.addrs) {
		// Indexed under the same IPs and node: only the entry changes.
		// (Most pod updates are of this kind.)
		cl.pods[key] = pod
		return old
	}
	if old != nil {
		if podLendsByIP(old) {
			for _, a := range old.addrs {
				removeFromIPList(&cl.podsByIP, a, key)
			}
		}
		removeFromList(cl.podsByNode, old.nodeName, key)
	}
	if pod == nil {
		delete(cl.pods, key)
		return old
	}
	cl.pods[key] = pod
	// The key is in no index list now (a pod's IPs are distinct), so it
	// is appended without a scan for it.
	if podLendsByIP(pod) {
		for _, a := range pod.addrs {
			appendToIPList(&cl.podsByIP, a, key)
		}
	}
	appendToList(cl.podsByNode, pod.nodeName, key)
	return old
}

// setNode stores (node != nil) or removes a node, and reports whether
// what the controller reads of it changed: its locality, which its pods'
// endpoints take, and what it lends NodePort gateways (gatewayNode).
func (cl *cluster) setNode(name string, node *corev1.Node) (locality, gateway bool) {
	old := cl.nodes[name]
	oldGW, hadGW := cl.gatewayNodes[name]
	var gw gatewayNode
	if node != nil {
		gw = gatewayNode{labels: node.Labels, address: nodeGatewayAddress(node)}
	}
	if gw.address == "" {
		delete(cl.gatewayNodes, name)
	} else {
		cl.gatewayNodes[name] = gw
	}
	gateway = hadGW != (gw.address != "") || (hadGW && (oldGW.address != gw.address || !maps.Equal(oldGW.labels, gw.labels)))
	if old != nil && node != nil && nodeLocality(old.Labels) == nodeLocality(node.Labels) {
		return false, gateway // the old object stays: pod memos compare it
	}
	if node == nil {
		delete(cl.nodes, name)
	} else {
		cl.nodes[name] = node
	}
	return old != nil || node != nil, gateway
}

// setEntry stores (we != nil) or removes a WorkloadEntry instance, and
// returns the one it replaced.
func (cl *cluster) setEntry(key model.WorkloadKey, we *model.WorkloadInstance) (old *model.WorkloadInstance) {
	m := cl.entries[key.Namespace]
	old = m[key]
	if we == nil {
		if m != nil {
			delete(m, key)
			if len(m) == 0 {
				delete(cl.entries, key.Namespace)
			}
		}
		return old
	}
	if m == nil {
		m = map[model.WorkloadKey]*model.WorkloadInstance{}
		cl.entries[key.Namespace] = m
	}
	m[key] = we
	return old
}
