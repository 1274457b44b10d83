package kube

import (
	"errors"
	"fmt"
	"maps"
	"net/netip"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/meshreg/meshreg/model"
)

// svcState is what the controller keeps of a service between changes:
// its object's conversion, and the memo of its endpoints, valid while the
// object is the one converted.
type svcState struct {
	obj *corev1.Service
	// nsTraffic is the namespace's traffic distribution annotation the
	// service was converted with.
	nsTraffic string
	svc       *model.Service
	diags     []model.Diagnostic // the conversion's
	drains    bool               // see Controller.drains
	// disc is the discoverability of the memo's endpoints (Options.MCS).
	disc model.Discoverability
	memo endpointMemo
	// exported is svc with the cluster's export (Service.Exports), for
	// as long as the cluster exports it.
	exported *model.Service
	// clusterSet is the service's ClusterSet host (Options.MCS.Host).
	clusterSet clusterSetMemo
}

// flush converts everything dirty and writes the results to the store:
// first the pods' workloads (and with them the pods' memoized metadata),
// then the services with their endpoints and diagnostics. Each result
// depends only on the objects, so the order of the flush does not
// matter.
func (c *Controller) flush() {
	for key := range c.dirty.pods {
		c.syncPod(key)
	}
	env := clusterView{c: c, memoize: true, changedPods: c.dirty.pods}
	for key := range c.dirty.services {
		c.syncService(key, env)
	}
	if c.dirty.gateways {
		c.syncGateways()
	}
	c.syncMetadata()
	c.dirty.reset()
}

// syncPod publishes a pod's workload instance, or withdraws it when the
// pod is gone, out of the namespace selection, or yields none (no IP,
// terminal). A pod that does not serve (podServes) is published
// Unhealthy.
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
	c.store.UpsertWorkload(w)
}

// syncService converts a service and computes its endpoints and
// diagnostics from the current objects, then writes all three.
func (c *Controller) syncService(key types.NamespacedName, env clusterView) {
	skey := c.serviceKey(key)
	obj := c.cl.services[key]
	if obj == nil || !c.namespaceSelected(key.Namespace) {
		delete(c.svcs, key)
		c.store.DeleteService(skey)
		c.store.SetEndpoints(c.shard, skey, nil)
		var diags []model.Diagnostic
		if c.namespaceSelected(key.Namespace) {
			diags = append(c.orphanSliceDiagnostics(key), c.orphanExportDiagnostics(key)...)
		}
		c.store.SetDiagnostics(serviceOwner(key), diags)
		c.setPending(key, 0)
		if c.opts.MCS.Host {
			c.writeClusterSet(key, nil, nil)
		}
		return
	}
	st := c.state(key, obj)
	if disc := c.discoverability(key, false); disc != st.disc {
		// Every endpoint differs: none of the memo's is of use.
		st.memo, st.disc = endpointMemo{}, disc
	}
	eps, diags, memo := serviceEndpoints(key.Namespace, st.svc, st.traits(), c.slicesOf(key), env, &st.memo, &c.work)
	st.memo = memo
	c.writeService(key, st, eps, diags)
}

// traits returns what the service's endpoints take from it.
func (st *svcState) traits() endpointTraits {
	return endpointTraits{draining: st.drains, disc: st.disc}
}

// state returns a service's state for its current object: the one kept,
// or, for a new object, its conversion with an empty memo (the endpoints
// of another object may differ in every field).
func (c *Controller) state(key types.NamespacedName, obj *corev1.Service) *svcState {
	nsTraffic := c.nsTraffic(key.Namespace)
	if st := c.svcs[key]; st != nil && st.obj == obj && st.nsTraffic == nsTraffic {
		return st
	}
	st := c.newState(obj, nsTraffic, c.serviceConfig())
	c.svcs[key] = st
	return st
}

// newState returns the state of a service object: its conversion, and an
// empty memo. Safe for concurrent use.
func (c *Controller) newState(obj *corev1.Service, nsTraffic string, cfg serviceConfig) *svcState {
	svc, diags := convertService(obj, nsTraffic, cfg)
	return &svcState{obj: obj, nsTraffic: nsTraffic, svc: svc, diags: slices.Clip(diags), drains: c.drains(svc)}
}

// nsTraffic returns a namespace's traffic distribution annotation, ""
// when it has none (or is not known yet).
func (c *Controller) nsTraffic(ns string) string {
	if o := c.cl.namespaces[ns]; o != nil {
		return o.Annotations[model.TrafficDistributionAnnotation]
	}
	return ""
}

// writeService writes a converted service, its endpoints and its
// diagnostics (the conversion's and the endpoints') to the store.
func (c *Controller) writeService(key types.NamespacedName, st *svcState, eps []*model.Endpoint, diags []model.Diagnostic) {
	svc := st.svc
	if e := c.cl.exports[key]; e != nil {
		if st.exported == nil {
			st.exported = svc
		}
		st.exported = exportedService(st.exported, c.opts.ClusterID, e.created)
		svc = st.exported
	}
	c.store.UpsertService(svc)
	c.store.SetEndpoints(c.shard, svc.Key(), eps) // sorts eps, if they are not
	c.store.SetDiagnostics(serviceOwner(key), append(st.diags, diags...))
	c.setPending(key, st.memo.pending)
	if c.opts.MCS.Host {
		c.writeClusterSet(key, st, eps)
	}
}

// slicesOf returns the slices of a service, in the work buffer.
func (c *Controller) slicesOf(key types.NamespacedName) []*sliceInfo {
	c.work.slices = slices.AppendSeq(c.work.slices[:0], maps.Values(c.cl.slices[key]))
	return c.work.slices
}

// drains reports whether a service drains its endpoints: it has one of
// Options.DrainingLabels (see endpointHealth).
func (c *Controller) drains(svc *model.Service) bool {
	return slices.ContainsFunc(c.opts.DrainingLabels, func(l string) bool { return svc.Labels[l] != "" })
}

// serviceConfig is what convertService takes of the options.
func (c *Controller) serviceConfig() serviceConfig {
	return serviceConfig{cluster: c.opts.ClusterID, clusters: c.clusters, domainSuffix: c.opts.DomainSuffix, trustDomain: c.opts.TrustDomain}
}

// serviceKey is the model key of the Service of that name.
func (c *Controller) serviceKey(key types.NamespacedName) model.ServiceKey {
	return model.ServiceKey{Namespace: key.Namespace, Hostname: model.KubeServiceHostname(key.Name, key.Namespace, c.opts.DomainSuffix)}
}

// serviceOwner is the store's diagnostics owner of a service: the
// service's own diagnostics and those of its slices.
func serviceOwner(key types.NamespacedName) string { return "Service/" + key.String() }

// orphanSliceDiagnostics reports the slices of a service that does not
// exist: their endpoints are held until it does.
func (c *Controller) orphanSliceDiagnostics(key types.NamespacedName) []model.Diagnostic {
	var out []model.Diagnostic
	for _, name := range slices.Sorted(maps.Keys(c.cl.slices[key])) {
		out = append(out, model.Diagnostic{
			Severity: model.Warning, Kind: "EndpointSlice", Namespace: key.Namespace, Name: name,
			Cluster: c.opts.ClusterID,
			Message: fmt.Sprintf("service %s not found; endpoints held until it exists", key),
		})
	}
	return out
}

// lookupPod returns a pod of a selected namespace, or nil.
func (c *Controller) lookupPod(key types.NamespacedName) *podInfo {
	if !c.namespaceSelected(key.Namespace) {
		return nil
	}
	return c.cl.pods[key]
}

// podByIP returns the pod of namespace ns that lends its metadata to an
// endpoint at the first of addrs a pod holds (see podLendsByIP); among
// several such pods on one IP, the first by name. Nil when none: a pod
// of another namespace lends nothing.
func (c *Controller) podByIP(ns string, addrs []netip.Addr) *podInfo {
	for _, a := range addrs {
		var found *podInfo
		for _, k := range c.cl.podsByIP.Get(a) {
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

// podEnv returns the environment of a pod on the named node.
func (c *Controller) podEnv(nodeName string) podEnv {
	env := c.clusterEnv()
	if n := c.cl.nodes[nodeName]; n != nil {
		env.node = nodeLocality(n.Labels)
	}
	return env
}

// clusterEnv returns the environment of a pod on an unknown node.
func (c *Controller) clusterEnv() podEnv {
	return podEnv{cluster: c.opts.ClusterID, trustDomain: c.opts.TrustDomain, network: c.net}
}

// clusterView is the endpointEnv of the controller's computations: the
// cluster as it is, and the pods changed in the flush (none in the
// initial conversion, whose services have no memo). With memoize unset
// (the initial conversion's goroutines, which share the pods' memos) it
// reads pod memos and writes none.
type clusterView struct {
	c           *Controller
	memoize     bool
	changedPods set[types.NamespacedName]
}

func (v clusterView) podFor(ns string, se *sliceEndpoint) (*podInfo, bool) {
	if se.hasPod() {
		pod := v.c.lookupPod(se.pod)
		return pod, pod == nil
	}
	return v.c.podByIP(ns, se.addresses), false
}

func (v clusterView) podMeta(pod *podInfo) *model.Endpoint { return v.c.podEndpoint(pod, v.memoize) }

func (v clusterView) anonymous(addrs []netip.Addr, nodeName string) model.Endpoint {
	return anonymousEndpoint(addrs, nodeName, v.c.clusterEnv())
}

func (v clusterView) changed(pod types.NamespacedName) bool {
	_, ok := v.changedPods[pod]
	return ok
}

func (v clusterView) none() bool { return len(v.changedPods) == 0 }

func (v clusterView) entries(ns string) map[model.WorkloadKey]*model.WorkloadInstance {
	return v.c.cl.entries[ns]
}

func (v clusterView) entryReachable(we *model.WorkloadInstance) bool {
	return workloadEntryReachable(we, v.c.opts.ClusterID, v.c.net.cluster)
}

func (v clusterView) cluster() model.ClusterID { return v.c.opts.ClusterID }
