package main

// Builds Istio's ambient index the way istiod does (pilot/pkg/bootstrap/server.go and
// servicecontroller.go, initServiceControllers: ambient.New with the multicluster
// controller), over fake Kubernetes clients, and feeds it the manifests.

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"reflect"
	"sort"
	"time"

	"google.golang.org/protobuf/proto"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	meshconfig "istio.io/api/mesh/v1alpha1"
	networkingclient "istio.io/client-go/pkg/apis/networking/v1"
	"istio.io/istio/pilot/pkg/config/kube/gatewaycommon"
	"istio.io/istio/pilot/pkg/features"
	"istio.io/istio/pilot/pkg/model"
	"istio.io/istio/pilot/pkg/serviceregistry/ambient"
	"istio.io/istio/pkg/activenotifier"
	"istio.io/istio/pkg/cluster"
	"istio.io/istio/pkg/config/mesh/meshwatcher"
	"istio.io/istio/pkg/config/schema/gvr"
	kubelib "istio.io/istio/pkg/kube"
	"istio.io/istio/pkg/kube/kclient"
	"istio.io/istio/pkg/kube/kclient/clienttest"
	"istio.io/istio/pkg/kube/krt"
	"istio.io/istio/pkg/kube/multicluster"
	"istio.io/istio/pkg/kube/namespace"
	"istio.io/istio/pkg/util/sets"
)

const systemNamespace = "istio-system"

// installedCRDs: the CRDs the ambient index watches through delayed informers (the same list
// Istio's ambient index tests install on their fake clients).
var installedCRDs = []schema.GroupVersionResource{
	gvr.AuthorizationPolicy,
	gvr.PeerAuthentication,
	gvr.KubernetesGateway,
	gvr.GatewayClass,
	gvr.WorkloadEntry,
	gvr.ServiceEntry,
}

func newFakeCluster() kubelib.Client {
	c := kubelib.NewFakeClient()
	for _, crd := range installedCRDs {
		clienttest.MakeCRD(crdFailer{}, c, crd)
	}
	return c
}

type kubeCluster struct {
	id     string
	client kubelib.Client
	input  *clusterInput
}

type world struct {
	stop     chan struct{}
	act      *activity
	mesh     *meshconfig.MeshConfig
	clusters []*kubeCluster // [0] is the config cluster
	mcc      *multicluster.Controller
	index    ambient.Index
	validate bool
}

func newWorld(inputs []*clusterInput, domainSuffix string, mc *meshconfig.MeshConfig, validate bool) *world {
	w := &world{stop: make(chan struct{}), act: &activity{}, mesh: mc, validate: validate}
	meshWatcher := meshwatcher.NewTestWatcher(mc)

	for _, in := range inputs {
		w.clusters = append(w.clusters, &kubeCluster{id: in.ID, client: newFakeCluster(), input: in})
	}
	configCluster := w.clusters[0]
	configClusterID := cluster.ID(configCluster.id)

	// server.go: the config cluster's client gets the discovery-namespaces filter. Remote clients
	// get theirs in multicluster.Cluster.Run.
	f := namespace.NewDiscoveryNamespacesFilter(kclient.New[*corev1.Namespace](configCluster.client), meshWatcher, w.stop)
	configCluster.client = kubelib.SetObjectFilter(configCluster.client, f)

	// server.go: s.multiclusterController. Remote clusters are registered by remote secrets in the
	// system namespace; ClientBuilder hands out our fake client for the secret's cluster ID
	// (what DefaultBuildClientsFromConfig does with a real kubeconfig).
	remotes := map[cluster.ID]kubelib.Client{}
	for _, kc := range w.clusters[1:] {
		remotes[cluster.ID(kc.id)] = kc.client
	}
	w.mcc = multicluster.NewController(multicluster.ControllerOptions{
		Client:          configCluster.client,
		ClusterID:       configClusterID,
		SystemNamespace: systemNamespace,
		MeshConfig:      meshWatcher,
		ClientBuilder: func(_ []byte, id cluster.ID, _ ...func(*rest.Config)) (kubelib.Client, error) {
			c, ok := remotes[id]
			if !ok {
				return nil, fmt.Errorf("no input for cluster %s", id)
			}
			return c, nil
		},
		Debugger: krt.GlobalDebugHandler,
	})

	xds := &countingUpdater{inner: model.NewEndpointIndexUpdater(model.NewEndpointIndex(model.DisabledCache{})), act: w.act}
	// servicecontroller.go initServiceControllers (features.EnableAmbient).
	w.index = ambient.New(ambient.Options{
		SystemNamespace: systemNamespace,
		DomainSuffix:    domainSuffix,
		ClusterID:       configClusterID,
		Revision:        "",
		XDSUpdater:      xds,
		MeshConfig:      meshWatcher,
		// istiod's StatusWritingEnabled follows leader election; we are never leader, so the
		// status queue (AMBIENT_ENABLE_STATUS) is built but writes nothing.
		StatusNotifier:         activenotifier.New(false),
		Debugger:               krt.GlobalDebugHandler,
		MultiClusterController: w.mcc,
		Flags: ambient.FeatureFlags{
			DefaultAllowFromWaypoint:              features.DefaultAllowFromWaypoint,
			EnableK8SServiceSelectWorkloadEntries: features.EnableK8SServiceSelectWorkloadEntries,
		},
	})
	return w
}

// start runs the multicluster controller, the index and the config cluster's informers,
// creates the default GatewayClasses and the remote-cluster secrets, and waits until
// everything (remote clusters included) has synced.
func (w *world) start(deadline time.Time) error {
	if err := w.mcc.Run(w.stop); err != nil {
		return err
	}
	go w.index.Run(w.stop)
	cc := w.clusters[0]
	cc.client.RunAndWait(w.stop)
	if err := w.waitFor(deadline, "the ambient index to sync", func() bool {
		return w.index.HasSynced() && w.mcc.HasSynced()
	}); err != nil {
		return err
	}
	if err := w.createDefaultGatewayClasses(); err != nil {
		return err
	}
	// One remote secret per extra cluster (istioctl create-remote-secret writes one per cluster).
	for _, kc := range w.clusters[1:] {
		sec := &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{
				Name:      "istio-remote-secret-" + kc.id,
				Namespace: systemNamespace,
				Labels:    map[string]string{multicluster.MultiClusterSecretLabel: "true"},
			},
			Data: map[string][]byte{kc.id: []byte("kubeconfig-for-" + kc.id)},
		}
		if _, err := cc.client.Kube().CoreV1().Secrets(systemNamespace).Create(context.Background(), sec, metav1.CreateOptions{}); err != nil {
			return err
		}
	}
	return w.waitFor(deadline, "remote clusters to sync", func() bool {
		for _, kc := range w.clusters[1:] {
			c := w.mcc.ClusterStore().GetByID(cluster.ID(kc.id))
			if c == nil || !c.HasSynced() {
				return false
			}
		}
		return w.index.HasSynced() && w.mcc.HasSynced()
	})
}

func (w *world) waitFor(deadline time.Time, what string, cond func() bool) error {
	for !cond() {
		if time.Now().After(deadline) {
			return fmt.Errorf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
	return nil
}

// createDefaultGatewayClasses does what istiod's gateway ClassController
// (pilot/pkg/config/kube/gatewaycommon/gatewayclass.go) does in the config cluster: create
// each built-in GatewayClass that does not exist. The class list is recomputed here, after
// the feature flags were set (Istio computes gatewaycommon.AllClasses at init).
func (w *world) createDefaultGatewayClasses() error {
	cc := w.clusters[0]
	given := sets.New[string]()
	for _, o := range cc.input.Objects {
		if o.Kind == KindGatewayClass {
			given.Insert(o.meta().GetName())
		}
	}
	infos := gatewaycommon.GetClassInfos()
	classes := gatewaycommon.GetAllClasses()
	names := make([]string, 0, len(classes))
	for n := range classes {
		names = append(names, string(n))
	}
	sort.Strings(names)
	for _, name := range names {
		if given.Contains(name) {
			continue
		}
		info, ok := infos[classes[gatewayv1.ObjectName(name)]]
		if !ok {
			continue
		}
		desc := info.Description
		gc := &gatewayv1.GatewayClass{
			ObjectMeta: metav1.ObjectMeta{Name: name, UID: objectUID(cc.id, KindGatewayClass, "", name)},
			Spec: gatewayv1.GatewayClassSpec{
				ControllerName: gatewayv1.GatewayController(info.Controller),
				Description:    &desc,
			},
		}
		if _, err := cc.client.GatewayAPI().GatewayV1().GatewayClasses().Create(context.Background(), gc, metav1.CreateOptions{}); err != nil {
			return err
		}
		verbosef("created default GatewayClass %s (controller %s)", name, info.Controller)
	}
	return nil
}

// apply creates every input object, kind by kind (createOrder), cluster by cluster.
func (w *world) apply() error {
	for _, kind := range createOrder {
		for ci, kc := range w.clusters {
			for _, o := range kc.input.Objects {
				if o.Kind != kind {
					continue
				}
				if err := w.create(ci, kc, o); err != nil {
					return fmt.Errorf("cluster %s, %s: %v", kc.id, o.Source, err)
				}
			}
		}
	}
	return nil
}

func (w *world) create(ci int, kc *kubeCluster, o inputObject) error {
	ctx := context.Background()
	m := o.meta()
	if m.GetUID() == "" {
		// The API server gives every object a UID.
		m.SetUID(objectUID(kc.id, o.Kind, m.GetNamespace(), m.GetName()))
	}
	if o.Istio != nil {
		if ci != 0 {
			warnf("cluster %s: %s %s/%s: Istio's ambient index reads ServiceEntries and WorkloadEntries only from the config cluster; created but ignored",
				kc.id, o.Kind, m.GetNamespace(), m.GetName())
		}
		if w.validate {
			// istiod's validating webhook rejects invalid Istio config (same schema validation).
			warn, err := o.Schema.ValidateConfig(*o.Istio)
			if err != nil {
				warnf("cluster %s: %s %s/%s rejected by Istio validation (not created): %v", kc.id, o.Kind, m.GetNamespace(), m.GetName(), err)
				return nil
			}
			if warn != nil {
				warnf("cluster %s: %s %s/%s: Istio validation warning: %v", kc.id, o.Kind, m.GetNamespace(), m.GetName(), warn)
			}
		}
	}
	c := kc.client
	var err error
	switch obj := o.Obj.(type) {
	case *corev1.Namespace:
		_, err = c.Kube().CoreV1().Namespaces().Create(ctx, obj, metav1.CreateOptions{})
	case *corev1.Node:
		_, err = c.Kube().CoreV1().Nodes().Create(ctx, obj, metav1.CreateOptions{})
	case *corev1.Service:
		_, err = c.Kube().CoreV1().Services(obj.Namespace).Create(ctx, obj, metav1.CreateOptions{})
	case *corev1.Pod:
		_, err = c.Kube().CoreV1().Pods(obj.Namespace).Create(ctx, obj, metav1.CreateOptions{})
	case *discoveryv1.EndpointSlice:
		_, err = c.Kube().DiscoveryV1().EndpointSlices(obj.Namespace).Create(ctx, obj, metav1.CreateOptions{})
	case *gatewayv1.GatewayClass:
		_, err = c.GatewayAPI().GatewayV1().GatewayClasses().Create(ctx, obj, metav1.CreateOptions{})
	case *gatewayv1.Gateway:
		cl := c.GatewayAPI().GatewayV1().Gateways(obj.Namespace)
		var got *gatewayv1.Gateway
		if got, err = cl.Create(ctx, obj, metav1.CreateOptions{}); err == nil && !reflect.DeepEqual(got.Status, obj.Status) {
			// A real API server drops the status on create; write it as a controller would.
			verbosef("Gateway %s/%s: status not kept by create, writing it with UpdateStatus", obj.Namespace, obj.Name)
			got.Status = obj.Status
			_, err = cl.UpdateStatus(ctx, got, metav1.UpdateOptions{})
		}
	case *networkingclient.ServiceEntry:
		cl := c.Istio().NetworkingV1().ServiceEntries(obj.Namespace)
		var got *networkingclient.ServiceEntry
		if got, err = cl.Create(ctx, obj, metav1.CreateOptions{}); err == nil && !proto.Equal(&got.Status, &obj.Status) {
			// status.addresses (auto-allocated VIPs) as written in the manifest
			verbosef("ServiceEntry %s/%s: status not kept by create, writing it with UpdateStatus", obj.Namespace, obj.Name)
			obj.Status.DeepCopyInto(&got.Status)
			_, err = cl.UpdateStatus(ctx, got, metav1.UpdateOptions{})
		}
	case *networkingclient.WorkloadEntry:
		_, err = c.Istio().NetworkingV1().WorkloadEntries(obj.Namespace).Create(ctx, obj, metav1.CreateOptions{})
	default:
		err = fmt.Errorf("unsupported object %T", obj)
	}
	return err
}

// objectUID is a stable UID for an input object that has none (UUID-shaped, from a hash of
// the cluster, kind, namespace and name).
func objectUID(clusterID, kind, ns, name string) types.UID {
	h := sha256.Sum256([]byte(clusterID + "/" + kind + "/" + ns + "/" + name))
	x := hex.EncodeToString(h[:16])
	return types.UID(x[0:8] + "-" + x[8:12] + "-" + x[12:16] + "-" + x[16:20] + "-" + x[20:32])
}

// settle waits until the index has synced, made no XDS call and rendered the same document
// for `quiet`, and returns that document.
func (w *world) settle(quiet time.Duration, deadline time.Time) ([]byte, error) {
	var last []byte
	lastAct := int64(-1)
	since := time.Now()
	for {
		synced := w.index.HasSynced() && w.mcc.HasSynced()
		act := w.act.load()
		doc, err := render(w.index)
		if err != nil {
			return nil, err
		}
		if !synced || act != lastAct || string(doc) != string(last) {
			last, lastAct, since = doc, act, time.Now()
		} else if time.Since(since) >= quiet {
			return doc, nil
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("the ambient index did not settle in time")
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (w *world) close() {
	close(w.stop)
}
