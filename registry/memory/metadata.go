package memory

import (
	"maps"

	"github.com/meshreg/meshreg/model"
	"github.com/meshreg/meshreg/registry"
)

// The cluster metadata a kube registry publishes (registry.MetadataDiscovery):
// its cluster's network, its Namespaces and its Gateway API Gateways. A
// memory registry holds what it is given, as a kube registry would
// publish it, for tests of consumers that read them (package address).

var _ registry.MetadataDiscovery = (*Registry)(nil)

// SetNetwork publishes the registry's cluster with its network, as a kube
// registry does for its cluster's network (its system namespace's
// topology.istio.io/network label). Until it is called the registry
// publishes no cluster data.
func (r *Registry) SetNetwork(n model.NetworkID) {
	r.writeMu.Lock()
	defer r.writeMu.Unlock()
	r.store.SetCluster(model.Cluster{ID: r.opts.ClusterID, Network: n})
}

// AddNamespace adds namespaces, replacing any of the same name. Each is
// stored as a copy, in the registry's cluster.
func (r *Registry) AddNamespace(nss ...*model.Namespace) {
	r.writeMu.Lock()
	defer r.writeMu.Unlock()
	for _, ns := range nss {
		r.store.UpsertNamespace(&model.Namespace{Cluster: r.opts.ClusterID, Name: ns.Name, Labels: maps.Clone(ns.Labels),
			Annotations: maps.Clone(ns.Annotations)})
	}
}

// DeleteNamespace removes the namespace of that name, if there is one.
func (r *Registry) DeleteNamespace(name string) {
	r.writeMu.Lock()
	defer r.writeMu.Unlock()
	r.store.DeleteNamespace(model.NamespaceKey{Cluster: r.opts.ClusterID, Name: name})
}

// AddGateway adds Gateway API Gateways, replacing any of the same
// namespace and name. Each is stored in the registry's cluster; the
// registry keeps gw itself, which must not be modified afterwards.
func (r *Registry) AddGateway(gws ...*model.Gateway) {
	r.writeMu.Lock()
	defer r.writeMu.Unlock()
	for _, gw := range gws {
		if gw.Cluster != r.opts.ClusterID {
			c := *gw
			c.Cluster = r.opts.ClusterID
			gw = &c
		}
		r.store.UpsertGateway(gw)
	}
}

// DeleteGateway removes the Gateway namespace/name, if there is one.
func (r *Registry) DeleteGateway(namespace, name string) {
	r.writeMu.Lock()
	defer r.writeMu.Unlock()
	r.store.DeleteGateway(model.GatewayKey{Cluster: r.opts.ClusterID, Namespace: namespace, Name: name})
}

// Clusters returns the registry's cluster data, once SetNetwork gave it.
func (r *Registry) Clusters() []model.Cluster { return r.store.Clusters() }

// Namespaces returns the namespaces, sorted by name.
func (r *Registry) Namespaces() []*model.Namespace { return r.store.Namespaces() }

// Gateways returns the Gateways, sorted by namespace and name.
func (r *Registry) Gateways() []*model.Gateway { return r.store.Gateways() }
