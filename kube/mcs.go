package kube

import (
	"context"
	"fmt"
	"log/slog"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	mcsv1alpha1 "sigs.k8s.io/mcs-api/pkg/apis/v1alpha1"
	mcsclient "sigs.k8s.io/mcs-api/pkg/client/clientset/versioned"

	"github.com/meshreg/meshreg/model"
)

// Kubernetes Multi-Cluster Services (Options.MCS): the ServiceExports and
// ServiceImports of the cluster, read only when the cluster serves
// multicluster.x-k8s.io/v1alpha1. Run looks for it before it starts the
// informers and, while it is absent (or the look fails), again every
// MCSOptions.CheckInterval: the informers start on Run's goroutine once
// it is served, and their objects arrive as any change does.

const (
	mcsGroupVersion        = "multicluster.x-k8s.io/v1alpha1"
	serviceExportsInformer = "serviceexports"
	serviceImportsInformer = "serviceimports"
	// mcsDiagnosticsOwner is the store's diagnostics owner of a failure
	// to look for the MCS API.
	mcsDiagnosticsOwner = "MCSAPI"
)

// mcsResources returns the MCS API resources the options read:
// serviceexports with service discovery, and serviceimports with the
// ClusterSet host too.
func mcsResources(o MCSOptions) []string {
	switch {
	case o.Host:
		return []string{serviceExportsInformer, serviceImportsInformer}
	case o.ServiceDiscovery:
		return []string{serviceExportsInformer}
	}
	return nil
}

// mcsAPIServed reports whether the cluster serves every resource of
// mcsGroupVersion named. An error other than the group being absent is
// returned.
func mcsAPIServed(client mcsclient.Interface, resources []string) (bool, error) {
	list, err := client.Discovery().ServerResourcesForGroupVersion(mcsGroupVersion)
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	for _, want := range resources {
		if !slices.ContainsFunc(list.APIResources, func(r metav1.APIResource) bool { return r.Name == want }) {
			return false, nil
		}
	}
	return true, nil
}

// startMCS looks for the MCS API once and, when the cluster serves it,
// returns its informers, which the caller starts. retry says to look
// again later. Only the first look (first) logs that the API is absent
// (at Info) or could not be looked for (at Error); the looks again log
// at Debug. It runs on Run's goroutine.
func (c *Controller) startMCS(first bool) (infs []informer, retry bool) {
	resources := mcsResources(c.opts.MCS)
	served, err := mcsAPIServed(c.opts.MCS.Client, resources)
	switch {
	case err != nil:
		level := slog.LevelDebug // the diagnostic stays until a look succeeds
		if first {
			level = slog.LevelError
		}
		c.log.Log(context.Background(), level, "could not look for the MCS API; no ServiceExports or ServiceImports yet", "err", err)
		c.store.SetDiagnostics(mcsDiagnosticsOwner, []model.Diagnostic{{
			Severity: model.Warning, Kind: "ServiceExport", Cluster: c.opts.ClusterID,
			Message: fmt.Sprintf("could not look for the MCS API (%v); ServiceExports and ServiceImports are not read until it is found (no Service is exported meanwhile)", err),
		}})
		return nil, true
	case !served:
		level := slog.LevelDebug
		if first {
			level = slog.LevelInfo
		}
		c.log.Log(context.Background(), level, "the cluster does not serve "+mcsGroupVersion+" ServiceExports and ServiceImports (the MCS CRDs are not installed); no Service is exported until it does")
		c.store.SetDiagnostics(mcsDiagnosticsOwner, nil)
		return nil, true
	}
	c.store.SetDiagnostics(mcsDiagnosticsOwner, nil)
	c.log.Info("reading ServiceExports and ServiceImports", "resources", resources)
	return c.newMCSInformers(), false
}

// newMCSInformers returns the informers of the ServiceExports and, with
// the ClusterSet host, the ServiceImports.
func (c *Controller) newMCSInformers() []informer {
	client := c.opts.MCS.Client
	v1 := client.MulticlusterV1alpha1()
	resync := c.opts.ResyncPeriod
	exports := v1.ServiceExports("")
	out := []informer{newInformer(serviceExportsInformer, listWatch(client, exports.List, exports.Watch, c.relists(serviceExportsInformer)),
		&mcsv1alpha1.ServiceExport{}, resync, stripServiceExport,
		handle(c, func(ch *changes) map[types.NamespacedName]*exportInfo { return ch.exports }, nil))}
	if c.opts.MCS.Host {
		imports := v1.ServiceImports("")
		out = append(out, newInformer(serviceImportsInformer, listWatch(client, imports.List, imports.Watch, c.relists(serviceImportsInformer)),
			&mcsv1alpha1.ServiceImport{}, resync, stripServiceImport,
			handle(c, func(ch *changes) map[types.NamespacedName]*importInfo { return ch.imports }, nil)))
	}
	return out
}

// mcsRunner looks for the MCS API until the cluster serves it, then
// starts its informers, which run until ctx is done. It runs on Run's
// goroutine.
type mcsRunner struct {
	c     *Controller
	ctx   context.Context
	waits []func()
}

// look looks for the MCS API once and starts its informers if it is
// served; it reports whether to look again.
func (r *mcsRunner) look() (again bool) {
	infs, retry := r.c.startMCS(false)
	if len(infs) > 0 {
		r.c.informers = append(r.c.informers, infs...)
		r.waits = append(r.waits, runInformers(r.ctx, infs, r.c.wake))
	}
	return retry
}

// wait waits for the informers' goroutines, once ctx is done.
func (r *mcsRunner) wait() {
	for _, w := range r.waits {
		w()
	}
}

// stripServiceExport and stripServiceImport turn the MCS objects into the
// controller's lean forms.
func stripServiceExport(obj any) (any, error) {
	if se, ok := obj.(*mcsv1alpha1.ServiceExport); ok {
		return convertServiceExport(se), nil
	}
	return obj, nil
}

func stripServiceImport(obj any) (any, error) {
	if si, ok := obj.(*mcsv1alpha1.ServiceImport); ok {
		return convertServiceImport(si), nil
	}
	return obj, nil
}

// onExport: the Service of the export's name, whose endpoints' (and
// ClusterSet service's) discoverability follows it.
func (c *Controller) onExport(key types.NamespacedName, e *exportInfo) {
	if e == nil {
		if _, ok := c.cl.exports[key]; !ok {
			return
		}
		delete(c.cl.exports, key)
	} else {
		c.cl.exports[key] = e
	}
	c.markService(key)
}

// onImport: the ClusterSet service of the import's name, which the
// Service's flush converts (see writeClusterSet).
func (c *Controller) onImport(key types.NamespacedName, i *importInfo) {
	if i == nil {
		if _, ok := c.cl.imports[key]; !ok {
			return
		}
		delete(c.cl.imports, key)
	} else {
		c.cl.imports[key] = i
	}
	c.markService(key)
}

// discoverability returns the discoverability of the endpoints of the
// Service of that key under its cluster.local host (clusterSet false) or
// its clusterset.local one.
func (c *Controller) discoverability(key types.NamespacedName, clusterSet bool) model.Discoverability {
	_, exported := c.cl.exports[key]
	return endpointDiscoverability(c.opts.MCS, clusterSet, exported)
}

// mcsOnlyKeys returns keys with the keys of the ServiceExports and
// ServiceImports of no Service or slice of the cluster added, each once,
// for the initial conversion: their diagnostics, and the ClusterSet
// services of the imports.
func (c *Controller) mcsOnlyKeys(keys []types.NamespacedName) []types.NamespacedName {
	only := func(key types.NamespacedName) bool {
		_, svc := c.cl.services[key]
		_, slices := c.cl.slices[key]
		return !svc && !slices
	}
	for key := range c.cl.exports {
		if only(key) {
			keys = append(keys, key)
		}
	}
	for key := range c.cl.imports {
		if _, exported := c.cl.exports[key]; only(key) && !exported {
			keys = append(keys, key)
		}
	}
	return keys
}
