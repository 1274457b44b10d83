package sources

import (
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/meshreg/meshreg/aggregate"
	"github.com/meshreg/meshreg/model"
)

// Flags are the source flags the examples share: -cluster, -f,
// -kubeconfig, -domain-suffix, -trust-domain, -namespace-selector,
// -mesh-networks, and the Multi-Cluster Services switches -mcs-discovery,
// -mcs-host and -mcs-cluster-local.
type Flags struct {
	Clusters          []Cluster
	DomainSuffix      string
	TrustDomain       string
	NamespaceSelector string
	MeshNetworks      string
	MCS               MCS
}

// Register defines the flags on fs.
func (f *Flags) Register(fs *flag.FlagSet) {
	fs.Var(clusterFlag{into: &f.Clusters}, "cluster",
		"manifests for a cluster, `NAME=PATH` (a YAML file or a directory); repeatable; the first is the config cluster, whose ServiceEntries are read; WorkloadEntries are read from every cluster")
	fs.Func("f", "manifests for one cluster named Kubernetes, `PATH`", func(v string) error {
		return clusterFlag{into: &f.Clusters, defaultName: "Kubernetes"}.Set(v)
	})
	fs.Var(clusterFlag{into: &f.Clusters, live: true, defaultName: "Kubernetes"}, "kubeconfig",
		"watch a live cluster, `[NAME=]PATH`; repeatable")
	fs.StringVar(&f.DomainSuffix, "domain-suffix", model.DefaultDomainSuffix, "service hostname `suffix`")
	fs.StringVar(&f.TrustDomain, "trust-domain", model.DefaultTrustDomain, "SPIFFE trust `domain`")
	fs.StringVar(&f.NamespaceSelector, "namespace-selector", "", "only namespaces whose labels match this label `selector`, e.g. mesh=on")
	fs.StringVar(&f.MeshNetworks, "mesh-networks", "", "Istio's meshNetworks YAML `FILE`: networks of endpoints, and network gateways")
	fs.BoolVar(&f.MCS.ServiceDiscovery, "mcs-discovery", false,
		"Multi-Cluster Services discovery (Istio's ENABLE_MCS_SERVICE_DISCOVERY): a Service's endpoints reach other clusters only where a ServiceExport exports it")
	fs.BoolVar(&f.MCS.Host, "mcs-host", false,
		"Multi-Cluster Services hosts (Istio's ENABLE_MCS_HOST; needs -mcs-discovery): each ServiceImport gives name.namespace.svc.clusterset.local")
	fs.BoolVar(&f.MCS.ClusterLocal, "mcs-cluster-local", false,
		"Multi-Cluster Services cluster-local mode (Istio's ENABLE_MCS_CLUSTER_LOCAL; needs -mcs-host): name.namespace.svc.cluster.local reaches its own cluster only")
}

// Config returns the Config the flags describe. Its error is a usage
// error, fit for a one-line message.
func (f *Flags) Config(logger *slog.Logger) (Config, error) {
	cfg := Config{
		Clusters:     f.Clusters,
		DomainSuffix: f.DomainSuffix,
		TrustDomain:  f.TrustDomain,
		MCS:          f.MCS,
		Logger:       logger,
	}
	switch {
	case f.MCS.Host && !f.MCS.ServiceDiscovery:
		return Config{}, errors.New("-mcs-host needs -mcs-discovery, as Istio's ENABLE_MCS_HOST needs ENABLE_MCS_SERVICE_DISCOVERY")
	case f.MCS.ClusterLocal && !f.MCS.Host:
		return Config{}, errors.New("-mcs-cluster-local needs -mcs-host, as Istio's ENABLE_MCS_CLUSTER_LOCAL needs ENABLE_MCS_HOST")
	}
	if f.NamespaceSelector != "" {
		ls, err := metav1.ParseToLabelSelector(f.NamespaceSelector)
		if err != nil {
			return Config{}, fmt.Errorf("-namespace-selector: %w", err)
		}
		cfg.NamespaceSelector = ls
	}
	if f.MeshNetworks != "" {
		data, err := os.ReadFile(f.MeshNetworks)
		if err != nil {
			return Config{}, fmt.Errorf("-mesh-networks: %w", err)
		}
		mn, err := aggregate.ParseMeshNetworks(data)
		if err != nil {
			return Config{}, fmt.Errorf("-mesh-networks %s: %w", f.MeshNetworks, err)
		}
		cfg.MeshNetworks = mn
	}
	return cfg, nil
}

// clusterFlag collects NAME=PATH values of one kind.
type clusterFlag struct {
	into *[]Cluster
	live bool
	// defaultName is used when the value has no NAME= part; "" requires one.
	defaultName string
}

func (f clusterFlag) String() string { return "" }

func (f clusterFlag) Set(v string) error {
	name, path, ok := strings.Cut(v, "=")
	if !ok {
		if f.defaultName == "" {
			return fmt.Errorf("want NAME=PATH, got %q", v)
		}
		name, path = f.defaultName, v
	}
	if name == "" || path == "" {
		return fmt.Errorf("want NAME=PATH, got %q", v)
	}
	c := Cluster{ID: model.ClusterID(name)}
	if f.live {
		c.Kubeconfig = path
	} else {
		c.Manifests = path
	}
	*f.into = append(*f.into, c)
	return nil
}
