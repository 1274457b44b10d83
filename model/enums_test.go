package model_test

import (
	"fmt"
	"testing"

	"github.com/meshreg/meshreg/model"
)

// The String methods spell values as the dump format does.
func TestEnumStrings(t *testing.T) {
	tests := []struct {
		in   fmt.Stringer
		want string
	}{
		{model.Kubernetes, "Kubernetes"},
		{model.External, "External"},
		{model.Provider(0), "Provider(0)"},
		{model.ClientSideLB, "ClientSideLB"},
		{model.DNS, "DNS"},
		{model.DNSRoundRobin, "DNSRoundRobin"},
		{model.Passthrough, "Passthrough"},
		{model.Alias, "Alias"},
		{model.DynamicDNS, "DynamicDNS"},
		{model.Resolution(9), "Resolution(9)"},
		{model.Healthy, "Healthy"},
		{model.Unhealthy, "Unhealthy"},
		{model.Draining, "Draining"},
		{model.Terminating, "Terminating"},
		{model.HealthStatus(9), "HealthStatus(9)"},
		{model.TLSDisabled, "disabled"},
		{model.TLSIstio, "istio"},
		{model.TLSMode(9), "TLSMode(9)"},
		{model.EventAdd, "add"},
		{model.EventUpdate, "update"},
		{model.EventDelete, "delete"},
		{model.EventType(0), "EventType(0)"},
		{model.KindPod, "Pod"},
		{model.KindWorkloadEntry, "WorkloadEntry"},
		{model.WorkloadKind(0), "WorkloadKind(0)"},
		{model.Warning, "Warning"},
		{model.Error, "Error"},
		{model.Severity(0), "Severity(0)"},
	}
	for _, tt := range tests {
		if got := tt.in.String(); got != tt.want {
			t.Errorf("%T(%v).String() = %q, want %q", tt.in, tt.in, got, tt.want)
		}
	}
}

// The zero values are the documented defaults.
func TestEnumZeroValues(t *testing.T) {
	if got := (model.Endpoint{}).Health; got != model.Healthy {
		t.Errorf("zero Health = %s, want Healthy", got)
	}
	if got := (model.Endpoint{}).TLSMode; got != model.TLSDisabled {
		t.Errorf("zero TLSMode = %s, want disabled", got)
	}
	if got := (model.Service{}).Resolution; got != model.ClientSideLB {
		t.Errorf("zero Resolution = %s, want ClientSideLB", got)
	}
}

func TestParseTLSMode(t *testing.T) {
	tests := []struct {
		label string
		want  model.TLSMode
	}{
		{"istio", model.TLSIstio},
		{"disabled", model.TLSDisabled},
		{"", model.TLSDisabled},
		{"ISTIO", model.TLSDisabled}, // label values are case sensitive
		{"mutual", model.TLSDisabled},
	}
	for _, tt := range tests {
		if got := model.ParseTLSMode(tt.label); got != tt.want {
			t.Errorf("ParseTLSMode(%q) = %s, want %s", tt.label, got, tt.want)
		}
	}
}
