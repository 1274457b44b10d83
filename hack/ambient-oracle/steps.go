package main

// Change sequences: after the first state, each -step brings some clusters
// to new manifests through the running index, object by object, as an API
// server would: what is new is created, what changed updated (its status
// too), what is gone deleted.

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	networkingclient "istio.io/client-go/pkg/apis/networking/v1"
)

// stepFlags are -step DIR=OUT flags: a step's directory, holding
// cluster-<id>.yaml for each cluster it changes (that cluster's whole
// manifests after the step), and the file its document is written to.
type stepFlags []string

func (s *stepFlags) String() string     { return strings.Join(*s, ",") }
func (s *stepFlags) Set(v string) error { *s = append(*s, v); return nil }

// step is one parsed -step.
type step struct {
	dir, out string
	clusters []*clusterInput
}

func parseStep(v, domainSuffix string) (*step, error) {
	dir, out, ok := strings.Cut(v, "=")
	if !ok || dir == "" || out == "" {
		return nil, fmt.Errorf("bad -step %q, want DIR=OUT", v)
	}
	files, err := filepath.Glob(filepath.Join(dir, "cluster-*.yaml"))
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("-step %s: no cluster-*.yaml", dir)
	}
	st := &step{dir: dir, out: out}
	for _, f := range files {
		id := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(f), "cluster-"), ".yaml")
		in, err := loadCluster(id, f, domainSuffix)
		if err != nil {
			return nil, err
		}
		st.clusters = append(st.clusters, in)
	}
	return st, nil
}

// objectKey names an input object within its cluster.
type objectKey struct{ kind, namespace, name string }

func keyOfInput(o inputObject) objectKey {
	m := o.meta()
	return objectKey{o.Kind, m.GetNamespace(), m.GetName()}
}

// runStep brings each cluster the step names to its new manifests.
func (w *world) runStep(st *step) error {
	for _, in := range st.clusters {
		ci := slices.IndexFunc(w.clusters, func(kc *kubeCluster) bool { return kc.id == in.ID })
		if ci < 0 {
			return fmt.Errorf("-step %s: cluster %s is not one of the -cluster flags", st.dir, in.ID)
		}
		if err := w.reconcile(ci, in); err != nil {
			return fmt.Errorf("-step %s: cluster %s: %v", st.dir, in.ID, err)
		}
	}
	return nil
}

// reconcile makes cluster ci hold exactly in's objects: deletions first,
// kinds in the reverse of createOrder, then creations and updates in
// createOrder.
func (w *world) reconcile(ci int, in *clusterInput) error {
	kc := w.clusters[ci]
	old := map[objectKey]inputObject{}
	for _, o := range kc.input.Objects {
		old[keyOfInput(o)] = o
	}
	next := map[objectKey]inputObject{}
	for _, o := range in.Objects {
		m := o.meta()
		if m.GetUID() == "" {
			m.SetUID(objectUID(kc.id, o.Kind, m.GetNamespace(), m.GetName()))
		}
		next[keyOfInput(o)] = o
	}
	for i := len(createOrder) - 1; i >= 0; i-- {
		for k, o := range old {
			if _, keep := next[k]; keep || k.kind != createOrder[i] {
				continue
			}
			verbosef("step: cluster %s: delete %s %s/%s", kc.id, k.kind, k.namespace, k.name)
			// Not found: validation refused it, it was never created.
			if err := w.delete(kc, o); err != nil && !apierrors.IsNotFound(err) {
				return fmt.Errorf("delete %s %s/%s: %v", k.kind, k.namespace, k.name, err)
			}
		}
	}
	for _, kind := range createOrder {
		for _, o := range in.Objects {
			k := keyOfInput(o)
			if k.kind != kind {
				continue
			}
			prev, had := old[k]
			var err error
			switch {
			case !had:
				verbosef("step: cluster %s: create %s %s/%s", kc.id, k.kind, k.namespace, k.name)
				err = w.create(ci, kc, o)
			case !reflect.DeepEqual(prev.Obj, o.Obj):
				verbosef("step: cluster %s: update %s %s/%s", kc.id, k.kind, k.namespace, k.name)
				if err = w.update(ci, kc, o); apierrors.IsNotFound(err) {
					err = w.create(ci, kc, o) // validation refused its earlier version
				}
			}
			if err != nil {
				return fmt.Errorf("%s: %v", o.Source, err)
			}
		}
	}
	kc.input = in
	return nil
}

// update writes an object's new version, and its status when it has one.
// A version Istio's validation refuses is not created (see create), so
// here the object is deleted: in both cases the object as the step writes
// it does not exist for Istio, as it is not used by meshreg's registry,
// which validates what it reads (ARCHITECTURE.md decision 9).
func (w *world) update(ci int, kc *kubeCluster, o inputObject) error {
	if o.Istio != nil && w.validate {
		if _, err := o.Schema.ValidateConfig(*o.Istio); err != nil {
			warnf("cluster %s: %s rejected by Istio validation (deleted): %v", kc.id, o.Source, err)
			if err := w.delete(kc, o); err != nil && !apierrors.IsNotFound(err) {
				return err
			}
			return nil
		}
	}
	ctx := context.Background()
	c := kc.client
	var err error
	switch obj := o.Obj.(type) {
	case *corev1.Namespace:
		_, err = c.Kube().CoreV1().Namespaces().Update(ctx, obj, metav1.UpdateOptions{})
	case *corev1.Node:
		_, err = c.Kube().CoreV1().Nodes().Update(ctx, obj, metav1.UpdateOptions{})
	case *corev1.Service:
		_, err = c.Kube().CoreV1().Services(obj.Namespace).Update(ctx, obj, metav1.UpdateOptions{})
	case *corev1.Pod:
		cl := c.Kube().CoreV1().Pods(obj.Namespace)
		if _, err = cl.Update(ctx, obj, metav1.UpdateOptions{}); err == nil {
			_, err = cl.UpdateStatus(ctx, obj, metav1.UpdateOptions{})
		}
	case *discoveryv1.EndpointSlice:
		_, err = c.Kube().DiscoveryV1().EndpointSlices(obj.Namespace).Update(ctx, obj, metav1.UpdateOptions{})
	case *gatewayv1.GatewayClass:
		_, err = c.GatewayAPI().GatewayV1().GatewayClasses().Update(ctx, obj, metav1.UpdateOptions{})
	case *gatewayv1.Gateway:
		cl := c.GatewayAPI().GatewayV1().Gateways(obj.Namespace)
		if _, err = cl.Update(ctx, obj, metav1.UpdateOptions{}); err == nil {
			_, err = cl.UpdateStatus(ctx, obj, metav1.UpdateOptions{})
		}
	case *networkingclient.ServiceEntry:
		cl := c.Istio().NetworkingV1().ServiceEntries(obj.Namespace)
		if _, err = cl.Update(ctx, obj, metav1.UpdateOptions{}); err == nil {
			_, err = cl.UpdateStatus(ctx, obj, metav1.UpdateOptions{})
		}
	case *networkingclient.WorkloadEntry:
		cl := c.Istio().NetworkingV1().WorkloadEntries(obj.Namespace)
		if _, err = cl.Update(ctx, obj, metav1.UpdateOptions{}); err == nil {
			_, err = cl.UpdateStatus(ctx, obj, metav1.UpdateOptions{})
		}
	default:
		err = fmt.Errorf("unsupported object %T", obj)
	}
	return err
}

// delete deletes an object.
func (w *world) delete(kc *kubeCluster, o inputObject) error {
	ctx := context.Background()
	c := kc.client
	m := o.meta()
	ns, name, opts := m.GetNamespace(), m.GetName(), metav1.DeleteOptions{}
	switch o.Obj.(type) {
	case *corev1.Namespace:
		return c.Kube().CoreV1().Namespaces().Delete(ctx, name, opts)
	case *corev1.Node:
		return c.Kube().CoreV1().Nodes().Delete(ctx, name, opts)
	case *corev1.Service:
		return c.Kube().CoreV1().Services(ns).Delete(ctx, name, opts)
	case *corev1.Pod:
		return c.Kube().CoreV1().Pods(ns).Delete(ctx, name, opts)
	case *discoveryv1.EndpointSlice:
		return c.Kube().DiscoveryV1().EndpointSlices(ns).Delete(ctx, name, opts)
	case *gatewayv1.GatewayClass:
		return c.GatewayAPI().GatewayV1().GatewayClasses().Delete(ctx, name, opts)
	case *gatewayv1.Gateway:
		return c.GatewayAPI().GatewayV1().Gateways(ns).Delete(ctx, name, opts)
	case *networkingclient.ServiceEntry:
		return c.Istio().NetworkingV1().ServiceEntries(ns).Delete(ctx, name, opts)
	case *networkingclient.WorkloadEntry:
		return c.Istio().NetworkingV1().WorkloadEntries(ns).Delete(ctx, name, opts)
	}
	return fmt.Errorf("unsupported object %T", o.Obj)
}

// writeDoc writes a document to a file, "-" being stdout.
func writeDoc(path string, data []byte) error {
	if path == "-" {
		_, err := os.Stdout.Write(data)
		return err
	}
	return os.WriteFile(path, data, 0o644)
}
