package main

// Istio's ambient index, built the way istiod builds it
// (pilot/pkg/bootstrap/server.go and servicecontroller.go,
// initServiceControllers: the multicluster controller over the config
// cluster's client with the discovery-namespaces filter, then ambient.New),
// over Istio's fake Kubernetes client. Same wiring as hack/ambient-oracle,
// for one cluster.

import (
	"fmt"
	"os"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"

	"istio.io/istio/pilot/pkg/features"
	"istio.io/istio/pilot/pkg/model"
	"istio.io/istio/pilot/pkg/serviceregistry/ambient"
	"istio.io/istio/pkg/activenotifier"
	"istio.io/istio/pkg/cluster"
	"istio.io/istio/pkg/config/mesh"
	"istio.io/istio/pkg/config/mesh/meshwatcher"
	"istio.io/istio/pkg/config/schema/gvr"
	kubelib "istio.io/istio/pkg/kube"
	"istio.io/istio/pkg/kube/kclient"
	"istio.io/istio/pkg/kube/kclient/clienttest"
	"istio.io/istio/pkg/kube/krt"
	"istio.io/istio/pkg/kube/multicluster"
	"istio.io/istio/pkg/kube/namespace"
)

const (
	systemNamespace = "istio-system"
	clusterID       = "Kubernetes" // istiod's default CLUSTER_ID
	domainSuffix    = "cluster.local"
)

// installedCRDs: the CRDs the ambient index watches through delayed
// informers (the list Istio's ambient index tests install on their fake
// clients).
var installedCRDs = []schema.GroupVersionResource{
	gvr.AuthorizationPolicy,
	gvr.PeerAuthentication,
	gvr.KubernetesGateway,
	gvr.GatewayClass,
	gvr.WorkloadEntry,
	gvr.ServiceEntry,
}

// newFakeClient is the fake API server: Istio's fake client with the CRDs
// installed.
func newFakeClient() kubelib.Client {
	c := kubelib.NewFakeClient()
	for _, crd := range installedCRDs {
		clienttest.MakeCRD(crdFailer{}, c, crd)
	}
	return c
}

// istiod is the part of istiod under measurement: the multicluster
// controller (whose config-cluster collections own the Pod, Service,
// EndpointSlice, Namespace, Node and Gateway informers) and the ambient
// index over it.
type istiod struct {
	stop   chan struct{}
	client kubelib.Client // the config cluster's client, with the discovery-namespaces filter
	mcc    *multicluster.Controller
	index  ambient.Index
	xds    *observer

	meshWatcher meshwatcher.TestWatcher
}

// newIstiod builds the multicluster controller over raw (the informers are
// registered, not started). The ambient index is built by buildIndex.
func newIstiod(raw kubelib.Client) *istiod {
	s := &istiod{stop: make(chan struct{})}
	mc := mesh.DefaultMeshConfig()
	mc.RootNamespace = systemNamespace
	meshWatcher := meshwatcher.NewTestWatcher(mc)

	// server.go: the config cluster's client gets the discovery-namespaces filter.
	f := namespace.NewDiscoveryNamespacesFilter(kclient.New[*corev1.Namespace](raw), meshWatcher, s.stop)
	s.client = kubelib.SetObjectFilter(raw, f)

	// server.go: s.multiclusterController (no remote clusters here).
	s.mcc = multicluster.NewController(multicluster.ControllerOptions{
		Client:          s.client,
		ClusterID:       clusterID,
		SystemNamespace: systemNamespace,
		MeshConfig:      meshWatcher,
		ClientBuilder: func(_ []byte, id cluster.ID, _ ...func(*rest.Config)) (kubelib.Client, error) {
			return nil, fmt.Errorf("no remote cluster %s", id)
		},
		Debugger: krt.GlobalDebugHandler,
	})
	s.xds = newObserver(model.NewEndpointIndexUpdater(model.NewEndpointIndex(model.DisabledCache{})))
	s.meshWatcher = meshWatcher
	return s
}

// buildIndex is servicecontroller.go's initServiceControllers with
// features.EnableAmbient: ambient.New with istiod's options.
func (s *istiod) buildIndex() {
	s.index = ambient.New(ambient.Options{
		SystemNamespace: systemNamespace,
		DomainSuffix:    domainSuffix,
		ClusterID:       clusterID,
		Revision:        "",
		XDSUpdater:      s.xds,
		MeshConfig:      s.meshWatcher,
		// istiod's StatusWritingEnabled follows leader election; not leader
		// here, so the status queue is built but writes nothing.
		StatusNotifier:         activenotifier.New(false),
		Debugger:               krt.GlobalDebugHandler,
		MultiClusterController: s.mcc,
		Flags: ambient.FeatureFlags{
			DefaultAllowFromWaypoint:              features.DefaultAllowFromWaypoint,
			EnableK8SServiceSelectWorkloadEntries: features.EnableK8SServiceSelectWorkloadEntries,
		},
	})
}

// runInformers starts the multicluster controller and every informer
// registered so far, and waits until the informers have synced (what
// istiod's server start does: kubeClient.RunAndWait).
func (s *istiod) runInformers() error {
	if err := s.mcc.Run(s.stop); err != nil {
		return err
	}
	s.client.RunAndWait(s.stop)
	return nil
}

// runIndex starts the ambient index (and the informers it registered).
func (s *istiod) runIndex() {
	go s.index.Run(s.stop)
	s.client.RunAndWait(s.stop)
}

func (s *istiod) synced() bool {
	return s.mcc.HasSynced() && (s.index == nil || s.index.HasSynced())
}

// counts returns the workloads and services the index holds.
func (s *istiod) counts() (workloads, services int) {
	for _, a := range s.index.All() {
		switch {
		case a.GetWorkload() != nil:
			workloads++
		case a.GetService() != nil:
			services++
		}
	}
	return workloads, services
}

// waitFor polls cond every interval until it holds or timeout passes.
func waitFor(what string, timeout, interval time.Duration, cond func() bool) error {
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			return fmt.Errorf("timed out after %v waiting for %s", timeout, what)
		}
		time.Sleep(interval)
	}
	return nil
}

// crdFailer lets us use Istio's clienttest.MakeCRD outside a test.
type crdFailer struct{}

func (crdFailer) Fail()                     { panic("MakeCRD failed") }
func (crdFailer) FailNow()                  { panic("MakeCRD failed") }
func (crdFailer) Fatal(args ...any)         { panic(fmt.Sprint(args...)) }
func (crdFailer) Fatalf(f string, a ...any) { panic(fmt.Sprintf(f, a...)) }
func (crdFailer) Log(...any)                {}
func (crdFailer) Logf(string, ...any)       {}
func (crdFailer) TempDir() string           { return os.TempDir() }
func (crdFailer) Helper()                   {}
func (crdFailer) Cleanup(func())            {}
func (crdFailer) Skip(...any)               {}
