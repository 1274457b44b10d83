package kube

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/meshreg/meshreg/internal/intern"
	"github.com/meshreg/meshreg/model"
)

// The informer transforms below keep only the fields the controller reads,
// so the informer caches hold small objects. Each builds a new object
// (the input is not modified) and passes anything else through unchanged:
// an informer may hand a transform a tombstone or an object it already
// transformed, so transforms are idempotent.

// stripMeta keeps name, namespace, labels, creation time and resource
// version, the annotations listed, and of the managed fields one entry
// that holds the time of the last write (writtenAt), for the lag metric.
func stripMeta(m *metav1.ObjectMeta, annotations ...string) metav1.ObjectMeta {
	out := metav1.ObjectMeta{
		Name:              m.Name,
		Namespace:         m.Namespace,
		Labels:            m.Labels,
		CreationTimestamp: m.CreationTimestamp,
		ResourceVersion:   m.ResourceVersion,
	}
	if w := writtenAt(m); w != 0 {
		t := metav1.NewTime(time.Unix(0, w))
		out.ManagedFields = []metav1.ManagedFieldsEntry{{Time: &t}}
	}
	for _, k := range annotations {
		if v, ok := m.Annotations[k]; ok {
			if out.Annotations == nil {
				out.Annotations = map[string]string{}
			}
			out.Annotations[k] = v
		}
	}
	return out
}

// writtenAt returns the time of an object's last write, in Unix
// nanoseconds: the latest time of its managed fields, which the API
// server sets on each write by a field manager; 0 when there are none
// (objects of fake clientsets, or of servers that track no fields).
func writtenAt(m *metav1.ObjectMeta) int64 {
	var w int64
	for _, f := range m.ManagedFields {
		if f.Time != nil {
			w = max(w, f.Time.UnixNano())
		}
	}
	return w
}

// stripService keeps what convertService reads.
func stripService(obj any) (any, error) {
	svc, ok := obj.(*corev1.Service)
	if !ok {
		return obj, nil
	}
	out := &corev1.Service{
		ObjectMeta: stripMeta(&svc.ObjectMeta, annotationExportTo, annotationCanonicalServiceAccounts, annotationKubernetesServiceAccounts, annotationNodeSelector, model.TrafficDistributionAnnotation, model.AnnotationWaypointCanaryWeight),
		Spec: corev1.ServiceSpec{
			Type:                     svc.Spec.Type,
			ClusterIP:                svc.Spec.ClusterIP,
			ClusterIPs:               svc.Spec.ClusterIPs,
			IPFamilies:               svc.Spec.IPFamilies,
			ExternalName:             svc.Spec.ExternalName,
			ExternalIPs:              svc.Spec.ExternalIPs,
			Selector:                 svc.Spec.Selector,
			PublishNotReadyAddresses: svc.Spec.PublishNotReadyAddresses,
			InternalTrafficPolicy:    svc.Spec.InternalTrafficPolicy,
			TrafficDistribution:      svc.Spec.TrafficDistribution,
		},
	}
	if len(svc.Spec.Ports) > 0 {
		out.Spec.Ports = make([]corev1.ServicePort, len(svc.Spec.Ports))
		for i, p := range svc.Spec.Ports {
			out.Spec.Ports[i] = corev1.ServicePort{
				Name: p.Name, Protocol: p.Protocol, AppProtocol: p.AppProtocol,
				Port: p.Port, TargetPort: p.TargetPort, NodePort: p.NodePort,
			}
		}
	}
	if svc.Spec.Type == corev1.ServiceTypeLoadBalancer && len(svc.Status.LoadBalancer.Ingress) > 0 {
		ing := make([]corev1.LoadBalancerIngress, len(svc.Status.LoadBalancer.Ingress))
		for i, in := range svc.Status.LoadBalancer.Ingress {
			ing[i] = corev1.LoadBalancerIngress{IP: in.IP, Hostname: in.Hostname}
		}
		out.Status.LoadBalancer.Ingress = ing
	}
	return out, nil
}

// stripSlice turns an EndpointSlice into the controller's lean sliceInfo.
func stripSlice(obj any) (any, error) {
	s, ok := obj.(*discoveryv1.EndpointSlice)
	if !ok {
		return obj, nil
	}
	return newSliceInfo(s), nil
}

// stripPods returns the transform that turns a Pod into the controller's
// lean podInfo: labels (interned in labels, so that the pods of a replica
// set hold one map), node, service account, phase, parsed IPs and named
// container ports.
func stripPods(labels *intern.Maps) cache.TransformFunc {
	return func(obj any) (any, error) {
		pod, ok := obj.(*corev1.Pod)
		if !ok {
			return obj, nil
		}
		return newPodInfo(pod, labels), nil
	}
}

// stripNode keeps the name and the topology labels (nodeLocality); of a
// node with an external IP, which a NodePort gateway may select, every
// label and the first external IP (gatewayNode).
func stripNode(obj any) (any, error) {
	n, ok := obj.(*corev1.Node)
	if !ok {
		return obj, nil
	}
	out := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: n.Name, ResourceVersion: n.ResourceVersion}}
	if ip := nodeGatewayAddress(n); ip != "" {
		out.Labels = n.Labels
		out.Status.Addresses = []corev1.NodeAddress{{Type: corev1.NodeExternalIP, Address: ip}}
		return out, nil
	}
	for _, k := range [...]string{labelRegion, labelZone, labelBetaRegion, labelBetaZone, labelSubzone} {
		if v, ok := n.Labels[k]; ok {
			if out.Labels == nil {
				out.Labels = map[string]string{}
			}
			out.Labels[k] = v
		}
	}
	return out, nil
}

// stripNamespace keeps the name, labels, and the annotations of traffic
// distribution and the waypoint canary weight.
func stripNamespace(obj any) (any, error) {
	ns, ok := obj.(*corev1.Namespace)
	if !ok {
		return obj, nil
	}
	out := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns.Name, Labels: ns.Labels, ResourceVersion: ns.ResourceVersion}}
	for _, k := range []string{model.TrafficDistributionAnnotation, model.AnnotationWaypointCanaryWeight} {
		if v, ok := ns.Annotations[k]; ok {
			if out.Annotations == nil {
				out.Annotations = map[string]string{}
			}
			out.Annotations[k] = v
		}
	}
	return out, nil
}
