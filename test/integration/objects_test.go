//go:build integration

package integration

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func mkNamespace(t *testing.T, ctx context.Context, name string, labels map[string]string) {
	t.Helper()
	_, err := env.kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}, metav1.CreateOptions{})
	must(t, err)
}

// mkNode creates a node: the EndpointSlice controller skips pods whose
// node does not exist.
func mkNode(t *testing.T, ctx context.Context, name, region, zone string) {
	t.Helper()
	_, err := env.kube.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{
		"topology.kubernetes.io/region": region, "topology.kubernetes.io/zone": zone,
	}}}, metav1.CreateOptions{})
	if err != nil && !isAlreadyExists(err) {
		t.Fatal(err)
	}
}

func mkService(t *testing.T, ctx context.Context, ns, name string, selector map[string]string) {
	t.Helper()
	_, err := env.kube.CoreV1().Services(ns).Create(ctx, &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: corev1.ServiceSpec{Selector: selector, Ports: []corev1.ServicePort{
			{Name: "http", Port: 80, TargetPort: intstr.FromInt32(8080)},
		}},
	}, metav1.CreateOptions{})
	must(t, err)
}

// mkPod creates a running pod, never scheduled, and sets its status: the
// IP, and the Ready condition.
func mkPod(t *testing.T, ctx context.Context, ns, name, node, ip string, labels map[string]string, ready bool, finalizers ...string) {
	t.Helper()
	p, err := env.kube.CoreV1().Pods(ns).Create(ctx, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: labels, Finalizers: finalizers},
		Spec: corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{
			Name: "app", Image: "app", Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 8080}},
		}}},
	}, metav1.CreateOptions{})
	must(t, err)
	setPodStatus(t, ctx, p, ip, ready)
}

func setPodStatus(t *testing.T, ctx context.Context, p *corev1.Pod, ip string, ready bool) {
	t.Helper()
	status := corev1.ConditionFalse
	if ready {
		status = corev1.ConditionTrue
	}
	p.Status = corev1.PodStatus{
		Phase: corev1.PodRunning, PodIP: ip, PodIPs: []corev1.PodIP{{IP: ip}},
		Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: status}},
	}
	_, err := env.kube.CoreV1().Pods(p.Namespace).UpdateStatus(ctx, p, metav1.UpdateOptions{})
	must(t, err)
}

func setPodReady(t *testing.T, ctx context.Context, ns, name string, ready bool) {
	t.Helper()
	p, err := env.kube.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
	must(t, err)
	setPodStatus(t, ctx, p, p.Status.PodIP, ready)
}

// deletePod deletes a pod at once. Without a kubelet to finish a graceful
// deletion, a pod deleted with a grace period stays terminating for good
// (and the registry rightly reports it Draining), so the tests delete as
// a kubelet would end it: with a grace period of 0. A finalizer still
// holds the pod until it is removed.
func deletePod(t *testing.T, ctx context.Context, ns, name string) {
	t.Helper()
	zero := int64(0)
	must(t, env.kube.CoreV1().Pods(ns).Delete(ctx, name, metav1.DeleteOptions{GracePeriodSeconds: &zero}))
}
