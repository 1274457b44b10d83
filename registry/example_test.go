package registry_test

import (
	"context"
	"fmt"
	"os"

	"github.com/meshreg/meshreg/model"
	"github.com/meshreg/meshreg/registry"
	"github.com/meshreg/meshreg/registry/memory"
)

// WriteJSON prints any registry in the dump format: the same state gives
// the same bytes.
func ExampleWriteJSON() {
	reg, err := memory.New(memory.Options{ClusterID: "cluster-a"})
	if err != nil {
		panic(err)
	}
	reviews := memory.Service("reviews", "default").Port("http", 9080).VIP("10.96.0.10").Build()
	reg.AddService(reviews)
	reg.SetEndpoints(reviews.Key(), memory.Endpoint("10.1.0.1", 9080).Port("http").
		Locality("us-east1/us-east1-b").Pod("default", "reviews-v1").Build())
	if err := registry.WriteJSON(os.Stdout, reg); err != nil {
		fmt.Println(err)
	}
	// Output:
	// {
	//   "version": 1,
	//   "services": [
	//     {
	//       "hostname": "reviews.default.svc.cluster.local",
	//       "namespace": "default",
	//       "name": "reviews",
	//       "provider": "Kubernetes",
	//       "resolution": "ClientSideLB",
	//       "meshExternal": false,
	//       "ports": [
	//         {
	//           "name": "http",
	//           "port": 9080,
	//           "protocol": "HTTP",
	//           "targetPort": 0,
	//           "targetPortName": ""
	//         }
	//       ],
	//       "addresses": {
	//         "cluster-a": [
	//           "10.96.0.10"
	//         ]
	//       },
	//       "externalAddresses": {},
	//       "autoAddresses": [],
	//       "exportTo": [
	//         "*"
	//       ],
	//       "externalName": "",
	//       "selector": {},
	//       "serviceAccounts": [],
	//       "trafficDistribution": "",
	//       "internalTrafficPolicy": "",
	//       "endpoints": [
	//         {
	//           "servicePort": "http",
	//           "address": "10.1.0.1",
	//           "addresses": [
	//             "10.1.0.1"
	//           ],
	//           "port": 9080,
	//           "cluster": "cluster-a",
	//           "network": "",
	//           "locality": "us-east1/us-east1-b",
	//           "serviceAccount": "",
	//           "tlsMode": "disabled",
	//           "health": "Healthy",
	//           "workload": "default/reviews-v1",
	//           "labels": {},
	//           "weight": 0,
	//           "nodeName": "",
	//           "hostname": "",
	//           "subdomain": "",
	//           "serving": true
	//         }
	//       ]
	//     }
	//   ],
	//   "workloads": [],
	//   "networkGateways": [],
	//   "diagnostics": []
	// }
}

// A registry publishes through a Notifier: each subscriber gets its own
// ordered queue, fed the subscriber's initial events first.
func ExampleNotifier() {
	var n registry.Notifier
	done := make(chan struct{})
	unsubscribe := n.Subscribe(registry.HandlerFuncs{
		ServiceFunc: func(e registry.ServiceEvent) {
			fmt.Println(e.Type, e.Service().Name)
			if e.Type == model.EventDelete {
				close(done)
			}
		},
	}, []registry.Event{registry.ServiceEvent{Type: model.EventAdd, Current: &model.Service{Name: "reviews"}, Initial: true}})
	defer unsubscribe()

	n.Notify(registry.ServiceEvent{Type: model.EventAdd, Current: &model.Service{Name: "ratings"}})
	n.Notify(registry.ServiceEvent{Type: model.EventDelete, Previous: &model.Service{Name: "reviews"}})
	<-done
	// Output:
	// add reviews
	// add ratings
	// delete reviews
}

// A subscriber that handles endpoints alone is handed nothing else: a
// HandlerFuncs takes the kinds whose function is set, and the others are
// never queued for it.
func ExampleSelective() {
	var n registry.Notifier
	done := make(chan struct{})
	h := registry.HandlerFuncs{
		EndpointsFunc: func(e registry.EndpointsEvent) {
			fmt.Println("endpoints of", e.Service.Hostname, len(e.Endpoints))
			close(done)
		},
	}
	fmt.Println("takes endpoints only:", h.EventKinds() == registry.EndpointsEvents)
	defer n.Subscribe(h, nil)()

	n.Notify(registry.WorkloadEvent{Type: model.EventAdd, Current: &model.WorkloadInstance{Name: "reviews-v1-0"}})
	n.Notify(registry.EndpointsEvent{
		Service:   model.ServiceKey{Hostname: "reviews.default.svc.cluster.local", Namespace: "default"},
		Endpoints: []*model.Endpoint{{ServicePortName: "http"}},
	})
	<-done
	// Output:
	// takes endpoints only: true
	// endpoints of reviews.default.svc.cluster.local 1
}

// WaitSynced waits for a registry's SyncedEvent: the registry has its
// initial state, and nothing polls.
func ExampleWaitSynced() {
	reg, err := memory.New(memory.Options{})
	if err != nil {
		panic(err)
	}
	reg.AddService(memory.Service("reviews", "default").Port("http", 9080).Build())
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- reg.Run(ctx) }()
	defer func() { cancel(); <-done }()

	if err := registry.WaitSynced(ctx, reg); err != nil {
		panic(err)
	}
	for _, svc := range reg.Services() {
		fmt.Println(svc.Hostname)
	}
	// Output:
	// reviews.default.svc.cluster.local
}
