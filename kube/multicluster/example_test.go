package multicluster_test

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/meshreg/meshreg/kube/multicluster"
	"github.com/meshreg/meshreg/model"
	"github.com/meshreg/meshreg/registry"
)

// printTarget prints what the controller asks of it.
type printTarget struct{}

func (printTarget) Add(r registry.Registry) error {
	fmt.Println("add", r.Provider(), r.Cluster())
	return nil
}
func (printTarget) Replace(r registry.Registry) error {
	fmt.Println("replace", r.Provider(), r.Cluster())
	return nil
}
func (printTarget) Remove(p model.Provider, c model.ClusterID) error {
	fmt.Println("remove", p, c)
	return nil
}

type clusterOnly struct {
	registry.Registry
	id model.ClusterID
}

func (c clusterOnly) Cluster() model.ClusterID { return c.id }
func (c clusterOnly) Provider() model.Provider { return model.Kubernetes }

// A Secret labelled istio/multiCluster=true declares one remote cluster
// per data key. Each cluster gets two registries: the Factory's, for its
// Kubernetes Services, and, as Istio reads WorkloadEntries from every
// cluster, a WorkloadEntry registry (provider External) built from the
// same kubeconfig by WorkloadEntryFactory (Options.SkipWorkloadEntries
// turns it off). In a real control plane the target is an
// *aggregate.Controller, which runs them, and the factory is
// multicluster.ClientFactory around kube.New.
func Example() {
	kubeconfig := `apiVersion: v1
kind: Config
clusters: [{name: west, cluster: {server: "https://west.example.com:6443"}}]
users: [{name: reader, user: {token: secret}}]
contexts: [{name: west, context: {cluster: west, user: reader}}]
current-context: west
`
	client := fake.NewSimpleClientset(&corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{
			Name: "remote-west", Namespace: "istio-system",
			Labels: map[string]string{multicluster.SecretLabel: "true"},
		},
		Data: map[string][]byte{"west": []byte(kubeconfig)},
	})
	c, err := multicluster.New(client, printTarget{}, multicluster.Options{
		Factory: func(id model.ClusterID, _ []byte) (registry.Registry, error) { return clusterOnly{id: id}, nil },
		// WorkloadEntries: the default, multicluster.WorkloadEntryFactory.
	})
	if err != nil {
		panic(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- c.Run(ctx) }()
	for !c.HasSynced() {
		time.Sleep(time.Millisecond)
	}
	fmt.Println("clusters:", c.Clusters(), "diagnostics:", len(c.Diagnostics()))
	cancel()
	<-done
	// Output:
	// add Kubernetes west
	// add External west
	// clusters: [west] diagnostics: 0
}
