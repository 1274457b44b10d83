package model

import "strings"

// Locality is where a workload runs: region, zone and subzone.
type Locality struct {
	Region, Zone, Subzone string
}

// ParseLocality reads "region/zone/subzone", the form of the
// topology.istio.io/locality label (where '.' stands for '/' when the
// value holds no '/', because a label value cannot hold '/') and of
// ServiceEntry endpoint localities. Missing trailing parts are empty; a
// locality of more than three levels is kept as written, the levels past
// the zone in Subzone ("r/z/s/rack" has Subzone "s/rack"), as Istio keeps
// the text.
func ParseLocality(s string) Locality {
	if s == "" {
		return Locality{}
	}
	if !strings.Contains(s, "/") {
		s = strings.ReplaceAll(s, ".", "/")
	}
	parts := strings.SplitN(s, "/", 3)
	var l Locality
	l.Region = parts[0]
	if len(parts) > 1 {
		l.Zone = parts[1]
	}
	if len(parts) > 2 {
		l.Subzone = parts[2]
	}
	return l
}

// The workload labels that give a locality, in the form ParseLocality
// reads: LabelLocality, else the older LabelLegacyLocality.
const (
	LabelLocality       = "topology.istio.io/locality"
	LabelLegacyLocality = "istio-locality"
)

// LocalityLabel returns the locality a workload's labels give, as Istio
// reads them for Pods, WorkloadEntries and ServiceEntry endpoints alike:
// the LabelLocality label when present (even empty), else the
// LabelLegacyLocality label; "" when neither is set.
func LocalityLabel(labels map[string]string) string {
	if v, ok := labels[LabelLocality]; ok {
		return v
	}
	return labels[LabelLegacyLocality]
}

// IsZero reports whether nothing is known of the locality.
func (l Locality) IsZero() bool { return l == Locality{} }

// String returns "region/zone/subzone" with empty trailing parts dropped:
// "us-east1/us-east1-b" when there is no subzone, "/zone-x" when only a
// zone is known, "" when nothing is.
func (l Locality) String() string {
	switch {
	case l.Subzone != "":
		return l.Region + "/" + l.Zone + "/" + l.Subzone
	case l.Zone != "":
		return l.Region + "/" + l.Zone
	default:
		return l.Region
	}
}
