package model

// Draining endpoints, in one rule, as Istio applies it:
//
//   - A Service labelled LabelPersistentSession or
//     LabelPersistentSessionHeader (any non-empty value; the kube
//     registry's Options.DrainingLabels) keeps sessions on its endpoints:
//     the registry makes its terminating endpoints that still serve
//     Draining instead of Terminating.
//   - A workload labelled LabelDraining (any non-empty value) is Draining
//     to proxies, whatever its health.
//   - Proxies are sent Draining endpoints only for a service labelled
//     LabelPersistentSession, whose clients pin sessions by cookie to an
//     endpoint; for any other service they are left out, as new sessions
//     must not start on them. A service with only the header label gets
//     its Draining endpoints left out too: Istio's EDS sends them to
//     cookie sessions alone, and the EDS scenarios of testdata/eds check
//     that meshreg does the same.
const (
	LabelPersistentSession       = "istio.io/persistent-session"
	LabelPersistentSessionHeader = "istio.io/persistent-session-header"
	LabelDraining                = "istio.io/draining"
)
