package kube

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// TestSliceMembershipChanges changes slices in the ways a service's
// endpoints can change: endpoints gained and lost, slices created and
// deleted, endpoints pending their pod, dual-stack pods. After each the
// registry equals a fresh controller's over the changed objects, and
// still does after every pod's labels and then a node's zone change,
// which reach the endpoints through the memos the change left.
func TestSliceMembershipChanges(t *testing.T) {
	dualStack := podObj("ns", "d", "10.0.0.4", "n2", map[string]string{"app": "d"})
	dualStack.Status.PodIPs = []corev1.PodIP{{IP: "10.0.0.4"}, {IP: "fd00::4"}}
	base := func() []runtime.Object {
		return []runtime.Object{
			nodeObj("n1", "r", "z1"), nodeObj("n2", "r", "z2"),
			svcObj("ns", "one", "10.96.0.1", nil, svcPort("http", 80), svcPort("grpc", 90)),
			svcObj("ns", "two", "10.96.0.2", nil, svcPort("http", 80)),
			svcObj("ns", "pending", "10.96.0.3", nil, svcPort("http", 80)),
			svcObj("ns", "unserved", "10.96.0.4", nil, svcPort("tcp", 70)),
			svcObj("ns", "dual", "10.96.0.5", nil, svcPort("http", 80)),
			podObj("ns", "a", "10.0.0.1", "n1", map[string]string{"app": "a"}),
			podObj("ns", "b", "10.0.0.2", "n1", map[string]string{"app": "b"}),
			podObj("ns", "c", "10.0.0.3", "n2", map[string]string{"app": "c"}),
			dualStack,
			sliceObj("ns", "one-1", "one", discoveryv1.AddressTypeIPv4, 8080, sliceEP{addr: "10.0.0.1", pod: "a", ready: true}, sliceEP{addr: "10.0.0.2", pod: "b", ready: true}),
			sliceObj("ns", "two-1", "two", discoveryv1.AddressTypeIPv4, 8080, sliceEP{addr: "10.0.0.1", pod: "a", ready: true}),
			sliceObj("ns", "two-2", "two", discoveryv1.AddressTypeIPv4, 8081, sliceEP{addr: "10.0.0.2", pod: "b", ready: true}, sliceEP{addr: "10.0.0.3", ready: true}),
			sliceObj("ns", "pending-1", "pending", discoveryv1.AddressTypeIPv4, 8080, sliceEP{addr: "10.0.0.1", pod: "a", ready: true}, sliceEP{addr: "10.0.0.9", pod: "ghost", ready: true}),
			sliceObj("ns", "unserved-1", "unserved", discoveryv1.AddressTypeIPv4, 8080, sliceEP{addr: "10.0.0.1", pod: "a", ready: true}, sliceEP{addr: "10.0.0.9", pod: "ghost", ready: true}),
			sliceObj("ns", "gone-2", "gone", discoveryv1.AddressTypeIPv4, 8080, sliceEP{addr: "10.0.0.1", pod: "a", ready: true}),
			sliceObj("ns", "dual-4", "dual", discoveryv1.AddressTypeIPv4, 8080, sliceEP{addr: "10.0.0.4", pod: "d", ready: true}),
			sliceObj("ns", "dual-6", "dual", discoveryv1.AddressTypeIPv6, 8080, sliceEP{addr: "fd00::4", pod: "d", ready: true}),
		}
	}
	ep := func(addr, pod string, ready bool) discoveryv1.Endpoint {
		e := discoveryv1.Endpoint{Addresses: []string{addr}, Conditions: discoveryv1.EndpointConditions{Ready: ptr(ready)}}
		if pod != "" {
			e.TargetRef = &corev1.ObjectReference{Kind: "Pod", Namespace: "ns", Name: pod}
		}
		return e
	}
	tests := []struct {
		name  string
		slice string
		// change edits the slice; nil change deletes it, and a slice
		// that base lacks is created.
		change func(s *discoveryv1.EndpointSlice)
	}{
		{"an endpoint added, by targetRef", "one-1", func(s *discoveryv1.EndpointSlice) {
			s.Endpoints = append(s.Endpoints, ep("10.0.0.3", "c", true))
		}},
		{"an endpoint added first, not ready", "one-1", func(s *discoveryv1.EndpointSlice) {
			s.Endpoints = append([]discoveryv1.Endpoint{ep("10.0.0.4", "d", false)}, s.Endpoints...)
		}},
		{"an endpoint removed", "one-1", func(s *discoveryv1.EndpointSlice) { s.Endpoints = s.Endpoints[:1] }},
		{"the last endpoint removed", "two-1", func(s *discoveryv1.EndpointSlice) { s.Endpoints = nil }},
		{"an endpoint without a targetRef added at a pod's IP", "one-1", func(s *discoveryv1.EndpointSlice) {
			s.Endpoints = append(s.Endpoints, ep("10.0.0.3", "", true))
		}},
		{"an endpoint without a targetRef added at no pod's IP", "one-1", func(s *discoveryv1.EndpointSlice) {
			s.Endpoints = append(s.Endpoints, ep("10.0.7.7", "", true))
		}},
		{"an endpoint without a targetRef removed", "two-2", func(s *discoveryv1.EndpointSlice) { s.Endpoints = s.Endpoints[:1] }},
		{"an endpoint added at another address than its pod's", "one-1", func(s *discoveryv1.EndpointSlice) {
			s.Endpoints = append(s.Endpoints, ep("10.0.1.3", "c", true))
		}},
		{"one added, one removed, one flipped", "one-1", func(s *discoveryv1.EndpointSlice) {
			s.Endpoints = []discoveryv1.Endpoint{ep("10.0.0.4", "d", true), ep("10.0.0.2", "b", false)}
		}},
		{"a pod moving to another address", "one-1", func(s *discoveryv1.EndpointSlice) {
			s.Endpoints = []discoveryv1.Endpoint{ep("10.0.1.1", "a", true), ep("10.0.0.2", "b", true)}
		}},
		{"a slice created", "one-2", func(s *discoveryv1.EndpointSlice) {
			s.Endpoints = []discoveryv1.Endpoint{ep("10.0.0.3", "c", true)}
		}},
		{"a slice deleted", "two-2", nil},
		{"an empty slice created", "one-2", func(*discoveryv1.EndpointSlice) {}},
		{"an empty slice of a missing service created", "gone-1", func(*discoveryv1.EndpointSlice) {}},
		{"a slice of a missing service gaining an endpoint", "gone-2", func(s *discoveryv1.EndpointSlice) {
			s.Endpoints = append(s.Endpoints, ep("10.0.0.3", "c", true))
		}},
		{"an endpoint of a pod not known yet added", "one-1", func(s *discoveryv1.EndpointSlice) {
			s.Endpoints = append(s.Endpoints, ep("10.0.0.8", "ghost", true))
		}},
		{"an endpoint pending its pod removed", "pending-1", func(s *discoveryv1.EndpointSlice) { s.Endpoints = s.Endpoints[:1] }},
		{"an endpoint pending its pod removed, on no port of the service", "unserved-1", func(s *discoveryv1.EndpointSlice) { s.Endpoints = s.Endpoints[:1] }},
		{"an endpoint on no port of the service added", "unserved-1", func(s *discoveryv1.EndpointSlice) {
			s.Endpoints = append(s.Endpoints, ep("10.0.0.2", "b", true))
		}},
		{"an address the service's other slice lists added", "two-2", func(s *discoveryv1.EndpointSlice) {
			s.Endpoints = append(s.Endpoints, ep("10.0.0.1", "", true))
		}},
		{"a pod the service's other slice names added at another address", "two-2", func(s *discoveryv1.EndpointSlice) {
			s.Endpoints = append(s.Endpoints, ep("10.0.1.1", "a", true))
		}},
		{"an address added twice", "one-1", func(s *discoveryv1.EndpointSlice) {
			s.Endpoints = append(s.Endpoints, ep("10.0.0.3", "c", true), ep("10.0.0.3", "c", true))
		}},
		{"another pod at an address", "one-1", func(s *discoveryv1.EndpointSlice) {
			s.Endpoints[1] = ep("10.0.0.2", "c", true)
		}},
		{"another node at an address", "one-1", func(s *discoveryv1.EndpointSlice) { s.Endpoints[1].NodeName = ptr("n2") }},
		{"a port changed with an endpoint added", "one-1", func(s *discoveryv1.EndpointSlice) {
			s.Ports[0].Port = ptr[int32](9999)
			s.Endpoints = append(s.Endpoints, ep("10.0.0.3", "c", true))
		}},
		{"an endpoint of two addresses added", "one-1", func(s *discoveryv1.EndpointSlice) {
			e := ep("10.0.0.3", "c", true)
			e.Addresses = append(e.Addresses, "10.0.0.33")
			s.Endpoints = append(s.Endpoints, e)
		}},
		{"a malformed address added", "one-1", func(s *discoveryv1.EndpointSlice) {
			s.Endpoints = append(s.Endpoints, ep("10.0.0.x", "", true))
		}},
		{"a dual-stack pod's IPv4 slice emptied", "dual-4", func(s *discoveryv1.EndpointSlice) { s.Endpoints = nil }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			objs := base()
			f := newFakeCluster(objs...)
			c := startController(t, f, Options{})
			svc := strings.Split(tt.slice, "-")[0]
			var (
				s       *discoveryv1.EndpointSlice
				changed []runtime.Object
			)
			for _, o := range objs {
				if sl, ok := o.(*discoveryv1.EndpointSlice); ok && sl.Name == tt.slice {
					s = sl.DeepCopy()
					if tt.change == nil {
						continue
					}
					tt.change(s)
					o = s
				}
				changed = append(changed, o.DeepCopyObject())
			}
			if s == nil {
				s = sliceObj("ns", tt.slice, svc, discoveryv1.AddressTypeIPv4, 8080)
				tt.change(s)
				changed = append(changed, s.DeepCopy())
			}
			api := f.DiscoveryV1().EndpointSlices("ns")
			var err error
			switch _, getErr := api.Get(context.Background(), tt.slice, metav1.GetOptions{}); {
			case tt.change == nil:
				err = api.Delete(context.Background(), tt.slice, metav1.DeleteOptions{})
			case getErr != nil:
				_, err = api.Create(context.Background(), s, metav1.CreateOptions{})
			default:
				_, err = api.Update(context.Background(), s, metav1.UpdateOptions{})
			}
			mustNot(t, err)
			want := dump(t, startController(t, newFakeCluster(changed...), Options{}))
			waitDump(t, c, want, "after the change, the registry (want: a fresh one's)")

			// Then every pod's labels change, and after them node n2's
			// zone, which reach the endpoints through what the change
			// left: the services' dependencies, and their shapes.
			ctx := context.Background()
			for _, o := range changed {
				if p, ok := o.(*corev1.Pod); ok {
					p.Labels = map[string]string{"app": p.Name, "version": "v2"}
					_, err := f.CoreV1().Pods("ns").Update(ctx, p.DeepCopy(), metav1.UpdateOptions{})
					mustNot(t, err)
				}
			}
			want = dump(t, startController(t, newFakeCluster(changed...), Options{}))
			waitDump(t, c, want, "after the change and the pods' labels, the registry (want: a fresh one's)")
			for i, o := range changed {
				if n, ok := o.(*corev1.Node); ok && n.Name == "n2" {
					changed[i] = nodeObj("n2", "r", "z3")
				}
			}
			_, err = f.CoreV1().Nodes().Update(ctx, nodeObj("n2", "r", "z3"), metav1.UpdateOptions{})
			mustNot(t, err)
			want = dump(t, startController(t, newFakeCluster(changed...), Options{}))
			waitDump(t, c, want, "after the change, the pods' labels and a node's zone, the registry (want: a fresh one's)")
		})
	}
}

// TestRandomSliceChangesMatchFresh is a property of the endpoint
// memos: after each step of random histories of slices
// gaining, losing and replacing endpoints, slices created and deleted,
// readiness flips, pods' labels changing and pods coming and going, the
// registry equals a fresh
// controller's over the objects of that step. The worlds mix endpoints
// at their pod's IP, at another address with the pod's targetRef, without
// a targetRef, and naming pods not known yet, in services of one and two
// ports and of up to three slices; an address or a pod may be listed by
// two slices. Each failure names its seed and the history up to it.
func TestRandomSliceChangesMatchFresh(t *testing.T) {
	const (
		seeds = 16
		steps = 10
		nPods = 8
	)
	for seed := range uint64(seeds) {
		t.Run(fmt.Sprint("seed=", seed), func(t *testing.T) {
			t.Parallel()
			r := rand.New(rand.NewPCG(seed, 11))
			world := map[string]runtime.Object{}
			world["node/n1"] = nodeObj("n1", "r", "z1")
			world["node/n2"] = nodeObj("n2", "r", "z2")
			pod := func(i int) *corev1.Pod {
				return podObj("ns", fmt.Sprint("p", i), fmt.Sprintf("10.0.0.%d", i+1), fmt.Sprint("n", 1+i%2), map[string]string{"app": "web"})
			}
			for i := range nPods - 2 { // p6 and p7 come later, if at all
				world[fmt.Sprint("pod/p", i)] = pod(i)
			}
			// randomEP draws a slice endpoint: mostly a pod's at its IP,
			// else a targetRef at another address, an address alone, or
			// a pod that may not exist yet.
			randomEP := func() discoveryv1.Endpoint {
				i := r.IntN(nPods)
				e := discoveryv1.Endpoint{
					Addresses:  []string{fmt.Sprintf("10.0.0.%d", i+1)},
					TargetRef:  &corev1.ObjectReference{Kind: "Pod", Namespace: "ns", Name: fmt.Sprint("p", i)},
					Conditions: discoveryv1.EndpointConditions{Ready: ptr(r.IntN(3) != 0)},
				}
				switch r.IntN(5) {
				case 0:
					e.Addresses[0] = fmt.Sprintf("10.0.1.%d", r.IntN(nPods)+1)
				case 1:
					e.TargetRef = nil
				}
				return e
			}
			newSlice := func(svc string, j int) *discoveryv1.EndpointSlice {
				s := sliceObj("ns", fmt.Sprintf("%s-%d", svc, j), svc, discoveryv1.AddressTypeIPv4, 8080+int32(j))
				s.Ports = append(s.Ports, discoveryv1.EndpointPort{Name: ptr("grpc"), Port: ptr[int32](9090)})
				for range r.IntN(4) {
					s.Endpoints = append(s.Endpoints, randomEP())
				}
				return s
			}
			for k, svc := range []string{"s1", "s2"} {
				ports := []corev1.ServicePort{svcPort("http", 80)}
				if r.IntN(2) == 0 {
					ports = append(ports, svcPort("grpc", 90))
				}
				world["svc/"+svc] = svcObj("ns", svc, fmt.Sprintf("10.96.0.%d", k+1), nil, ports...)
				for j := range 1 + r.IntN(2) {
					world[fmt.Sprintf("slice/%s-%d", svc, j)] = newSlice(svc, j)
				}
			}
			f := newFakeCluster(worldObjects(world)...)
			c := startController(t, f, Options{})
			ctx := context.Background()
			slicesAPI, podsAPI := f.DiscoveryV1().EndpointSlices("ns"), f.CoreV1().Pods("ns")
			// randomSlice draws the key of one of the world's slices.
			randomSlice := func() (string, bool) {
				var keys []string
				for _, k := range slices.Sorted(maps.Keys(world)) {
					if strings.HasPrefix(k, "slice/") {
						keys = append(keys, k)
					}
				}
				if len(keys) == 0 {
					return "", false
				}
				return keys[r.IntN(len(keys))], true
			}
			var history []string
			for range steps {
				var err error
				switch op := r.IntN(11); {
				case op < 6: // a slice's endpoints change
					key, ok := randomSlice()
					if !ok {
						continue
					}
					s := world[key].(*discoveryv1.EndpointSlice).DeepCopy()
					var did []string
					for range 1 + r.IntN(3) {
						switch n := len(s.Endpoints); {
						case n > 0 && r.IntN(3) == 0:
							i := r.IntN(n)
							did = append(did, "-"+s.Endpoints[i].Addresses[0])
							s.Endpoints = slices.Delete(s.Endpoints, i, i+1)
						case n > 0 && r.IntN(2) == 0:
							i := r.IntN(n)
							s.Endpoints[i].Conditions.Ready = ptr(!*s.Endpoints[i].Conditions.Ready)
							did = append(did, fmt.Sprintf("%s ready=%v", s.Endpoints[i].Addresses[0], *s.Endpoints[i].Conditions.Ready))
						default:
							e := randomEP()
							did = append(did, fmt.Sprintf("+%s (%s)", e.Addresses[0], targetName(e)))
							s.Endpoints = slices.Insert(s.Endpoints, r.IntN(n+1), e)
						}
					}
					world[key] = s
					history = append(history, fmt.Sprintf("slice %s: %s", s.Name, strings.Join(did, ", ")))
					_, err = slicesAPI.Update(ctx, s.DeepCopy(), metav1.UpdateOptions{})
				case op < 7: // a slice created
					svc := []string{"s1", "s2"}[r.IntN(2)]
					j := 2
					for world[fmt.Sprintf("slice/%s-%d", svc, j)] != nil {
						j++
					}
					s := newSlice(svc, j)
					world["slice/"+s.Name] = s
					history = append(history, fmt.Sprintf("slice %s created with %d endpoints", s.Name, len(s.Endpoints)))
					_, err = slicesAPI.Create(ctx, s.DeepCopy(), metav1.CreateOptions{})
				case op < 8: // a slice deleted
					key, ok := randomSlice()
					if !ok {
						continue
					}
					name := world[key].(*discoveryv1.EndpointSlice).Name
					delete(world, key)
					history = append(history, fmt.Sprintf("slice %s deleted", name))
					err = slicesAPI.Delete(ctx, name, metav1.DeleteOptions{})
				case op < 9: // a pod's labels change (a patch of its endpoints)
					i := r.IntN(nPods)
					key := fmt.Sprint("pod/p", i)
					if world[key] == nil {
						continue
					}
					p := world[key].(*corev1.Pod).DeepCopy()
					p.Labels = map[string]string{"app": "web", "version": fmt.Sprint("v", r.IntN(3))}
					world[key] = p
					history = append(history, fmt.Sprintf("pod p%d: version %s", i, p.Labels["version"]))
					_, err = podsAPI.Update(ctx, p.DeepCopy(), metav1.UpdateOptions{})
				default: // a pod comes or goes
					i := r.IntN(nPods)
					key := fmt.Sprint("pod/p", i)
					if world[key] != nil {
						delete(world, key)
						history = append(history, fmt.Sprintf("pod p%d deleted", i))
						err = podsAPI.Delete(ctx, fmt.Sprint("p", i), metav1.DeleteOptions{})
					} else {
						world[key] = pod(i)
						history = append(history, fmt.Sprintf("pod p%d created", i))
						_, err = podsAPI.Create(ctx, pod(i), metav1.CreateOptions{})
					}
				}
				mustNot(t, err)
				want := dump(t, startController(t, newFakeCluster(worldObjects(world)...), Options{}))
				waitDump(t, c, want, "after\n  "+strings.Join(history, "\n  ")+"\nthe registry (want: a fresh one's over the objects then)")
			}
		})
	}
}

// targetName is the name of e's targetRef, or "no targetRef".
func targetName(e discoveryv1.Endpoint) string {
	if e.TargetRef == nil {
		return "no targetRef"
	}
	return e.TargetRef.Name
}
