package reliability_test

import (
	"context"
	"fmt"

	"github.com/meshreg/meshreg/model"
	"github.com/meshreg/meshreg/test/reliability"
)

// Example checks the convergence of a tiny history: a pod arrives before
// the namespace that brings it into the namespace selector, then its IP
// changes. Whatever the order, the registry that lived through it equals
// a registry built from the final objects.
func Example() {
	ns := reliability.NamespaceSpec{Name: "ns1", Selected: true}
	pod := reliability.PodSpec{Namespace: "ns1", Name: "p1", App: "a", IP: "10.1.0.1", Ready: true}

	w1 := reliability.NewWorld(reliability.Clusters...)
	w1.Set("b", pod.Key(), pod.YAML())
	w2 := w1.Clone()
	w2.Set("b", ns.Key(), ns.YAML())
	w3 := w2.Clone()
	pod.IP = "10.1.0.2"
	w3.Set("b", pod.Key(), pod.YAML())

	seq := reliability.Sequence{
		Seed:    1,
		Initial: reliability.NewWorld(reliability.Clusters...),
		Steps: []reliability.Step{
			{World: w1, Clusters: []model.ClusterID{"b"}},
			{World: w2, Clusters: []model.ClusterID{"b"}},
			{World: w3, Clusters: []model.ClusterID{"b"}, Pause: reliability.Drain},
		},
	}
	res, err := reliability.Checker{}.Check(context.Background(), seq)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("converged:", res.Converged())
	// Output: converged: true
}
