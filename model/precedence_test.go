package model_test

import (
	"testing"
	"time"

	"github.com/meshreg/meshreg/model"
)

// Services of one hostname rank Kubernetes first, then by age, then by
// namespace and name.
func TestComparePrecedence(t *testing.T) {
	at := func(minute int) time.Time { return time.Date(2025, 1, 1, 0, minute, 0, 0, time.UTC) }
	svc := func(p model.Provider, minute int, ns, name string) *model.Service {
		return &model.Service{Hostname: "reviews.example.com", Provider: p, CreationTime: at(minute), Namespace: ns, Name: name}
	}
	checkOrder(t, []*model.Service{
		svc(model.Kubernetes, 9, "z", "z"), // Kubernetes, however young
		svc(model.Kubernetes, 9, "zz", "a"),
		svc(model.External, 0, "z", "z"), // the oldest entry
		svc(model.External, 1, "a", "b"),
		svc(model.External, 1, "b", "a"), // same age: by namespace
		svc(model.External, 1, "b", "b"), // then by name
	}, model.ComparePrecedence)
}
