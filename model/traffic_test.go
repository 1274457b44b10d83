package model

import "testing"

func TestParseTrafficDistribution(t *testing.T) {
	tests := []struct {
		spec, ann, ns string
		want          string
		wantErr       bool
	}{
		{want: ""},
		{spec: "PreferClose", want: TrafficPreferSameZone},
		{spec: "PreferSameZone", want: TrafficPreferSameZone},
		{spec: "PreferSameNode", want: TrafficPreferSameNode},
		{spec: "PreferSameNode", ann: "PreferClose", ns: "PreferClose", want: TrafficPreferSameNode},
		{ann: "preferclose", want: TrafficPreferSameZone},
		{ann: "PreferSameNode", ns: "PreferClose", want: TrafficPreferSameNode},
		{ns: "PreferSameZone", want: TrafficPreferSameZone},
		{ann: "bogus", ns: "PreferClose", want: "", wantErr: true},                         // the Service's unknown value decides
		{ns: "bogus", want: "", wantErr: true},                                             // so does the namespace's
		{spec: "Bogus", ann: "PreferSameNode", want: TrafficPreferSameNode, wantErr: true}, // an unknown spec falls through
		{spec: "Bogus", want: "", wantErr: true},
		{spec: "preferclose", want: "", wantErr: true}, // the spec is case-sensitive
	}
	for _, tt := range tests {
		got, err := ParseTrafficDistribution(tt.spec, tt.ann, tt.ns)
		if got != tt.want || (err != nil) != tt.wantErr {
			t.Errorf("ParseTrafficDistribution(%q, %q, %q) = %q, %v; want %q, error %v", tt.spec, tt.ann, tt.ns, got, err, tt.want, tt.wantErr)
		}
	}
}
