package shards_test

import (
	"fmt"

	"github.com/meshreg/meshreg/internal/shards"
	"github.com/meshreg/meshreg/model"
)

func ExampleMap() {
	var m shards.Map[string]
	m.Set(model.ShardKey{Provider: model.External, Cluster: "east"}, "entry")
	m.Set(model.ShardKey{Provider: model.Kubernetes, Cluster: "west"}, "service in west")
	m.Set(model.ShardKey{Provider: model.Kubernetes, Cluster: "east"}, "service in east")
	for k, v := range m.All() {
		fmt.Println(k, v)
	}
	// Output:
	// Kubernetes/east service in east
	// Kubernetes/west service in west
	// External/east entry
}
