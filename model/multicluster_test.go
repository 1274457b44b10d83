package model_test

import (
	"testing"

	"github.com/meshreg/meshreg/model"
)

func TestClusterSetHostname(t *testing.T) {
	if got, want := model.ClusterSetHostname("reviews", "shop"), model.Hostname("reviews.shop.svc.clusterset.local"); got != want {
		t.Errorf("ClusterSetHostname = %q, want %q", got, want)
	}
	tests := []struct {
		host model.Hostname
		want bool
	}{
		{"reviews.shop.svc.clusterset.local", true},
		{"reviews.shop.svc.cluster.local", false},
		{".svc.clusterset.local", false}, // no name before the zone
		{"clusterset.local", false},
		{"reviews.shop.svc.clusterset.local.example.com", false},
		{"", false},
	}
	for _, tt := range tests {
		if got := tt.host.IsClusterSet(); got != tt.want {
			t.Errorf("Hostname(%q).IsClusterSet() = %v, want %v", tt.host, got, tt.want)
		}
	}
}

func TestDiscoverability(t *testing.T) {
	tests := []struct {
		name  string
		d     model.Discoverability
		proxy model.ClusterID
		want  bool
	}{
		{"always, same cluster", model.AlwaysDiscoverable, "a", true},
		{"always, other cluster", model.AlwaysDiscoverable, "b", true},
		{"always, unknown cluster", model.AlwaysDiscoverable, "", true},
		{"same cluster only, same cluster", model.DiscoverableFromSameCluster, "a", true},
		{"same cluster only, other cluster", model.DiscoverableFromSameCluster, "b", false},
		{"same cluster only, unknown cluster", model.DiscoverableFromSameCluster, "", false},
	}
	for _, tt := range tests {
		ep := &model.Endpoint{Cluster: "a", Discoverability: tt.d}
		if got := ep.DiscoverableFrom(tt.proxy); got != tt.want {
			t.Errorf("%s: DiscoverableFrom(%q) = %v, want %v", tt.name, tt.proxy, got, tt.want)
		}
	}
	for d, want := range map[model.Discoverability]string{
		model.AlwaysDiscoverable:          "AlwaysDiscoverable",
		model.DiscoverableFromSameCluster: "DiscoverableFromSameCluster",
		model.Discoverability(7):          "Discoverability(7)",
	} {
		if got := d.String(); got != want {
			t.Errorf("Discoverability(%d).String() = %q, want %q", uint8(d), got, want)
		}
	}
}
