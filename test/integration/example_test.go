//go:build integration

package integration

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/meshreg/meshreg/kube"
	"github.com/meshreg/meshreg/model"
	"github.com/meshreg/meshreg/registry"
)

// Example runs a kube controller against the tier's kube-apiserver as a
// control plane runs one against its cluster: over a clientset made from
// the apiserver's rest.Config (env.kube), Run on a goroutine of its own,
// HasSynced before the registry is read. The Service's endpoints come
// from the EndpointSlice that Kubernetes' own EndpointSlice controller
// wrote for its two ready pods, with each pod's name and its node's zone.
func Example() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	const ns = "example"
	defer exampleCleanup(ns)
	if err := exampleObjects(ctx, ns); err != nil {
		fmt.Println(err)
		return
	}

	c, err := kube.New(env.kube, kube.Options{ClusterID: "example"})
	if err != nil {
		fmt.Println(err)
		return
	}
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- c.Run(runCtx) }()
	defer func() { stop(); <-done }()

	key := model.ServiceKey{Namespace: ns, Hostname: model.KubeServiceHostname("web", ns, "cluster.local")}
	healthy := func() bool {
		eps := c.Endpoints(key, registry.EndpointQuery{})
		for _, ep := range eps {
			if ep.Health != model.Healthy {
				return false
			}
		}
		return len(eps) == 2
	}
	for !c.HasSynced() || !healthy() {
		if ctx.Err() != nil {
			fmt.Println("timed out waiting for two healthy endpoints")
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	for _, ep := range c.Endpoints(key, registry.EndpointQuery{}) {
		fmt.Println(ep.ServicePortName, ep.Addresses[0], ep.Port, ep.Health, ep.WorkloadName, ep.Locality.Zone)
	}
	// Output:
	// http 10.210.0.1 8080 Healthy web-0 zone-x
	// http 10.210.0.2 8080 Healthy web-1 zone-x
}

// exampleObjects writes Example's cluster: a namespace, a node in zone
// zone-x (the EndpointSlice controller skips pods on unknown nodes), a
// Service web of port 80 to 8080 selecting app=web, and two running,
// ready pods of it. Without a kubelet, the pods' status (IP, phase, Ready)
// is written as a kubelet would.
func exampleObjects(ctx context.Context, ns string) error {
	core := env.kube.CoreV1()
	if _, err := core.Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		return err
	}
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "example-node", Labels: map[string]string{"topology.kubernetes.io/zone": "zone-x"}}}
	if _, err := core.Nodes().Create(ctx, node, metav1.CreateOptions{}); err != nil {
		return err
	}
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns},
		Spec: corev1.ServiceSpec{
			Selector: map[string]string{"app": "web"},
			Ports:    []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromInt32(8080)}},
		},
	}
	if _, err := core.Services(ns).Create(ctx, svc, metav1.CreateOptions{}); err != nil {
		return err
	}
	for i, ip := range []string{"10.210.0.1", "10.210.0.2"} {
		pod, err := core.Pods(ns).Create(ctx, &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("web-%d", i), Namespace: ns, Labels: map[string]string{"app": "web"}},
			Spec:       corev1.PodSpec{NodeName: node.Name, Containers: []corev1.Container{{Name: "web", Image: "web"}}},
		}, metav1.CreateOptions{})
		if err != nil {
			return err
		}
		pod.Status.Phase = corev1.PodRunning
		pod.Status.PodIP, pod.Status.PodIPs = ip, []corev1.PodIP{{IP: ip}}
		pod.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
		if _, err := core.Pods(ns).UpdateStatus(ctx, pod, metav1.UpdateOptions{}); err != nil {
			return err
		}
	}
	return nil
}

// exampleCleanup deletes what exampleObjects wrote (the namespace takes
// its objects with it), so that no other test sees them.
func exampleCleanup(ns string) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_ = env.kube.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{})
	_ = env.kube.CoreV1().Nodes().Delete(ctx, "example-node", metav1.DeleteOptions{})
}
