package model_test

import (
	"testing"

	"github.com/meshreg/meshreg/model"
)

func TestParseLocality(t *testing.T) {
	tests := []struct {
		in   string
		want model.Locality
	}{
		{"", model.Locality{}},
		{"us-east1", model.Locality{Region: "us-east1"}},
		{"us-east1/us-east1-b", model.Locality{Region: "us-east1", Zone: "us-east1-b"}},
		{"us-east1/us-east1-b/rack-7", model.Locality{Region: "us-east1", Zone: "us-east1-b", Subzone: "rack-7"}},
		// The topology.istio.io/locality label spells '/' as '.'.
		{"us-east1.us-east1-b.rack-7", model.Locality{Region: "us-east1", Zone: "us-east1-b", Subzone: "rack-7"}},
		{"us-east1.us-east1-b", model.Locality{Region: "us-east1", Zone: "us-east1-b"}},
		// With a '/', dots are part of the names.
		{"eu/zone.a", model.Locality{Region: "eu", Zone: "zone.a"}},
		{"/zone-x", model.Locality{Zone: "zone-x"}},
		{"//rack-1", model.Locality{Subzone: "rack-1"}},
		// More than three levels are kept as written.
		{"r/z/s/extra/more", model.Locality{Region: "r", Zone: "z", Subzone: "s/extra/more"}},
		{"r.z.s.extra", model.Locality{Region: "r", Zone: "z", Subzone: "s/extra"}},
	}
	for _, tt := range tests {
		if got := model.ParseLocality(tt.in); got != tt.want {
			t.Errorf("ParseLocality(%q) = %#v, want %#v", tt.in, got, tt.want)
		}
	}
}

func TestLocalityString(t *testing.T) {
	tests := []struct {
		in   model.Locality
		want string
	}{
		{model.Locality{}, ""},
		{model.Locality{Region: "us-east1"}, "us-east1"},
		{model.Locality{Region: "us-east1", Zone: "us-east1-b"}, "us-east1/us-east1-b"},
		{model.Locality{Region: "us-east1", Zone: "us-east1-b", Subzone: "rack-7"}, "us-east1/us-east1-b/rack-7"},
		// dump-format.md: "/zone-x" when only a zone is known.
		{model.Locality{Zone: "zone-x"}, "/zone-x"},
		{model.Locality{Region: "r", Subzone: "s"}, "r//s"},
		{model.Locality{Subzone: "s"}, "//s"},
		{model.Locality{Region: "r", Zone: "z", Subzone: "s/rack"}, "r/z/s/rack"},
	}
	for _, tt := range tests {
		if got := tt.in.String(); got != tt.want {
			t.Errorf("%#v.String() = %q, want %q", tt.in, got, tt.want)
		}
		// What String writes, ParseLocality reads back.
		if back := model.ParseLocality(tt.want); back != tt.in {
			t.Errorf("ParseLocality(%q) = %#v, want %#v", tt.want, back, tt.in)
		}
		if got, want := tt.in.IsZero(), tt.want == ""; got != want {
			t.Errorf("%#v.IsZero() = %v, want %v", tt.in, got, want)
		}
	}
}

func TestLocalityLabel(t *testing.T) {
	tests := []struct {
		name   string
		labels map[string]string
		want   string
	}{
		{"none", nil, ""},
		{"topology label", map[string]string{model.LabelLocality: "r.z.s"}, "r.z.s"},
		{"older label", map[string]string{model.LabelLegacyLocality: "r.z"}, "r.z"},
		{"topology label first", map[string]string{model.LabelLocality: "r1/z1", model.LabelLegacyLocality: "r2.z2"}, "r1/z1"},
		{"an empty topology label still decides", map[string]string{model.LabelLocality: "", model.LabelLegacyLocality: "r2.z2"}, ""},
	}
	for _, tt := range tests {
		if got := model.LocalityLabel(tt.labels); got != tt.want {
			t.Errorf("%s: LocalityLabel(%v) = %q, want %q", tt.name, tt.labels, got, tt.want)
		}
	}
}
