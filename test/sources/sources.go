package sources

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	gatewayclient "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned"
	mcsclient "sigs.k8s.io/mcs-api/pkg/client/clientset/versioned"

	"github.com/meshreg/meshreg/address"
	"github.com/meshreg/meshreg/aggregate"
	"github.com/meshreg/meshreg/internal/manifest"
	"github.com/meshreg/meshreg/kube"
	"github.com/meshreg/meshreg/model"
	"github.com/meshreg/meshreg/registry"
)

// Cluster is one cluster's source: manifests (a YAML file or a directory)
// or a live cluster reached through a kubeconfig. Exactly one of Manifests
// and Kubeconfig is set.
type Cluster struct {
	ID         model.ClusterID
	Manifests  string
	Kubeconfig string
	// FS, when set, holds Manifests (a path within it) instead of the
	// operating system: for manifests embedded in a program.
	FS fs.FS
}

// Config says what to build. The first cluster is the config cluster:
// its ServiceEntries and WorkloadEntries feed the serviceentry controller,
// which carries its cluster ID. Every other cluster's WorkloadEntries feed
// a WorkloadEntry registry of that cluster (serviceentry's
// WorkloadEntriesOnly), as istiod reads them; their ServiceEntries are
// ignored.
type Config struct {
	Clusters          []Cluster
	DomainSuffix      string
	TrustDomain       string
	NamespaceSelector *metav1.LabelSelector
	// ServiceEntryVisibility is the serviceentry registries'
	// Options.Visibility.
	ServiceEntryVisibility *model.ServiceEntryVisibility
	// MeshNetworks is the aggregate's Options.MeshNetworks.
	MeshNetworks *model.MeshNetworks
	// MCS switches Kubernetes Multi-Cluster Services on in every
	// cluster's kube controller (kube.MCSOptions, with the cluster's MCS
	// API client).
	MCS    MCS
	Logger *slog.Logger
	// Loader reads manifests; the zero value has the loader's defaults.
	Loader manifest.Loader
	// Metrics is every registry's Options.Metrics; nil for none.
	Metrics prometheus.Registerer
	// SharedInformers feeds each manifest cluster's kube controller from
	// a client-go SharedInformerFactory over the cluster's fake API
	// (kube.Options.Informers), as a control plane that shares its
	// informers would, instead of the controller's own informers.
	SharedInformers bool
}

// Built is a registry built from sources.
type Built struct {
	// Aggregate merges the clusters' registries; run it.
	Aggregate *aggregate.Controller
	// Discovery is Aggregate, with the problems found while loading
	// manifests among its diagnostics.
	Discovery registry.Discovery
	// Manifests holds, per manifest cluster, the fake API its registry
	// watches, so that changed manifests can be applied.
	Manifests map[model.ClusterID]*ManifestCluster
	// kubes holds each cluster's kube controller, for its network;
	// configKube and configGateway are the config cluster's clients.
	kubes         map[model.ClusterID]*kube.Controller
	configKube    kubernetes.Interface
	configGateway gatewayclient.Interface
	configID      model.ClusterID
}

// AddressIndex returns the address index (Istio ambient's) over the
// aggregate, with the first cluster as its config cluster. Run it.
func (b *Built) AddressIndex(opts address.Options) (*address.Index, error) {
	opts.ConfigCluster = b.configID
	return address.New(b.Aggregate, opts)
}

// MCS are the Multi-Cluster Services switches of kube.MCSOptions.
type MCS struct {
	ServiceDiscovery, Host, ClusterLocal bool
}

// ErrUsage is wrapped by errors in the Config itself.
var ErrUsage = errors.New("invalid sources")

// Build loads the manifests and connects to the clusters, and returns the
// aggregate over them. Documents that cannot be decoded become
// diagnostics; a file that cannot be read, a bad kubeconfig or an invalid
// Config is an error.
func Build(cfg Config) (*Built, error) {
	if len(cfg.Clusters) == 0 {
		return nil, fmt.Errorf("%w: no cluster given", ErrUsage)
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	seen := map[model.ClusterID]bool{}
	for _, c := range cfg.Clusters {
		switch {
		case c.ID == "":
			return nil, fmt.Errorf("%w: a cluster has no name", ErrUsage)
		case seen[c.ID]:
			return nil, fmt.Errorf("%w: cluster %s given twice", ErrUsage, c.ID)
		case (c.Manifests == "") == (c.Kubeconfig == ""):
			return nil, fmt.Errorf("%w: cluster %s needs exactly one of manifests or a kubeconfig", ErrUsage, c.ID)
		}
		seen[c.ID] = true
	}

	agg, err := aggregate.New(aggregate.Options{Logger: cfg.Logger, MeshNetworks: cfg.MeshNetworks, Metrics: cfg.Metrics})
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrUsage, err)
	}
	b := &Built{Aggregate: agg, Manifests: map[model.ClusterID]*ManifestCluster{}, kubes: map[model.ClusterID]*kube.Controller{}}
	for i, c := range cfg.Clusters {
		config := i == 0
		var regs []registry.Registry
		var err error
		if c.Manifests != "" {
			var mc *ManifestCluster
			mc, err = newManifestCluster(cfg, c, config)
			if err == nil {
				b.Manifests[c.ID] = mc
				regs = mc.registries()
				if config {
					b.configKube, b.configGateway = mc.client, mc.gateways
				}
			}
		} else {
			var lc *live
			lc, err = liveCluster(cfg, c, config)
			if err == nil {
				regs = lc.regs
				if config {
					b.configKube, b.configGateway = lc.kube, lc.gateway
				}
			}
		}
		if err != nil {
			return nil, err
		}
		if config {
			b.configID = c.ID
		}
		for _, r := range regs {
			if k, ok := r.(*kube.Controller); ok {
				b.kubes[c.ID] = k
			}
		}
		for _, r := range regs {
			if err := b.Aggregate.Add(r); err != nil {
				return nil, fmt.Errorf("cluster %s: %w", c.ID, err)
			}
		}
	}
	b.Discovery = withDiagnostics{Discovery: b.Aggregate, extra: b.manifestDiagnostics}
	return b, nil
}

// manifestDiagnostics returns the problems found in the manifests of every
// manifest cluster, as last loaded.
func (b *Built) manifestDiagnostics() []model.Diagnostic {
	var out []model.Diagnostic
	for _, mc := range b.Manifests {
		out = append(out, mc.Diagnostics()...)
	}
	return out
}

func kubeOptions(cfg Config, id model.ClusterID, config bool, gc gatewayclient.Interface, mc mcsclient.Interface) kube.Options {
	o := kube.Options{
		ClusterID:         id,
		DomainSuffix:      cfg.DomainSuffix,
		TrustDomain:       cfg.TrustDomain,
		NamespaceSelector: cfg.NamespaceSelector,
		Logger:            cfg.Logger.With("cluster", string(id)),
		GatewayClient:     gc,
		ConfigCluster:     config,
		Metrics:           cfg.Metrics,
	}
	if cfg.MCS.ServiceDiscovery {
		o.MCS = kube.MCSOptions{Client: mc, ServiceDiscovery: true, Host: cfg.MCS.Host, ClusterLocal: cfg.MCS.ClusterLocal}
	}
	return o
}

// live is a live cluster's registries and clients.
type live struct {
	regs    []registry.Registry
	kube    kubernetes.Interface
	gateway gatewayclient.Interface
}

// liveCluster connects to a cluster through its kubeconfig.
func liveCluster(cfg Config, c Cluster, config bool) (*live, error) {
	rc, err := clientcmd.BuildConfigFromFlags("", c.Kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("cluster %s: kubeconfig %s: %w", c.ID, c.Kubeconfig, err)
	}
	client, err := kubernetes.NewForConfig(rc)
	if err != nil {
		return nil, fmt.Errorf("cluster %s: %w", c.ID, err)
	}
	gc, err := gatewayclient.NewForConfig(rc)
	if err != nil {
		return nil, fmt.Errorf("cluster %s: %w", c.ID, err)
	}
	mc, err := mcsclient.NewForConfig(rc)
	if err != nil {
		return nil, fmt.Errorf("cluster %s: %w", c.ID, err)
	}
	kc, err := kube.New(client, kubeOptions(cfg, c.ID, config, gc, mc))
	if err != nil {
		return nil, fmt.Errorf("cluster %s: %w", c.ID, err)
	}
	se, err := liveConfigRegistry(cfg, c.ID, config, rc, client)
	if err != nil {
		return nil, fmt.Errorf("cluster %s: %w", c.ID, err)
	}
	return &live{regs: []registry.Registry{kc, se}, kube: client, gateway: gc}, nil
}

// load reads a manifest file or directory.
func load(l manifest.Loader, fsys fs.FS, path string) ([]runtime.Object, error) {
	if fsys != nil {
		return loadFS(l, fsys, path)
	}
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if st.IsDir() {
		return l.LoadDir(path)
	}
	return l.LoadFile(path)
}

// loadDiagnostics turns the documents a load could not decode into
// diagnostics, and returns any other error.
func loadDiagnostics(id model.ClusterID, err error) ([]model.Diagnostic, error) {
	if err == nil {
		return nil, nil
	}
	docErrs := manifest.DocumentErrors(err)
	if len(docErrs) == 0 {
		return nil, err
	}
	out := make([]model.Diagnostic, 0, len(docErrs))
	for _, de := range docErrs {
		kind := de.Kind
		if i := strings.LastIndex(kind, "Kind="); i >= 0 {
			kind = kind[i+len("Kind="):]
		}
		if kind == "" {
			kind = "Document"
		}
		out = append(out, model.Diagnostic{
			Severity: model.Error, Kind: kind, Name: fmt.Sprintf("%s#%d", de.File, de.Document), Cluster: id,
			Message: fmt.Sprintf("not loaded: %v", de.Err),
		})
	}
	return out, nil
}

// loadFS reads the .yaml, .yml and .json files at or under dir in fsys,
// in lexical order.
func loadFS(l manifest.Loader, fsys fs.FS, dir string) ([]runtime.Object, error) {
	var out []runtime.Object
	var errs []error
	err := fs.WalkDir(fsys, dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		switch path.Ext(p) {
		case ".yaml", ".yml", ".json":
		default:
			return nil
		}
		if d.IsDir() {
			return nil
		}
		f, err := fsys.Open(p)
		if err != nil {
			return err
		}
		defer f.Close()
		objs, err := l.Load(f)
		out = append(out, objs...)
		if err != nil {
			for _, de := range manifest.DocumentErrors(err) {
				if de.File == "" {
					de.File = p
				}
			}
			errs = append(errs, err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, errors.Join(errs...)
}
