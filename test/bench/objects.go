package bench

import (
	"fmt"
	"net/netip"

	networkingapiv1 "istio.io/api/networking/v1"
	networkingv1 "istio.io/client-go/pkg/apis/networking/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// The scenario's objects, each made the same way every time.

func uid(kind, ns, name string) types.UID {
	return types.UID(fmt.Sprintf("%08x-0000-4000-8000-%012x", len(kind)+len(ns), hash(kind+"/"+ns+"/"+name)&0xffffffffffff))
}

// hash is FNV-1a, for stable UIDs.
func hash(s string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= 1099511628211
	}
	return h
}

func meta(ns, name string, labels map[string]string) metav1.ObjectMeta {
	return metav1.ObjectMeta{
		Namespace: ns, Name: name, Labels: labels,
		UID:               uid("", ns, name),
		CreationTimestamp: metav1.NewTime(epoch),
	}
}

func zoneName(z int) string { return fmt.Sprintf("%s-%c", Region, 'a'+z) }

func node(i, zones int) *corev1.Node {
	name := fmt.Sprintf("node-%04d", i)
	n := &corev1.Node{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Node"},
		ObjectMeta: meta("", name, map[string]string{
			"kubernetes.io/hostname":           name,
			"kubernetes.io/os":                 "linux",
			"kubernetes.io/arch":               "amd64",
			"node.kubernetes.io/instance-type": "n2-standard-8",
			corev1.LabelTopologyRegion:         Region,
			corev1.LabelTopologyZone:           zoneName(i % zones),
		}),
		Spec: corev1.NodeSpec{PodCIDR: fmt.Sprintf("10.64.%d.0/24", i%256), ProviderID: "bench://" + name},
		Status: corev1.NodeStatus{
			Capacity:    corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("8"), corev1.ResourceMemory: resource.MustParse("32Gi"), corev1.ResourcePods: resource.MustParse("110")},
			Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("7910m"), corev1.ResourceMemory: resource.MustParse("29Gi"), corev1.ResourcePods: resource.MustParse("110")},
			Conditions:  []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady", Message: "kubelet is posting ready status", LastHeartbeatTime: metav1.NewTime(epoch), LastTransitionTime: metav1.NewTime(epoch)}},
			Addresses:   []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: fmt.Sprintf("192.168.%d.%d", i>>8&255, i&255)}, {Type: corev1.NodeHostName, Address: name}},
			NodeInfo:    corev1.NodeSystemInfo{KubeletVersion: "v1.37.2", ContainerRuntimeVersion: "containerd://2.1.0", OperatingSystem: "linux", Architecture: "amd64", OSImage: "Ubuntu 24.04 LTS", KernelVersion: "6.8.0"},
		},
	}
	return n
}

func service(ns, name string, ip netip.Addr) *corev1.Service {
	tcp := corev1.ProtocolTCP
	local := corev1.ServiceInternalTrafficPolicyCluster
	single := corev1.IPFamilyPolicySingleStack
	return &corev1.Service{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
		ObjectMeta: meta(ns, name, map[string]string{"app": name, "app.kubernetes.io/part-of": "bench"}),
		Spec: corev1.ServiceSpec{
			Type:       corev1.ServiceTypeClusterIP,
			ClusterIP:  ip.String(),
			ClusterIPs: []string{ip.String()},
			Selector:   map[string]string{"app": name},
			Ports: []corev1.ServicePort{
				{Name: "http", Protocol: tcp, Port: HTTPPort, TargetPort: intstr.FromInt32(HTTPTargetPort)},
				{Name: "grpc", Protocol: tcp, Port: GRPCPort, TargetPort: intstr.FromString("grpc")},
			},
			SessionAffinity:       corev1.ServiceAffinityNone,
			IPFamilies:            []corev1.IPFamily{corev1.IPv4Protocol},
			IPFamilyPolicy:        &single,
			InternalTrafficPolicy: &local,
		},
	}
}

func newPod(ns, svc string, j int, ip netip.Addr, n *corev1.Node, zones int) *corev1.Pod {
	name := fmt.Sprintf("%s-7d9f8c6b5-%05d", svc, j)
	t := metav1.NewTime(epoch)
	yes := true
	grace := int64(30)
	return &corev1.Pod{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{
			Namespace: ns, Name: name, UID: uid("Pod", ns, name), CreationTimestamp: t,
			GenerateName: svc + "-7d9f8c6b5-",
			Labels: map[string]string{
				"app": svc, "version": "v1", "pod-template-hash": "7d9f8c6b5",
				"security.istio.io/tlsMode": "istio", "service.istio.io/canonical-name": svc,
			},
			Annotations: map[string]string{
				"kubectl.kubernetes.io/default-container": "app",
				"prometheus.io/scrape":                    "true",
				"prometheus.io/port":                      "15020",
			},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: svc + "-7d9f8c6b5", UID: uid("ReplicaSet", ns, svc), Controller: &yes, BlockOwnerDeletion: &yes}},
		},
		Spec: corev1.PodSpec{
			NodeName:           n.Name,
			ServiceAccountName: svc,
			Containers: []corev1.Container{{
				Name:  "app",
				Image: "registry.example/bench/" + svc + ":1.0.0",
				Ports: []corev1.ContainerPort{
					{Name: "http", ContainerPort: HTTPTargetPort, Protocol: corev1.ProtocolTCP},
					{Name: "grpc", ContainerPort: GRPCPort, Protocol: corev1.ProtocolTCP},
				},
				Env: []corev1.EnvVar{
					{Name: "SERVICE_NAME", Value: svc},
					{Name: "POD_IP", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "status.podIP"}}},
				},
				Resources: corev1.ResourceRequirements{
					Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("128Mi")},
					Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("256Mi")},
				},
				VolumeMounts:             []corev1.VolumeMount{{Name: "kube-api-access", MountPath: "/var/run/secrets/kubernetes.io/serviceaccount", ReadOnly: true}},
				TerminationMessagePath:   "/dev/termination-log",
				TerminationMessagePolicy: corev1.TerminationMessageReadFile,
				ImagePullPolicy:          corev1.PullIfNotPresent,
			}},
			Volumes:                       []corev1.Volume{{Name: "kube-api-access", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "token"}}}}}}},
			RestartPolicy:                 corev1.RestartPolicyAlways,
			DNSPolicy:                     corev1.DNSClusterFirst,
			SchedulerName:                 corev1.DefaultSchedulerName,
			TerminationGracePeriodSeconds: &grace,
			Tolerations:                   []corev1.Toleration{{Key: "node.kubernetes.io/not-ready", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute}},
		},
		Status: corev1.PodStatus{
			Phase:     corev1.PodRunning,
			HostIP:    n.Status.Addresses[0].Address,
			PodIP:     ip.String(),
			PodIPs:    []corev1.PodIP{{IP: ip.String()}},
			QOSClass:  corev1.PodQOSBurstable,
			StartTime: &t,
			Conditions: []corev1.PodCondition{
				{Type: corev1.PodInitialized, Status: corev1.ConditionTrue, LastTransitionTime: t},
				{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: t},
				{Type: corev1.ContainersReady, Status: corev1.ConditionTrue, LastTransitionTime: t},
				{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: t},
			},
			ContainerStatuses: []corev1.ContainerStatus{{
				Name: "app", Ready: true, Started: &yes,
				Image: "registry.example/bench/" + svc + ":1.0.0", ImageID: "registry.example/bench/" + svc + "@sha256:0123456789abcdef",
				ContainerID: "containerd://" + string(uid("c", ns, name)),
				State:       corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: t}},
			}},
		},
	}
}

func sliceEndpoint(p *corev1.Pod, nodeIdx, zones int) discoveryv1.Endpoint {
	yes, no := true, false
	node := p.Spec.NodeName
	zone := zoneName(nodeIdx % zones)
	return discoveryv1.Endpoint{
		Addresses:  []string{p.Status.PodIP},
		Conditions: discoveryv1.EndpointConditions{Ready: &yes, Serving: &yes, Terminating: &no},
		NodeName:   &node,
		Zone:       &zone,
		TargetRef:  &corev1.ObjectReference{Kind: "Pod", Namespace: p.Namespace, Name: p.Name, UID: p.UID},
	}
}

func slice(ns, svc string, k int, eps []discoveryv1.Endpoint) *discoveryv1.EndpointSlice {
	http, grpc := "http", "grpc"
	hp, gp := int32(HTTPTargetPort), int32(GRPCPort)
	tcp := corev1.ProtocolTCP
	name := fmt.Sprintf("%s-%05x", svc, k)
	yes := true
	m := meta(ns, name, map[string]string{
		discoveryv1.LabelServiceName: svc,
		discoveryv1.LabelManagedBy:   "endpointslice-controller.k8s.io",
		"app":                        svc,
	})
	m.GenerateName = svc + "-"
	m.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "Service", Name: svc, UID: uid("", ns, svc), Controller: &yes, BlockOwnerDeletion: &yes}}
	return &discoveryv1.EndpointSlice{
		TypeMeta:    metav1.TypeMeta{APIVersion: "discovery.k8s.io/v1", Kind: "EndpointSlice"},
		ObjectMeta:  m,
		AddressType: discoveryv1.AddressTypeIPv4,
		Endpoints:   append([]discoveryv1.Endpoint(nil), eps...),
		Ports: []discoveryv1.EndpointPort{
			{Name: &http, Port: &hp, Protocol: &tcp},
			{Name: &grpc, Port: &gp, Protocol: &tcp},
		},
	}
}

func serviceEntry(ns, svc string) *networkingv1.ServiceEntry {
	return &networkingv1.ServiceEntry{
		TypeMeta:   metav1.TypeMeta{APIVersion: "networking.istio.io/v1", Kind: "ServiceEntry"},
		ObjectMeta: meta(ns, svc+"-mesh", map[string]string{"app": svc}),
		Spec: networkingapiv1.ServiceEntry{
			Hosts:            []string{svc + ".mesh.example"},
			Ports:            []*networkingapiv1.ServicePort{{Number: HTTPPort, Name: "http", Protocol: "HTTP", TargetPort: HTTPTargetPort}, {Number: GRPCPort, Name: "grpc", Protocol: "GRPC"}},
			Location:         networkingapiv1.ServiceEntry_MESH_INTERNAL,
			Resolution:       networkingapiv1.ServiceEntry_STATIC,
			WorkloadSelector: &networkingapiv1.WorkloadSelector{Labels: map[string]string{"app": svc}},
		},
	}
}
