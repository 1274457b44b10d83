package kube

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/scheme"

	"github.com/meshreg/meshreg/internal/golden"
	"github.com/meshreg/meshreg/model"
	"github.com/meshreg/meshreg/registry"
)

var update = flag.Bool("update", false, "rewrite the want.json goldens of the kube scenarios")

// scenarioOptions is the optional options.json of a scenario.
type scenarioOptions struct {
	DomainSuffix      string                `json:"domainSuffix"`
	TrustDomain       string                `json:"trustDomain"`
	NamespaceSelector *metav1.LabelSelector `json:"namespaceSelector"`
	Network           string                `json:"network"`
	NetworkCIDRs      map[string]string     `json:"networkCIDRs"`
	// WorkloadEntries are handed to HandleWorkload, as the serviceentry
	// controller would.
	WorkloadEntries []struct {
		Namespace string            `json:"namespace"`
		Name      string            `json:"name"`
		Address   string            `json:"address"`
		Labels    map[string]string `json:"labels"`
		Ports     map[string]uint32 `json:"ports"`
		Network   string            `json:"network"`
	} `json:"workloadEntries"`
}

// TestScenarios runs every testdata/scenarios/kube-* scenario: the
// objects of cluster-<ID>.yaml seed a fake clientset, a controller runs
// over them until synced, and its dump must equal want.json; once with
// the controller's own informers, once with a SharedInformerFactory's
// (Options.Informers). Run with -update to rewrite the goldens (from the
// first), then read every changed golden.
func TestScenarios(t *testing.T) {
	dirs, err := filepath.Glob("../testdata/scenarios/kube-*")
	mustNot(t, err)
	if len(dirs) == 0 {
		t.Fatal("no kube scenarios")
	}
	for _, dir := range dirs {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			golden.Check(t, filepath.Join(dir, "want.json"), []byte(runScenario(t, dir, false)), *update)
		})
		t.Run(filepath.Base(dir)+"-shared", func(t *testing.T) {
			golden.Check(t, filepath.Join(dir, "want.json"), []byte(runScenario(t, dir, true)), false)
		})
	}
}

var clusterFile = regexp.MustCompile(`^cluster-(.+)\.yaml$`)

// runScenario runs a controller over the scenario's single cluster file,
// on a SharedInformerFactory's informers when shared, and returns its
// dump.
func runScenario(t *testing.T, dir string, shared bool) string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "cluster-*.yaml"))
	mustNot(t, err)
	if len(files) != 1 {
		t.Fatalf("%s: want exactly one cluster-*.yaml, got %d", dir, len(files))
	}
	clusterID := clusterFile.FindStringSubmatch(filepath.Base(files[0]))[1]
	objs := loadManifest(t, files[0])
	opts := Options{ClusterID: model.ClusterID(clusterID)}
	var so scenarioOptions
	if raw, err := os.ReadFile(filepath.Join(dir, "options.json")); err == nil {
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.DisallowUnknownFields()
		mustNot(t, dec.Decode(&so))
		opts.DomainSuffix, opts.TrustDomain = so.DomainSuffix, so.TrustDomain
		opts.NamespaceSelector, opts.Network = so.NamespaceSelector, model.NetworkID(so.Network)
		for cidr, network := range so.NetworkCIDRs {
			if opts.NetworkCIDRs == nil {
				opts.NetworkCIDRs = map[netip.Prefix]model.NetworkID{}
			}
			opts.NetworkCIDRs[netip.MustParsePrefix(cidr)] = model.NetworkID(network)
		}
	}
	client := newFakeCluster(objs...)
	var factory informers.SharedInformerFactory
	if shared {
		factory = informers.NewSharedInformerFactory(client, 0)
		opts.Informers = FactoryInformers(factory)
	}
	c, err := New(client, opts)
	mustNot(t, err)
	for _, we := range so.WorkloadEntries {
		c.HandleWorkload(registry.WorkloadEvent{Type: model.EventAdd, Current: &model.WorkloadInstance{
			Kind: model.KindWorkloadEntry, Namespace: we.Namespace, Name: we.Name, PortMap: we.Ports,
			Endpoint: model.Endpoint{Addresses: []netip.Addr{netip.MustParseAddr(we.Address)}, Labels: we.Labels,
				Network: model.NetworkID(we.Network), TLSMode: model.ParseTLSMode(we.Labels[labelTLSMode]), Serving: true, WorkloadKind: model.KindWorkloadEntry, WorkloadNamespace: we.Namespace, WorkloadName: we.Name},
		}})
	}
	cctx, cancel := context.WithCancel(context.Background())
	if factory != nil {
		factory.Start(cctx.Done())
		defer factory.Shutdown()
	}
	done := make(chan error, 1)
	go func() { done <- c.Run(cctx) }()
	defer func() { cancel(); <-done }()
	waitFor(t, "scenario synced", c.HasSynced)
	return dump(t, c)
}

// loadManifest decodes a multi-document YAML file of Kubernetes objects.
// A document of a kind the client-go scheme does not know fails the test.
func loadManifest(t *testing.T, path string) []runtime.Object {
	t.Helper()
	raw, err := os.ReadFile(path)
	mustNot(t, err)
	objs, err := decodeManifest(raw)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return objs
}

// decodeManifest splits YAML on document separators and decodes each
// non-empty document with client-go's universal deserializer.
func decodeManifest(raw []byte) ([]runtime.Object, error) {
	decoder := scheme.Codecs.UniversalDeserializer()
	var out []runtime.Object
	for i, doc := range regexp.MustCompile(`(?m)^---\s*$`).Split(string(raw), -1) {
		if strings.TrimSpace(stripComments(doc)) == "" {
			continue
		}
		obj, gvk, err := decoder.Decode([]byte(doc), nil, nil)
		if err != nil {
			return nil, fmt.Errorf("document %d: %w", i, err)
		}
		switch gvk.Kind {
		case "Service", "EndpointSlice", "Pod", "Node", "Namespace":
		default:
			return nil, fmt.Errorf("document %d: unsupported kind %s", i, gvk.Kind)
		}
		out = append(out, obj)
	}
	return out, nil
}

func stripComments(doc string) string {
	var b strings.Builder
	for line := range strings.SplitSeq(doc, "\n") {
		if !strings.HasPrefix(strings.TrimSpace(line), "#") {
			b.WriteString(line)
			b.WriteByte('\n')
		}
	}
	return b.String()
}

func TestDecodeManifestRejectsUnknownKinds(t *testing.T) {
	_, err := decodeManifest([]byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n"))
	if err == nil || !strings.Contains(err.Error(), "unsupported kind ConfigMap") {
		t.Errorf("err = %v", err)
	}
	_, err = decodeManifest([]byte("apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: x\n"))
	if err == nil {
		t.Error("unknown group decoded")
	}
}
