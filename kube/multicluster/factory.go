package multicluster

import (
	"fmt"

	istioclient "istio.io/client-go/pkg/clientset/versioned"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/meshreg/meshreg/model"
	"github.com/meshreg/meshreg/registry"
	"github.com/meshreg/meshreg/serviceentry"
)

// ClientFactory returns a Factory that reads the kubeconfig, makes a
// clientset from it, and hands that to build, which makes the registry
// (typically with kube.New).
func ClientFactory(build func(cluster model.ClusterID, client kubernetes.Interface) (registry.Registry, error)) Factory {
	return func(cluster model.ClusterID, kubeconfig []byte) (registry.Registry, error) {
		cfg, err := clientcmd.RESTConfigFromKubeConfig(kubeconfig)
		if err != nil {
			return nil, fmt.Errorf("reading kubeconfig: %w", err)
		}
		client, err := kubernetes.NewForConfig(cfg)
		if err != nil {
			return nil, fmt.Errorf("making a client: %w", err)
		}
		return build(cluster, client)
	}
}

// WorkloadEntryFactory returns the Factory of clusters' WorkloadEntry
// registries (the default Options.WorkloadEntries): it reads the
// kubeconfig, makes an Istio clientset from it, and returns a serviceentry
// controller in WorkloadEntriesOnly mode under the cluster's ID over an
// informer source of the cluster's networking.istio.io/v1 WorkloadEntries
// alone. A cluster that does not serve them (no Istio CRDs) gives a
// registry that syncs empty and reads them once the CRD is installed
// (WorkloadEntryOptions.CRDPollInterval), as Istio's informers wait for a
// CRD.
func WorkloadEntryFactory(opts WorkloadEntryOptions) Factory {
	opts = opts.defaults()
	return func(cluster model.ClusterID, kubeconfig []byte) (registry.Registry, error) {
		cfg, err := clientcmd.RESTConfigFromKubeConfig(kubeconfig)
		if err != nil {
			return nil, fmt.Errorf("reading kubeconfig: %w", err)
		}
		istio, err := istioclient.NewForConfig(cfg)
		if err != nil {
			return nil, fmt.Errorf("making an Istio client: %w", err)
		}
		srcOpts := serviceentry.InformerOptions{
			ResyncPeriod:        opts.ResyncPeriod,
			WorkloadEntriesOnly: true,
			CRDPollInterval:     opts.CRDPollInterval,
		}
		if opts.Registry.NamespaceSelector != nil {
			if srcOpts.Namespaces, err = kubernetes.NewForConfig(cfg); err != nil {
				return nil, fmt.Errorf("making a client: %w", err)
			}
		}
		src, err := serviceentry.NewInformerSource(istio, srcOpts)
		if err != nil {
			return nil, err
		}
		regOpts := opts.Registry
		regOpts.ClusterID = cluster
		regOpts.WorkloadEntriesOnly = true
		if regOpts.Logger != nil {
			regOpts.Logger = regOpts.Logger.With("cluster", string(cluster))
		}
		return serviceentry.New(src, regOpts)
	}
}
