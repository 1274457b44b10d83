package main

// Loading of the manifests (adapted from shared/oracle/istio-dump/load.go). Kubernetes
// core objects are decoded with client-go's scheme; Gateway API objects into
// sigs.k8s.io/gateway-api types (the status is kept: network gateways and waypoints
// come from status.addresses); ServiceEntries and WorkloadEntries into Istio's
// client-go types, which is what the ambient index watches (through the config
// cluster's kube client, not through a config store).

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/kubernetes/scheme"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
	"sigs.k8s.io/yaml"

	networkingclient "istio.io/client-go/pkg/apis/networking/v1"
	"istio.io/istio/pilot/pkg/config/kube/crd"
	"istio.io/istio/pkg/config"
	"istio.io/istio/pkg/config/schema/collections"
	"istio.io/istio/pkg/config/schema/gvk"
	"istio.io/istio/pkg/config/schema/gvr"
	"istio.io/istio/pkg/config/schema/resource"
)

// Object kinds, in the order they are created.
const (
	KindNamespace     = "Namespace"
	KindNode          = "Node"
	KindGatewayClass  = "GatewayClass"
	KindService       = "Service"
	KindServiceEntry  = "ServiceEntry"
	KindWorkloadEntry = "WorkloadEntry"
	KindPod           = "Pod"
	KindEndpointSlice = "EndpointSlice"
	KindGateway       = "Gateway"
)

var createOrder = []string{KindNamespace, KindNode, KindGatewayClass, KindService, KindServiceEntry, KindWorkloadEntry,
	KindPod, KindEndpointSlice, KindGateway}

// inputObject is one document of a cluster's input.
type inputObject struct {
	Kind   string
	Source string // file#doc-index, for messages
	Obj    runtime.Object
	// For ServiceEntry / WorkloadEntry: Istio's internal form, used for validation.
	Istio  *config.Config
	Schema resource.Schema
}

func (o inputObject) meta() metav1.Object { return o.Obj.(metav1.Object) }

type clusterInput struct {
	ID      string
	Path    string
	Objects []inputObject
}

// listYAMLFiles returns PATH itself, or the *.yaml / *.yml / *.json files under the directory PATH, sorted.
func listYAMLFiles(path string) ([]string, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !st.IsDir() {
		return []string{path}, nil
	}
	var out []string
	err = filepath.WalkDir(path, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		switch strings.ToLower(filepath.Ext(p)) {
		case ".yaml", ".yml", ".json":
			out = append(out, p)
		}
		return nil
	})
	sort.Strings(out)
	return out, err
}

func loadCluster(id, path, domainSuffix string) (*clusterInput, error) {
	files, err := listYAMLFiles(path)
	if err != nil {
		return nil, err
	}
	ci := &clusterInput{ID: id, Path: path}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		reader := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
		for i := 0; ; i++ {
			doc, err := reader.Read()
			if err == io.EOF {
				break
			}
			if err != nil {
				return nil, fmt.Errorf("%s: document %d: %v", f, i, err)
			}
			if len(bytes.TrimSpace(doc)) == 0 {
				continue
			}
			src := fmt.Sprintf("%s#%d", filepath.Base(f), i)
			obj, err := decodeDocument(doc, src, domainSuffix)
			if err != nil {
				return nil, fmt.Errorf("%s: %v", src, err)
			}
			if obj == nil {
				continue // empty document (only comments)
			}
			if obj.Kind == "" {
				warnf("cluster %s: %s: unsupported object ignored", id, src)
				continue
			}
			ci.Objects = append(ci.Objects, *obj)
		}
	}
	return ci, nil
}

func decodeDocument(doc []byte, src, domainSuffix string) (*inputObject, error) {
	var tm metav1.TypeMeta
	if err := yaml.Unmarshal(doc, &tm); err != nil {
		return nil, err
	}
	if tm.Kind == "" && tm.APIVersion == "" {
		var anything map[string]any
		if err := yaml.Unmarshal(doc, &anything); err != nil {
			return nil, err
		}
		if len(anything) == 0 {
			return nil, nil
		}
		return nil, fmt.Errorf("document has no apiVersion/kind")
	}
	group, version, _ := strings.Cut(tm.APIVersion, "/")
	if version == "" {
		version, group = group, "" // core group ("v1")
	}
	if strings.HasSuffix(group, "istio.io") {
		return decodeIstio(doc, tm, group, version, src, domainSuffix)
	}
	if group == gvr.KubernetesGateway.Group {
		return decodeGatewayAPI(doc, tm, version, src)
	}
	switch tm.Kind {
	case KindNamespace, KindNode, KindService, KindPod, KindEndpointSlice:
	default:
		return &inputObject{Source: src}, nil
	}
	obj, gvkk, err := scheme.Codecs.UniversalDeserializer().Decode(doc, nil, nil)
	if err != nil {
		return nil, err
	}
	if gvkk.Kind == KindEndpointSlice && gvkk.Group != "discovery.k8s.io" {
		return &inputObject{Source: src}, nil
	}
	switch o := obj.(type) {
	case *corev1.Namespace, *corev1.Node:
	case *corev1.Service:
		defaultNamespace(&o.ObjectMeta)
	case *corev1.Pod:
		defaultNamespace(&o.ObjectMeta)
	case *discoveryv1.EndpointSlice:
		defaultNamespace(&o.ObjectMeta)
	default:
		return &inputObject{Source: src}, nil
	}
	return &inputObject{Kind: gvkk.Kind, Source: src, Obj: obj}, nil
}

// decodeGatewayAPI reads gateway.networking.k8s.io/v1 Gateways and GatewayClasses, status included.
func decodeGatewayAPI(doc []byte, tm metav1.TypeMeta, version, src string) (*inputObject, error) {
	if version != gvr.KubernetesGateway.Version {
		return &inputObject{Source: src}, nil
	}
	switch tm.Kind {
	case KindGateway:
		gw := &gatewayv1.Gateway{}
		if err := yaml.UnmarshalStrict(doc, gw); err != nil {
			return nil, err
		}
		defaultNamespace(&gw.ObjectMeta)
		return &inputObject{Kind: KindGateway, Source: src, Obj: gw}, nil
	case KindGatewayClass:
		gc := &gatewayv1.GatewayClass{}
		if err := yaml.UnmarshalStrict(doc, gc); err != nil {
			return nil, err
		}
		return &inputObject{Kind: KindGatewayClass, Source: src, Obj: gc}, nil
	}
	return &inputObject{Source: src}, nil
}

func defaultNamespace(m *metav1.ObjectMeta) {
	if m.Namespace == "" {
		m.Namespace = metav1.NamespaceDefault
	}
}

// decodeIstio reads a ServiceEntry or WorkloadEntry of any served version (v1, v1beta1,
// v1alpha3: the same spec) into Istio's networking.istio.io/v1 client-go type, and also into
// Istio's internal config.Config (crd.ConvertObject, as Istio's CRD client does) for validation.
func decodeIstio(doc []byte, tm metav1.TypeMeta, group, version, src, domainSuffix string) (*inputObject, error) {
	want := config.GroupVersionKind{Group: group, Version: version, Kind: tm.Kind}
	s, ok := collections.Pilot.FindByGroupVersionAliasesKind(want)
	if !ok {
		return &inputObject{Source: src}, nil
	}
	if s.GroupVersionKind() != gvk.ServiceEntry && s.GroupVersionKind() != gvk.WorkloadEntry {
		return &inputObject{Source: src}, nil
	}
	js, err := yaml.YAMLToJSON(doc)
	if err != nil {
		return nil, err
	}
	var ik crd.IstioKind
	if err := json.Unmarshal(js, &ik); err != nil {
		return nil, err
	}
	if ik.Namespace == "" {
		ik.Namespace = metav1.NamespaceDefault
	}
	if len(ik.Spec) == 0 {
		ik.Spec = json.RawMessage("{}")
	}
	cfg, err := crd.ConvertObject(s, &ik, domainSuffix)
	if err != nil {
		return nil, err
	}
	var obj runtime.Object
	switch s.Kind() {
	case KindServiceEntry:
		se := &networkingclient.ServiceEntry{}
		if err := json.Unmarshal(js, se); err != nil {
			return nil, err
		}
		se.APIVersion = gvk.ServiceEntry.GroupVersion()
		defaultNamespace(&se.ObjectMeta)
		obj = se
	case KindWorkloadEntry:
		we := &networkingclient.WorkloadEntry{}
		if err := json.Unmarshal(js, we); err != nil {
			return nil, err
		}
		we.APIVersion = gvk.WorkloadEntry.GroupVersion()
		defaultNamespace(&we.ObjectMeta)
		obj = we
	}
	return &inputObject{Kind: s.Kind(), Source: src, Obj: obj, Istio: cfg, Schema: s}, nil
}
