package main

// Istio's xDS server as Istio's own test harness builds it
// (istio.io/istio/pilot/test/xds.NewFakeDiscoveryServer), over a fake
// Kubernetes API preloaded with the world, serving on a real TCP listener.

import (
	"context"
	"fmt"
	"net"
	"os"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"

	"istio.io/istio/pilot/pkg/model"
	fakexds "istio.io/istio/pilot/test/xds"
	"istio.io/istio/pkg/config/constants"
	"istio.io/istio/pkg/config/mesh"
)

// Istio's defaults for the world: cluster ID, DNS domain suffix (fixed in the
// harness), trust domain and root namespace.
const (
	clusterID     = constants.DefaultClusterName // "Kubernetes"
	trustDomain   = "cluster.local"
	rootNamespace = "istio-system"
)

// debounceAfter is istiod's default PILOT_DEBOUNCE_AFTER (the harness
// defaults to 0 to speed up tests). The maximum, PILOT_DEBOUNCE_MAX, is set
// to istiod's default 10s in main.
const debounceAfter = 100 * time.Millisecond

// failer implements Istio's test.Failer (what *testing.T provides in Istio's
// tests) so that NewFakeDiscoveryServer can run outside `go test`: a failure
// prints and exits; cleanups are recorded and never run, since the server
// lives until the process exits.
type failer struct {
	mu       sync.Mutex
	cleanups []func()
	verbose  bool
}

func (f *failer) Fail()    { fatal(fmt.Errorf("Istio's test harness failed")) }
func (f *failer) FailNow() { fatal(fmt.Errorf("Istio's test harness failed")) }
func (f *failer) Fatal(args ...any) {
	fatal(fmt.Errorf("Istio's test harness: %s", fmt.Sprint(args...)))
}
func (f *failer) Fatalf(s string, a ...any) { fatal(fmt.Errorf("Istio's test harness: "+s, a...)) }
func (f *failer) Skip(args ...any) {
	fatal(fmt.Errorf("Istio's test harness skipped: %s", fmt.Sprint(args...)))
}
func (f *failer) Helper()         {}
func (f *failer) TempDir() string { return os.TempDir() }

func (f *failer) Log(args ...any) {
	if f.verbose {
		fmt.Fprintln(os.Stderr, args...)
	}
}

func (f *failer) Logf(s string, a ...any) {
	if f.verbose {
		fmt.Fprintf(os.Stderr, s+"\n", a...)
	}
}

func (f *failer) Cleanup(fn func()) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.cleanups = append(f.cleanups, fn)
}

// istio is a running Istio xDS server over a fake Kubernetes API.
type istio struct {
	fake *fakexds.FakeDiscoveryServer
	// kube is the fake API the harness's Kubernetes registry, its ambient
	// index and its other controllers watch.
	kube kubernetes.Interface
}

// startIstio builds Istio's DiscoveryServer over a fake Kubernetes API
// holding objs, serving ADS (SotW and delta; CDS, EDS, ..., WDS) on lis, and
// returns once Istio's registries have synced and a push has been committed
// (NewFakeDiscoveryServer waits for both) and the server is quiet.
func startIstio(t *failer, objs []runtime.Object, lis net.Listener) (*istio, error) {
	mc := mesh.DefaultMeshConfig()
	mc.TrustDomain = trustDomain
	mc.RootNamespace = rootNamespace

	// The harness creates the DiscoveryServer, the Environment (aggregate
	// registry with one Kubernetes registry for the default cluster over a fake
	// client preloaded with KubernetesObjects, a ServiceEntry registry, config
	// store, endpoint index), istiod's generators (bootstrap.InitGenerators),
	// the ambient index (since features.EnableAmbient), and a gRPC server (no
	// credentials, no options) on the listener; it starts them, waits for them
	// to sync, pushes once and marks the server ready (CachesSynced).
	fake := fakexds.NewFakeDiscoveryServer(t, fakexds.FakeOptions{
		DefaultClusterName: clusterID,
		KubernetesObjects:  objs,
		MeshConfig:         mc,
		ListenerBuilder:    func() (net.Listener, error) { return lis, nil },
		DebounceTime:       debounceAfter,
	})
	if fake.AmbientIndex == nil {
		return nil, fmt.Errorf("Istio's harness built no ambient index (PILOT_ENABLE_AMBIENT is not on): WDS would not be served")
	}
	is := &istio{fake: fake, kube: fake.KubeClient().Kube()}
	if err := is.settle(500*time.Millisecond, 5*time.Minute); err != nil {
		return nil, err
	}
	return is, nil
}

// settle waits until the DiscoveryServer committed every update it received
// and nothing changed for `quiet`; then it asks for a forced full push (as the
// harness does at start), so that a fresh PushContext is built from the
// settled registries, and waits until it is committed.
func (is *istio) settle(quiet, timeout time.Duration) error {
	ds := is.fake.Discovery
	deadline := time.Now().Add(timeout)
	state := func() [3]int64 {
		return [3]int64{ds.InboundUpdates.Load(), ds.CommittedUpdates.Load(), int64(len(is.fake.Discovery.Env.Services()))}
	}
	last, since := state(), time.Now()
	for {
		time.Sleep(10 * time.Millisecond)
		cur := state()
		if cur != last || cur[0] != cur[1] || !is.fake.AmbientIndex.HasSynced() {
			last, since = cur, time.Now()
		} else if time.Since(since) >= quiet {
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("Istio did not settle within %v", timeout)
		}
	}
	ds.ConfigUpdate(&model.PushRequest{Forced: true, Reason: model.NewReasonStats(model.GlobalUpdate)})
	want := ds.InboundUpdates.Load()
	for ds.CommittedUpdates.Load() < want {
		if time.Now().After(deadline) {
			return fmt.Errorf("Istio's push was not committed within %v", timeout)
		}
		time.Sleep(time.Millisecond)
	}
	return nil
}

// apply creates each object, or updates it if it exists, through the fake
// Kubernetes client Istio's informers watch. It returns once the writes are
// accepted; Istio's informers, registries and pushes follow asynchronously.
func (is *istio) apply(ctx context.Context, objs []runtime.Object) error {
	for i, obj := range objs {
		var err error
		switch o := obj.(type) {
		case *corev1.Namespace:
			err = upsert(ctx, is.kube.CoreV1().Namespaces(), o)
		case *corev1.Service:
			err = upsert(ctx, is.kube.CoreV1().Services(o.Namespace), o)
		case *corev1.Pod:
			err = upsert(ctx, is.kube.CoreV1().Pods(o.Namespace), o)
		case *discoveryv1.EndpointSlice:
			err = upsert(ctx, is.kube.DiscoveryV1().EndpointSlices(o.Namespace), o)
		default:
			err = fmt.Errorf("unsupported object %T", obj)
		}
		if err != nil {
			applied := ""
			if i > 0 {
				applied = fmt.Sprintf(" (the %d objects before it were applied)", i)
			}
			return fmt.Errorf("%s: %v%s", describe(obj), err, applied)
		}
	}
	return nil
}

// typedClient is the part of a client-go typed resource client upsert uses.
type typedClient[T any] interface {
	Create(ctx context.Context, obj T, opts metav1.CreateOptions) (T, error)
	Update(ctx context.Context, obj T, opts metav1.UpdateOptions) (T, error)
}

// upsert updates obj, or creates it if it does not exist. The fake client
// does not check resourceVersion, so obj need not carry one.
func upsert[T any](ctx context.Context, c typedClient[T], obj T) error {
	_, err := c.Update(ctx, obj, metav1.UpdateOptions{})
	if apierrors.IsNotFound(err) {
		_, err = c.Create(ctx, obj, metav1.CreateOptions{})
	}
	return err
}
