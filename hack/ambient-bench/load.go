package main

// Loading of the world: the YAML file is read and decoded one document at a
// time (client-go's UniversalDeserializer) on one goroutine while another
// creates each object in Istio's fake client, so neither the file's text nor
// a second copy of the objects is held: the fake client's object tracker
// (standing in for the API server) is the only holder.

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"sort"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/kubernetes/scheme"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"istio.io/istio/pilot/pkg/config/kube/gatewaycommon"
	kubelib "istio.io/istio/pkg/kube"
)

// world is what the benchmark keeps of the loaded objects: counts, and the
// names of the Pods and Services it changes later.
type world struct {
	objects  int
	byKind   map[string]int
	pods     []types.NamespacedName // every Pod, in file order
	services []types.NamespacedName // every Service, in file order
	// workloadPods counts the Pods Istio makes a workload of: with an IP and
	// not terminated (Succeeded / Failed).
	workloadPods int
}

// load streams the manifests of path into the fake client.
func load(c kubelib.Client, path string) (*world, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()

	type decoded struct {
		obj runtime.Object
		doc int
	}
	objs := make(chan decoded, 256)
	errc := make(chan error, 1)
	done := make(chan struct{})
	defer close(done)
	go func() {
		defer close(objs)
		reader := utilyaml.NewYAMLReader(bufio.NewReaderSize(f, 1<<20))
		deser := scheme.Codecs.UniversalDeserializer()
		for i := 0; ; i++ {
			doc, err := reader.Read()
			if err == io.EOF {
				return
			}
			if err != nil {
				errc <- fmt.Errorf("%s: document %d: %v", path, i, err)
				return
			}
			if len(bytes.TrimSpace(doc)) == 0 {
				continue
			}
			obj, _, err := deser.Decode(doc, nil, nil)
			if err != nil {
				errc <- fmt.Errorf("%s: document %d: %v", path, i, err)
				return
			}
			select {
			case objs <- decoded{obj, i}:
			case <-done:
				return
			}
		}
	}()

	w := &world{byKind: map[string]int{}}
	ctx := context.Background()
	for d := range objs {
		if err := w.create(ctx, c, d.obj); err != nil {
			return nil, fmt.Errorf("%s: document %d: %v", path, d.doc, err)
		}
		if w.objects%10000 == 0 {
			verbosef("loaded %d objects", w.objects)
		}
	}
	select {
	case err := <-errc:
		return nil, err
	default:
	}
	return w, nil
}

// create writes one object through the fake client, as kubectl apply would.
func (w *world) create(ctx context.Context, c kubelib.Client, obj runtime.Object) error {
	m, ok := obj.(metav1.Object)
	if !ok {
		return fmt.Errorf("unsupported object %T", obj)
	}
	kind := ""
	var err error
	switch o := obj.(type) {
	case *corev1.Namespace:
		kind = "Namespace"
	case *corev1.Node:
		kind = "Node"
	case *corev1.Service:
		kind = "Service"
	case *corev1.Pod:
		kind = "Pod"
		if o.Status.PodIP != "" && o.Status.Phase != corev1.PodSucceeded && o.Status.Phase != corev1.PodFailed {
			w.workloadPods++
		}
	case *discoveryv1.EndpointSlice:
		kind = "EndpointSlice"
	default:
		return fmt.Errorf("unsupported kind %s (want Namespace, Node, Service, Pod, EndpointSlice)",
			obj.GetObjectKind().GroupVersionKind().Kind)
	}
	if kind != "Namespace" && kind != "Node" && m.GetNamespace() == "" {
		m.SetNamespace(metav1.NamespaceDefault)
	}
	if m.GetUID() == "" {
		// The API server gives every object a UID.
		m.SetUID(objectUID(kind, m.GetNamespace(), m.GetName()))
	}
	nn := types.NamespacedName{Namespace: m.GetNamespace(), Name: m.GetName()}
	switch o := obj.(type) {
	case *corev1.Namespace:
		_, err = c.Kube().CoreV1().Namespaces().Create(ctx, o, metav1.CreateOptions{})
	case *corev1.Node:
		_, err = c.Kube().CoreV1().Nodes().Create(ctx, o, metav1.CreateOptions{})
	case *corev1.Service:
		_, err = c.Kube().CoreV1().Services(o.Namespace).Create(ctx, o, metav1.CreateOptions{})
		w.services = append(w.services, nn)
	case *corev1.Pod:
		_, err = c.Kube().CoreV1().Pods(o.Namespace).Create(ctx, o, metav1.CreateOptions{})
		w.pods = append(w.pods, nn)
	case *discoveryv1.EndpointSlice:
		_, err = c.Kube().DiscoveryV1().EndpointSlices(o.Namespace).Create(ctx, o, metav1.CreateOptions{})
	}
	if err != nil {
		return err
	}
	w.objects++
	w.byKind[kind]++
	return nil
}

// createDefaultGatewayClasses does what istiod's gateway ClassController does
// in its cluster: create the built-in GatewayClasses (istio, istio-remote,
// istio-waypoint, ...). In a running mesh they exist before istiod restarts,
// so they are created with the world.
func createDefaultGatewayClasses(c kubelib.Client) error {
	infos := gatewaycommon.GetClassInfos()
	classes := gatewaycommon.GetAllClasses()
	names := make([]string, 0, len(classes))
	for n := range classes {
		names = append(names, string(n))
	}
	sort.Strings(names)
	for _, name := range names {
		info, ok := infos[classes[gatewayv1.ObjectName(name)]]
		if !ok {
			continue
		}
		desc := info.Description
		gc := &gatewayv1.GatewayClass{
			ObjectMeta: metav1.ObjectMeta{Name: name, UID: objectUID("GatewayClass", "", name)},
			Spec: gatewayv1.GatewayClassSpec{
				ControllerName: gatewayv1.GatewayController(info.Controller),
				Description:    &desc,
			},
		}
		if _, err := c.GatewayAPI().GatewayV1().GatewayClasses().Create(context.Background(), gc, metav1.CreateOptions{}); err != nil {
			return err
		}
	}
	return nil
}

// objectUID is a stable UID for an object that has none.
func objectUID(kind, ns, name string) types.UID {
	h := sha256.Sum256([]byte(kind + "/" + ns + "/" + name))
	x := hex.EncodeToString(h[:16])
	return types.UID(x[0:8] + "-" + x[8:12] + "-" + x[12:16] + "-" + x[16:20] + "-" + x[20:32])
}
