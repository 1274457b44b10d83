package memory_test

import (
	"context"
	"testing"
	"time"

	"github.com/meshreg/meshreg/address"
	"github.com/meshreg/meshreg/address/workloadapi"
	"github.com/meshreg/meshreg/model"
	"github.com/meshreg/meshreg/registry/memory"
)

// A workload made unhealthy with the builder and added again is an
// UNHEALTHY workload in the address index (what WDS sends ztunnel),
// though no endpoint of the registry changed.
func TestUnhealthyWorkloadReachesTheAddressIndex(t *testing.T) {
	reg, err := memory.New(memory.Options{ClusterID: "east"})
	if err != nil {
		t.Fatal(err)
	}
	web := memory.Workload("web-1", "shop").Address("10.1.0.1")
	reg.AddWorkload(web.Build())
	idx, err := address.New(reg, address.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	regDone, idxDone := make(chan error, 1), make(chan error, 1)
	go func() { regDone <- reg.Run(ctx) }()
	go func() { idxDone <- idx.Run(ctx) }()
	defer func() { cancel(); <-regDone; <-idxDone }()

	status := func(want workloadapi.WorkloadStatus) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for {
			var got workloadapi.WorkloadStatus = -1
			for _, w := range idx.Snapshot().Workloads() {
				if w.Uid == "east//Pod/shop/web-1" {
					got = w.Status
				}
			}
			if got == want {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("web-1's status is %v, want %v", got, want)
			}
			time.Sleep(2 * time.Millisecond)
		}
	}
	status(workloadapi.WorkloadStatus_HEALTHY)
	reg.AddWorkload(web.Health(model.Unhealthy).Build())
	status(workloadapi.WorkloadStatus_UNHEALTHY)
	reg.AddWorkload(web.Health(model.Healthy).Build())
	status(workloadapi.WorkloadStatus_HEALTHY)
}
