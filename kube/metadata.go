package kube

import (
	"maps"
	"slices"

	"k8s.io/apimachinery/pkg/types"

	"github.com/meshreg/meshreg/model"
	"github.com/meshreg/meshreg/registry"
)

// The cluster metadata the controller publishes beside its services and
// workloads (registry.MetadataDiscovery): its cluster's network
// (Network), every Namespace with its labels, and with a Gateway API
// client every Gateway, with its class's labels and annotations. They
// are published with the initial state (primeMetadata) and then, like
// everything else, by the flush of the changes that touch them; the
// store publishes only what changed.

var _ registry.MetadataDiscovery = (*Controller)(nil)

// Clusters returns the cluster's data: its ID and network.
func (c *Controller) Clusters() []model.Cluster { return c.store.Clusters() }

// Namespaces returns the cluster's namespaces, sorted by name.
func (c *Controller) Namespaces() []*model.Namespace { return c.store.Namespaces() }

// Gateways returns the cluster's Gateway API Gateways (Options.GatewayClient),
// sorted by namespace and name.
func (c *Controller) Gateways() []*model.Gateway { return c.store.Gateways() }

// markNamespace and markGateway mark a namespace or a Gateway to publish
// again; before the initial lists are in, they do nothing.
func (c *Controller) markNamespace(name string) {
	if c.primed {
		c.dirty.namespaces[name] = struct{}{}
	}
}

func (c *Controller) markGateway(key types.NamespacedName) {
	if c.primed {
		c.dirty.apiGateways[key] = struct{}{}
	}
}

// primeMetadata publishes the initial metadata: the cluster, then every
// namespace and Gateway in the order of their names.
func (c *Controller) primeMetadata() {
	c.store.SetCluster(model.Cluster{ID: c.opts.ClusterID, Network: c.net.cluster})
	for _, name := range slices.Sorted(maps.Keys(c.cl.namespaces)) {
		c.publishNamespace(name)
	}
	for _, key := range slices.SortedFunc(maps.Keys(c.cl.apiGateways), compareNames) {
		c.publishGateway(key)
	}
}

// syncMetadata publishes what of the metadata is dirty.
func (c *Controller) syncMetadata() {
	c.store.SetCluster(model.Cluster{ID: c.opts.ClusterID, Network: c.net.cluster})
	for name := range c.dirty.namespaces {
		c.publishNamespace(name)
	}
	for key := range c.dirty.apiGateways {
		c.publishGateway(key)
	}
}

func (c *Controller) publishNamespace(name string) {
	ns := c.cl.namespaces[name]
	if ns == nil {
		c.store.DeleteNamespace(model.NamespaceKey{Cluster: c.opts.ClusterID, Name: name})
		return
	}
	c.store.UpsertNamespace(&model.Namespace{Cluster: c.opts.ClusterID, Name: name, Labels: ns.Labels,
		Annotations: model.KeepAnnotations(ns.Annotations)})
}

// publishGateway publishes a Gateway with its class's labels and
// annotations, and its diagnostics.
func (c *Controller) publishGateway(key types.NamespacedName) {
	owner := "Gateway/" + key.String()
	info := c.cl.apiGateways[key]
	if info == nil {
		c.store.DeleteGateway(model.GatewayKey{Cluster: c.opts.ClusterID, Namespace: key.Namespace, Name: key.Name})
		c.store.SetDiagnostics(owner, nil)
		return
	}
	gw := info.gw
	if class := c.cl.gatewayClasses[gw.Class]; class != nil {
		withClass := *gw
		withClass.ClassLabels, withClass.ClassAnnotations = class.labels, class.annotations
		if withClass.ClassLabels == nil {
			withClass.ClassLabels = map[string]string{} // known, without labels
		}
		gw = &withClass
	}
	c.store.UpsertGateway(gw)
	c.store.SetDiagnostics(owner, info.diags)
}
