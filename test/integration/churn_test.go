//go:build integration

package integration

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	networkingapi "istio.io/api/networking/v1alpha3"
	networkingv1 "istio.io/client-go/pkg/apis/networking/v1"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/informers"
	corelisters "k8s.io/client-go/listers/core/v1"
)

// faultNS is the namespace of the fault tests' workload, in both
// clusters.
const faultNS = "faults"

// churners is the number of goroutines per cluster that make random
// changes, each one after another.
const churners = 4

// workload is the churning workload of one cluster: Deployments whose
// pods the test schedules and runs (it plays the scheduler and the
// kubelet: it binds each pod to a node, writes its IP and readiness, and
// ends its graceful deletion), the Services that select them, and, in
// the config cluster, a manually managed EndpointSlice, a ServiceEntry,
// and WorkloadEntries; the remote cluster has WorkloadEntries of its
// own. Every write goes straight to the API server, never through a
// fault proxy: the faults are between the servers and the registry.
type workload struct {
	c      *faultCluster
	config bool     // the config cluster: ServiceEntries and the manual slice
	apps   []string // Deployments, each with its Service
	ipBase string   // the pods' IPs are ipBase.x.y
	nextIP atomic.Int64

	pods corelisters.PodLister
	stop context.CancelFunc
	done sync.WaitGroup

	writes, failed atomic.Int64
}

func newWorkload(t *testing.T, c *faultCluster, config bool, ipBase string, apps ...string) *workload {
	t.Helper()
	w := &workload{c: c, config: config, apps: apps, ipBase: ipBase}
	ctx := t.Context()
	k := c.admin
	_, err := k.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: faultNS}}, metav1.CreateOptions{})
	must(t, err)
	for i, zone := range []string{"zone-a", "zone-b", "zone-c"} {
		_, err := k.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("node-%d", i), Labels: map[string]string{
			"topology.kubernetes.io/region": "region-" + c.name, "topology.kubernetes.io/zone": zone,
		}}}, metav1.CreateOptions{})
		must(t, err)
	}
	for _, app := range apps {
		_, err := k.AppsV1().Deployments(faultNS).Create(ctx, deployment(app, 3), metav1.CreateOptions{})
		must(t, err)
		_, err = k.CoreV1().Services(faultNS).Create(ctx, service(app, map[string]string{"app": app}), metav1.CreateOptions{})
		must(t, err)
	}
	// A WorkloadEntry per cluster that the cluster's Service "web"
	// selects, and VMs that the config cluster's ServiceEntry selects.
	for i := range 3 {
		_, err := c.istio.NetworkingV1().WorkloadEntries(faultNS).Create(ctx, workloadEntry(fmt.Sprintf("vm-%d", i), "vm", w.vmIP(i, 0)), metav1.CreateOptions{})
		must(t, err)
	}
	_, err = c.istio.NetworkingV1().WorkloadEntries(faultNS).Create(ctx, workloadEntry("web-vm", "web", w.vmIP(9, 0)), metav1.CreateOptions{})
	must(t, err)
	if config {
		_, err = k.CoreV1().Services(faultNS).Create(ctx, service("manual", nil), metav1.CreateOptions{})
		must(t, err)
		_, err = k.DiscoveryV1().EndpointSlices(faultNS).Create(ctx, w.manualSlice(nil, 3), metav1.CreateOptions{})
		must(t, err)
		_, err = c.istio.NetworkingV1().ServiceEntries(faultNS).Create(ctx, &networkingv1.ServiceEntry{
			ObjectMeta: metav1.ObjectMeta{Name: "vms", Namespace: faultNS},
			Spec: networkingapi.ServiceEntry{
				Hosts: []string{"vms.faults.internal"}, Addresses: []string{"240.0.30.1"},
				Resolution:       networkingapi.ServiceEntry_STATIC,
				Ports:            []*networkingapi.ServicePort{{Name: "http", Number: 80, Protocol: "HTTP", TargetPort: 8080}},
				WorkloadSelector: &networkingapi.WorkloadSelector{Labels: map[string]string{"app": "vm"}},
			},
		}, metav1.CreateOptions{})
		must(t, err)
	}
	return w
}

func deployment(app string, replicas int32) *appsv1.Deployment {
	labels := map[string]string{"app": app}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: app, Namespace: faultNS},
		Spec: appsv1.DeploymentSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{
					Name: "app", Image: "app", Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 8080}},
				}}},
			},
		},
	}
}

func service(name string, selector map[string]string) *corev1.Service {
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: faultNS},
		Spec: corev1.ServiceSpec{Selector: selector, Ports: []corev1.ServicePort{
			{Name: "http", Port: 80, TargetPort: intstr.FromInt32(8080)},
		}},
	}
}

func workloadEntry(name, app, ip string) *networkingv1.WorkloadEntry {
	return &networkingv1.WorkloadEntry{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: faultNS},
		Spec:       networkingapi.WorkloadEntry{Address: ip, Labels: map[string]string{"app": app}},
	}
}

// vmIP is a WorkloadEntry's address: VMs are ipBase.200+i.gen.
func (w *workload) vmIP(i, gen int) string {
	return fmt.Sprintf("%s.%d.%d", w.ipBase, 200+i, gen%250+1)
}

// manualSlice is the manual slice with n endpoints from a random offset.
func (w *workload) manualSlice(cur *discoveryv1.EndpointSlice, n int) *discoveryv1.EndpointSlice {
	s := cur
	if s == nil {
		s = &discoveryv1.EndpointSlice{
			ObjectMeta: metav1.ObjectMeta{Name: "manual-1", Namespace: faultNS, Labels: map[string]string{
				discoveryv1.LabelServiceName: "manual", discoveryv1.LabelManagedBy: "meshreg-fault-test",
			}},
			AddressType: discoveryv1.AddressTypeIPv4,
			Ports:       []discoveryv1.EndpointPort{{Name: ptrTo("http"), Port: ptrTo(int32(8080))}},
		}
	}
	s.Endpoints = nil
	off := rand.IntN(100)
	for i := range n {
		s.Endpoints = append(s.Endpoints, discoveryv1.Endpoint{
			Addresses:  []string{fmt.Sprintf("%s.250.%d", w.ipBase, off+i+1)},
			Conditions: discoveryv1.EndpointConditions{Ready: ptrTo(rand.IntN(4) > 0)},
		})
	}
	return s
}

func ptrTo[T any](v T) *T { return &v }

// run starts the kubelet's loop, and with churn the random changes, until
// quiesce.
func (w *workload) run(churn bool) {
	ctx, cancel := context.WithCancel(context.Background())
	w.stop = cancel
	f := informers.NewSharedInformerFactoryWithOptions(w.c.admin, 0, informers.WithNamespace(faultNS))
	inf := f.Core().V1().Pods()
	w.pods = inf.Lister()
	inf.Informer()
	f.Start(ctx.Done())
	f.WaitForCacheSync(ctx.Done())
	w.done.Add(1)
	go func() {
		defer w.done.Done()
		defer f.Shutdown()
		tick := time.NewTicker(50 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
				w.kubelet(ctx)
			}
		}
	}()
	if churn {
		for range churners {
			w.done.Add(1)
			go func() {
				defer w.done.Done()
				for ctx.Err() == nil {
					w.change(ctx)
				}
			}()
		}
	}
}

// halt stops the loops.
func (w *workload) halt() {
	if w.stop != nil {
		w.stop()
		w.done.Wait()
		w.stop = nil
	}
}

func (w *workload) count(err error) {
	w.writes.Add(1)
	if err != nil {
		w.failed.Add(1)
	}
}

// kubelet does what the scheduler and a kubelet would for every pod
// that needs it: binds it, runs it (an IP, Ready), or ends its deletion.
func (w *workload) kubelet(ctx context.Context) {
	pods, err := w.pods.List(labels.Everything())
	if err != nil {
		return
	}
	k := w.c.admin.CoreV1().Pods(faultNS)
	for _, p := range pods {
		if ctx.Err() != nil {
			return
		}
		switch {
		case p.DeletionTimestamp != nil:
			zero := int64(0)
			err := k.Delete(ctx, p.Name, metav1.DeleteOptions{GracePeriodSeconds: &zero, Preconditions: &metav1.Preconditions{UID: &p.UID}})
			if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
				err = nil
			}
			w.count(err)
		case p.Spec.NodeName == "":
			node := fmt.Sprintf("node-%d", rand.IntN(3))
			err := k.Bind(ctx, &corev1.Binding{
				ObjectMeta: metav1.ObjectMeta{Name: p.Name, Namespace: faultNS, UID: p.UID},
				Target:     corev1.ObjectReference{Kind: "Node", Name: node},
			}, metav1.CreateOptions{})
			if apierrors.IsConflict(err) || apierrors.IsNotFound(err) {
				err = nil
			}
			w.count(err)
		case p.Status.PodIP == "":
			n := w.nextIP.Add(1)
			ip := fmt.Sprintf("%s.%d.%d", w.ipBase, (n/250)%200, n%250+1)
			q := p.DeepCopy()
			q.Status = corev1.PodStatus{
				Phase: corev1.PodRunning, PodIP: ip, PodIPs: []corev1.PodIP{{IP: ip}},
				Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}},
			}
			_, err := k.UpdateStatus(ctx, q, metav1.UpdateOptions{})
			if apierrors.IsConflict(err) || apierrors.IsNotFound(err) {
				err = nil
			}
			w.count(err)
		}
	}
}

// change makes one random change.
func (w *workload) change(ctx context.Context) {
	k := w.c.admin
	app := w.apps[rand.IntN(len(w.apps))]
	var err error
	switch op := rand.IntN(10); {
	case op < 2: // scale a Deployment
		var s *autoscalingv1.Scale
		s, err = k.AppsV1().Deployments(faultNS).GetScale(ctx, app, metav1.GetOptions{})
		if err == nil {
			s.Spec.Replicas = int32(1 + rand.IntN(6))
			_, err = k.AppsV1().Deployments(faultNS).UpdateScale(ctx, app, s, metav1.UpdateOptions{})
		}
	case op < 5: // a pod's readiness flips
		err = w.flipReadiness(ctx)
	case op < 6: // a pod dies; its ReplicaSet replaces it
		if p := w.randomPod(); p != nil {
			zero := int64(0)
			err = k.CoreV1().Pods(faultNS).Delete(ctx, p.Name, metav1.DeleteOptions{GracePeriodSeconds: &zero})
		}
	case op < 8: // a VM moves
		name := []string{"vm-0", "vm-1", "vm-2", "web-vm"}[rand.IntN(4)]
		var we *networkingv1.WorkloadEntry
		we, err = w.c.istio.NetworkingV1().WorkloadEntries(faultNS).Get(ctx, name, metav1.GetOptions{})
		if err == nil {
			we.Spec.Address = w.vmIP(rand.IntN(3), rand.IntN(250))
			if name == "web-vm" {
				we.Spec.Address = w.vmIP(9, rand.IntN(250))
			}
			_, err = w.c.istio.NetworkingV1().WorkloadEntries(faultNS).Update(ctx, we, metav1.UpdateOptions{})
		}
	case op < 9 && w.config: // the manual slice changes
		var s *discoveryv1.EndpointSlice
		s, err = k.DiscoveryV1().EndpointSlices(faultNS).Get(ctx, "manual-1", metav1.GetOptions{})
		if err == nil {
			_, err = k.DiscoveryV1().EndpointSlices(faultNS).Update(ctx, w.manualSlice(s, 1+rand.IntN(4)), metav1.UpdateOptions{})
		}
	default: // a Service comes or goes
		name := fmt.Sprintf("extra-%d", rand.IntN(3))
		err = k.CoreV1().Services(faultNS).Delete(ctx, name, metav1.DeleteOptions{})
		if apierrors.IsNotFound(err) {
			_, err = k.CoreV1().Services(faultNS).Create(ctx, service(name, map[string]string{"app": app}), metav1.CreateOptions{})
		}
	}
	if apierrors.IsConflict(err) || apierrors.IsNotFound(err) || apierrors.IsAlreadyExists(err) {
		err = nil
	}
	w.count(err)
	if err != nil {
		// The server is down or cut off: do not spin.
		time.Sleep(100 * time.Millisecond)
	}
}

func (w *workload) randomPod() *corev1.Pod {
	pods, _ := w.pods.List(labels.Everything())
	pods = slices.DeleteFunc(pods, func(p *corev1.Pod) bool { return p.Status.PodIP == "" || p.DeletionTimestamp != nil })
	if len(pods) == 0 {
		return nil
	}
	return pods[rand.IntN(len(pods))]
}

func (w *workload) flipReadiness(ctx context.Context) error {
	p := w.randomPod()
	if p == nil {
		return nil
	}
	q := p.DeepCopy()
	for i, c := range q.Status.Conditions {
		if c.Type == corev1.PodReady {
			q.Status.Conditions[i].Status = map[corev1.ConditionStatus]corev1.ConditionStatus{
				corev1.ConditionTrue: corev1.ConditionFalse, corev1.ConditionFalse: corev1.ConditionTrue,
			}[c.Status]
		}
	}
	_, err := w.c.admin.CoreV1().Pods(faultNS).UpdateStatus(ctx, q, metav1.UpdateOptions{})
	return err
}

// nudge touches every Service (an annotation), so that the EndpointSlice
// controller syncs each now. After failed syncs (a server restarted, its
// informer cache behind its writes) it retries a Service with a backoff
// that doubles up to 1000 s, and a Service the churn no longer touches
// can wait that long for its slices: Kubernetes' lag, not the
// registry's, which the tests are not after.
func (w *workload) nudge(ctx context.Context) error {
	svcs, err := w.c.admin.CoreV1().Services(faultNS).List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	patch := []byte(fmt.Sprintf(`{"metadata":{"annotations":{"meshreg.io/nudge":"%d"}}}`, time.Now().UnixNano()))
	for _, s := range svcs.Items {
		_, err := w.c.admin.CoreV1().Services(faultNS).Patch(ctx, s.Name, types.MergePatchType, patch, metav1.PatchOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			return err
		}
	}
	return nil
}

// quiet reports whether the kubelet has nothing left to do: every pod
// bound and running, no deletion pending. The informer's cache may lag
// the server; the callers wait for the registry to agree with a fresh
// one besides.
func (w *workload) quiet() (bool, string) {
	pods, err := w.pods.List(labels.Everything())
	if err != nil {
		return false, err.Error()
	}
	var pending []string
	for _, p := range pods {
		if p.DeletionTimestamp != nil || p.Spec.NodeName == "" || p.Status.PodIP == "" {
			pending = append(pending, p.Name)
		}
	}
	return len(pending) == 0, fmt.Sprintf("%s: pods pending: %s", w.c.name, strings.Join(pending, ","))
}
