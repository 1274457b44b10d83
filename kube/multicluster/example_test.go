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

func (printTarget) Add(r registry.Registry) error { fmt.Println("add", r.Cluster()); return nil }
func (printTarget) Replace(r registry.Registry)   { fmt.Println("replace", r.Cluster()) }
func (printTarget) Remove(_ model.Provider, c model.ClusterID) error {
	fmt.Println("remove", c)
	return nil
}

type clusterOnly struct {
	registry.Registry
	id model.ClusterID
}

func (c clusterOnly) Cluster() model.ClusterID { return c.id }

// A Secret labelled istio/multiCluster=true declares one remote cluster
// per data key. In a real control plane the target is an
// *aggregate.Controller and the factory is multicluster.ClientFactory
// around kube.New.
func Example() {
	client := fake.NewSimpleClientset(&corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{
			Name: "remote-west", Namespace: "istio-system",
			Labels: map[string]string{multicluster.SecretLabel: "true"},
		},
		Data: map[string][]byte{"west": []byte("apiVersion: v1\nkind: Config\n")},
	})
	c, err := multicluster.New(client, printTarget{}, multicluster.Options{
		Factory: func(id model.ClusterID, _ []byte) (registry.Registry, error) { return clusterOnly{id: id}, nil },
	})
	if err != nil {
		panic(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = c.Run(ctx) }()
	for !c.HasSynced() {
		time.Sleep(time.Millisecond)
	}
	fmt.Println("clusters:", c.Clusters())
	cancel()
	<-done
	// Output:
	// add west
	// clusters: [west]
}
