//go:build integration

package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/meshreg/meshreg/internal/manifest"
	"github.com/meshreg/meshreg/kube"
	"github.com/meshreg/meshreg/registry"
)

// goldenScenarios are the kube golden scenarios of the fake tier that
// apply to a real apiserver: they need no controller options, give their
// objects no creation times of their own (the server sets them), and hold
// only objects the server accepts (no invalid VIP, no IPv6 VIP on this
// single-stack server).
var goldenScenarios = []string{
	"kube-basic", "kube-exportto-serviceaccounts", "kube-externalname", "kube-fqdn-slice",
	"kube-headless", "kube-health-conditions", "kube-loadbalancer-nodeport", "kube-locality-node",
	"kube-locality-pod-label", "kube-multiple-slices", "kube-named-target-ports",
	"kube-network-system-namespace", "kube-no-targetref", "kube-pending-pod", "kube-pod-workloads",
	"kube-protocol-detection", "kube-publish-not-ready", "kube-same-name-two-namespaces",
	"kube-single-unnamed-port", "kube-slice-without-service", "kube-tls-mode-service-account",
}

const scenarioLabel = "meshreg.io/scenario"

// The fake tier's golden scenarios against the real apiserver: the same
// manifests, written through the API, must give the same dump, so the two
// tiers cannot drift apart. Services are written without their selector,
// so that Kubernetes' EndpointSlice controller leaves the scenario's own
// slices as they are, and both dumps are compared without selectors. Each scenario's
// namespaces carry a label the controller's namespace selector picks, so
// the other tests' objects stay out of the dump. Each scenario runs on the
// controller's own informers and on a SharedInformerFactory's.
func TestGoldenScenarios(t *testing.T) {
	for _, name := range goldenScenarios {
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join("..", "..", "testdata", "scenarios", name)
			objs, err := manifest.LoadFile(filepath.Join(dir, "cluster-Kubernetes.yaml"))
			must(t, err)
			raw, err := os.ReadFile(filepath.Join(dir, "want.json"))
			must(t, err)
			want := withoutSelectors(t, raw)
			ctx, cancel := ctxFor(t)
			defer cancel()
			applyScenario(t, ctx, name, objs)
			opts := kube.Options{ClusterID: "Kubernetes",
				NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{scenarioLabel: name}}}
			c := runKube(t, env.kube, opts)
			eventually(t, 30*time.Second, "the dump of "+name, func() (bool, string) {
				got := dumpWithout(t, c, "default/kubernetes.default.svc.cluster.local")
				return got == want, cmp.Diff(want, got)
			})
			// The same, on a SharedInformerFactory's informers.
			shared := runShared(t, env.kube, opts)
			eventually(t, 30*time.Second, "the dump of "+name+" on shared informers", func() (bool, string) {
				got := dumpWithout(t, shared, "default/kubernetes.default.svc.cluster.local")
				return got == want, cmp.Diff(want, got)
			})
		})
	}
}

// applyScenario writes a scenario's objects through the API, and takes
// away what it wrote when the test ends, also when it fails half way: a
// scenario's objects never reach the next.
func applyScenario(t *testing.T, ctx context.Context, scenario string, objs []runtime.Object) {
	t.Helper()
	var undos []func()
	t.Cleanup(func() {
		for i := len(undos) - 1; i >= 0; i-- {
			undos[i]()
		}
	})
	nsLabels := map[string]map[string]string{}
	for _, o := range objs {
		if ns, ok := o.(*corev1.Namespace); ok {
			nsLabels[ns.Name] = ns.Labels
		}
		if m, ok := o.(metav1.Object); ok && m.GetNamespace() != "" {
			if _, seen := nsLabels[m.GetNamespace()]; !seen {
				nsLabels[m.GetNamespace()] = nil
			}
		}
	}
	core := env.kube.CoreV1()
	for name, labels := range nsLabels {
		labels = maps.Clone(labels)
		if labels == nil {
			labels = map[string]string{}
		}
		labels[scenarioLabel] = scenario
		ns, err := core.Namespaces().Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			_, err = core.Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}, metav1.CreateOptions{})
			must(t, err)
		} else {
			must(t, err)
			old := ns.Labels
			ns.Labels = labels
			_, err = core.Namespaces().Update(ctx, ns, metav1.UpdateOptions{})
			must(t, err)
			undos = append(undos, func() { relabelNamespace(name, old) })
		}
	}
	// A namespace that did not exist is left, relabelled out of every
	// scenario: without a namespace controller it could not be deleted.
	for name := range nsLabels {
		undos = append(undos, func() { relabelNamespace(name, nil) })
	}
	for _, o := range objs {
		switch o := o.(type) {
		case *corev1.Node:
			old, err := core.Nodes().Get(ctx, o.Name, metav1.GetOptions{})
			if err == nil {
				saved := old.Labels
				old.Labels = o.Labels
				_, err = core.Nodes().Update(ctx, old, metav1.UpdateOptions{})
				must(t, err)
				undos = append(undos, func() {
					n, err := core.Nodes().Get(context.Background(), o.Name, metav1.GetOptions{})
					if err == nil {
						n.Labels = saved
						_, _ = core.Nodes().Update(context.Background(), n, metav1.UpdateOptions{})
					}
				})
				continue
			}
			_, err = core.Nodes().Create(ctx, o, metav1.CreateOptions{})
			must(t, err)
			undos = append(undos, func() { _ = core.Nodes().Delete(context.Background(), o.Name, metav1.DeleteOptions{}) })
		case *corev1.Service:
			status := o.Status
			o.Spec.Selector = nil
			created, err := core.Services(o.Namespace).Create(ctx, o, metav1.CreateOptions{})
			must(t, err)
			undos = append(undos, func() { _ = core.Services(o.Namespace).Delete(context.Background(), o.Name, metav1.DeleteOptions{}) })
			if len(status.LoadBalancer.Ingress) > 0 {
				created.Status = status
				_, err = core.Services(o.Namespace).UpdateStatus(ctx, created, metav1.UpdateOptions{})
				must(t, err)
			}
		case *corev1.Pod:
			status := o.Status
			created, err := core.Pods(o.Namespace).Create(ctx, o, metav1.CreateOptions{})
			must(t, err)
			undos = append(undos, func() {
				zero := int64(0)
				_ = core.Pods(o.Namespace).Delete(context.Background(), o.Name, metav1.DeleteOptions{GracePeriodSeconds: &zero})
			})
			created.Status = status
			_, err = core.Pods(o.Namespace).UpdateStatus(ctx, created, metav1.UpdateOptions{})
			must(t, err)
		case *discoveryv1.EndpointSlice:
			_, err := env.kube.DiscoveryV1().EndpointSlices(o.Namespace).Create(ctx, o, metav1.CreateOptions{})
			must(t, err)
			undos = append(undos, func() {
				_ = env.kube.DiscoveryV1().EndpointSlices(o.Namespace).Delete(context.Background(), o.Name, metav1.DeleteOptions{})
			})
		case *corev1.Namespace:
		default:
			t.Fatalf("scenario %s: no way to apply %T", scenario, o)
		}
	}
}

// dumpWithout dumps d, selectors emptied (dumpText), without the services
// named "namespace/hostname": the apiserver's own kubernetes Service,
// which the server keeps in default and the scenarios do not have.
func dumpWithout(t *testing.T, d registry.Discovery, services ...string) string {
	t.Helper()
	doc := registry.NewDump(d)
	doc.Services = slices.DeleteFunc(doc.Services, func(s registry.DumpService) bool {
		return slices.Contains(services, s.Namespace+"/"+s.Hostname)
	})
	return dumpText(t, doc)
}

// withoutSelectors returns a dump's text with every service's selector
// emptied: the scenarios' Services are written without theirs.
func withoutSelectors(t *testing.T, raw []byte) string {
	t.Helper()
	var doc registry.Dump
	must(t, json.Unmarshal(raw, &doc))
	return dumpText(t, &doc)
}

// dumpText writes a dump as the dump format does, selectors emptied.
func dumpText(t *testing.T, doc *registry.Dump) string {
	t.Helper()
	for i := range doc.Services {
		doc.Services[i].Selector = map[string]string{}
	}
	var b bytes.Buffer
	must(t, doc.WriteJSON(&b))
	return b.String()
}

func relabelNamespace(name string, labels map[string]string) {
	ns, err := env.kube.CoreV1().Namespaces().Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		return
	}
	ns.Labels = labels
	_, _ = env.kube.CoreV1().Namespaces().Update(context.Background(), ns, metav1.UpdateOptions{})
}
