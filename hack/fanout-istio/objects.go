package main

// Reading Kubernetes objects from multi-document YAML: the world file and the
// bodies of POST /apply.

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/yaml"
)

// supportedKinds are the object kinds a world (and an apply) may hold.
var supportedKinds = map[schema.GroupVersionKind]bool{
	corev1.SchemeGroupVersion.WithKind("Namespace"):          true,
	corev1.SchemeGroupVersion.WithKind("Service"):            true,
	corev1.SchemeGroupVersion.WithKind("Pod"):                true,
	discoveryv1.SchemeGroupVersion.WithKind("EndpointSlice"): true,
}

// decodeObjects reads the Kubernetes objects of a multi-document YAML stream
// with client-go's UniversalDeserializer. Empty documents are skipped; a kind
// other than Namespace, Service, Pod (v1) or EndpointSlice
// (discovery.k8s.io/v1) is an error naming it. A namespaced object without a
// namespace gets "default", as kubectl would give it.
func decodeObjects(r io.Reader) ([]runtime.Object, error) {
	decode := scheme.Codecs.UniversalDeserializer().Decode
	reader := utilyaml.NewYAMLReader(bufio.NewReader(r))
	var out []runtime.Object
	for i := 1; ; i++ {
		doc, err := reader.Read()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("document %d: %v", i, err)
		}
		// One YAML parse per document: to JSON, which the rest reads.
		js, err := yaml.YAMLToJSON(doc)
		if err != nil {
			return nil, fmt.Errorf("document %d: %v", i, err)
		}
		if js = bytes.TrimSpace(js); bytes.Equal(js, []byte("null")) || bytes.Equal(js, []byte("{}")) {
			continue // empty, or only comments
		}
		var tm metav1.TypeMeta
		if err := json.Unmarshal(js, &tm); err != nil {
			return nil, fmt.Errorf("document %d: %v", i, err)
		}
		gvk := tm.GroupVersionKind()
		if !supportedKinds[gvk] {
			return nil, fmt.Errorf("document %d: unsupported kind %q (apiVersion %q): want Namespace, Service, Pod (v1) or EndpointSlice (discovery.k8s.io/v1)",
				i, tm.Kind, tm.APIVersion)
		}
		obj, _, err := decode(js, nil, nil)
		if err != nil {
			return nil, fmt.Errorf("document %d (%s): %v", i, tm.Kind, err)
		}
		m, ok := obj.(metav1.Object)
		if !ok {
			return nil, fmt.Errorf("document %d (%s): not an object", i, tm.Kind)
		}
		if m.GetName() == "" {
			return nil, fmt.Errorf("document %d (%s): metadata.name is required", i, tm.Kind)
		}
		if _, isNamespace := obj.(*corev1.Namespace); !isNamespace && m.GetNamespace() == "" {
			m.SetNamespace(metav1.NamespaceDefault)
		}
		// Keep apiVersion and kind on the object: Istio's fake client picks
		// the resource of a preloaded object from them.
		obj.GetObjectKind().SetGroupVersionKind(gvk)
		out = append(out, obj)
	}
}

// describe names an object for messages: "Kind namespace/name".
func describe(obj runtime.Object) string {
	kind := obj.GetObjectKind().GroupVersionKind().Kind
	m, ok := obj.(metav1.Object)
	if !ok {
		return kind
	}
	if m.GetNamespace() == "" {
		return kind + " " + m.GetName()
	}
	return kind + " " + m.GetNamespace() + "/" + m.GetName()
}
