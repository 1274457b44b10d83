package kube

import (
	"log/slog"
	"net/netip"
	"reflect"
	"runtime"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gatewayclient "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned"
	mcsfake "sigs.k8s.io/mcs-api/pkg/client/clientset/versioned/fake"

	"github.com/meshreg/meshreg/model"
	"github.com/meshreg/meshreg/registry"
)

// TestOptionsDefaults fails when a field of Options is added without
// deciding its default here and in defaults().
func TestOptionsDefaults(t *testing.T) {
	got := Options{}.defaults()
	want := map[string]any{
		"ClusterID":          DefaultClusterID,
		"DomainSuffix":       "cluster.local",
		"TrustDomain":        "cluster.local",
		"NamespaceSelector":  (*metav1.LabelSelector)(nil),
		"SystemNamespace":    "istio-system",
		"Network":            model.NetworkID(""),
		"NetworkCIDRs":       map[netip.Prefix]model.NetworkID(nil),
		"Logger":             nil, // checked below
		"ResyncPeriod":       got.ResyncPeriod,
		"DrainingLabels":     []string{"istio.io/persistent-session", "istio.io/persistent-session-header"},
		"InitialSyncWorkers": runtime.GOMAXPROCS(0),
		"GatewayClient":      gatewayclient.Interface(nil),
		"ConfigCluster":      false,
		"GatewayNamespaces":  []string(nil),
		"Metrics":            prometheus.Registerer(nil),
		"Informers":          (*SharedInformers)(nil),
		"MCS":                MCSOptions{CheckInterval: DefaultMCSCheckInterval},
		"SyncReportInterval": registry.DefaultSyncReportInterval,
	}
	v := reflect.ValueOf(got)
	for i := range v.NumField() {
		name := v.Type().Field(i).Name
		w, ok := want[name]
		if !ok {
			t.Errorf("Options.%s has no decided default: add it to defaults() and to this test", name)
			continue
		}
		if name == "Logger" {
			if got.Logger == nil || got.Logger.Handler() != slog.DiscardHandler {
				t.Errorf("Logger default is not a discarding logger")
			}
			continue
		}
		if f := v.Field(i).Interface(); !reflect.DeepEqual(f, w) {
			t.Errorf("Options.%s default = %#v, want %#v", name, f, w)
		}
	}
	if got.ResyncPeriod != 0 {
		t.Errorf("ResyncPeriod default = %v, want 0", got.ResyncPeriod)
	}
	// Set fields are kept.
	set := Options{ClusterID: "x", DomainSuffix: "d", TrustDomain: "t", SystemNamespace: "s", Network: "n", InitialSyncWorkers: 3, DrainingLabels: []string{}}.defaults()
	if set.ClusterID != "x" || set.DomainSuffix != "d" || set.TrustDomain != "t" || set.SystemNamespace != "s" || set.Network != "n" || set.InitialSyncWorkers != 3 ||
		set.DrainingLabels == nil || len(set.DrainingLabels) != 0 {
		t.Errorf("defaults overwrote set fields: %+v", set)
	}
}

func TestNewRejectsBadOptions(t *testing.T) {
	f := newFakeCluster()
	if _, err := New(nil, Options{}); err == nil {
		t.Error("New(nil client) succeeded")
	}
	bad := &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "a", Operator: "Bogus"}}}
	if _, err := New(f, Options{NamespaceSelector: bad}); err == nil {
		t.Error("New accepted an invalid NamespaceSelector")
	}
	if _, err := New(f, Options{NetworkCIDRs: map[netip.Prefix]model.NetworkID{{}: "n"}}); err == nil {
		t.Error("New accepted an invalid CIDR")
	}
	if _, err := New(f, Options{ResyncPeriod: -1}); err == nil {
		t.Error("New accepted a negative resync period")
	}
	if _, err := New(f, Options{InitialSyncWorkers: -1}); err == nil {
		t.Error("New accepted a negative InitialSyncWorkers")
	}
	if _, err := New(f, Options{SyncReportInterval: -1}); err == nil {
		t.Error("New accepted a negative SyncReportInterval")
	}
}

// Each MCS switch needs the one before it, and service discovery a
// client to read ServiceExports with.
func TestNewRejectsBadMCSOptions(t *testing.T) {
	client := mcsfake.NewSimpleClientset()
	tests := []struct {
		name string
		mcs  MCSOptions
		ok   bool
	}{
		{"off", MCSOptions{}, true},
		{"client alone", MCSOptions{Client: client}, true},
		{"discovery", MCSOptions{Client: client, ServiceDiscovery: true}, true},
		{"discovery and host", MCSOptions{Client: client, ServiceDiscovery: true, Host: true}, true},
		{"all three", MCSOptions{Client: client, ServiceDiscovery: true, Host: true, ClusterLocal: true}, true},
		{"discovery without a client", MCSOptions{ServiceDiscovery: true}, false},
		{"host without discovery", MCSOptions{Client: client, Host: true}, false},
		{"cluster-local without host", MCSOptions{Client: client, ServiceDiscovery: true, ClusterLocal: true}, false},
		{"negative check interval", MCSOptions{CheckInterval: -1}, false},
	}
	for _, tt := range tests {
		_, err := New(newFakeCluster(), Options{MCS: tt.mcs})
		if (err == nil) != tt.ok {
			t.Errorf("%s: New error = %v, want ok = %v", tt.name, err, tt.ok)
		}
	}
}
