// Package workloadapi holds the wire messages of Istio's workload
// discovery (WDS) API: what the address index (package address) computes
// and package wds serves to ztunnel over delta xDS, under the type URL
// type.googleapis.com/istio.workload.Address.
//
// Each resource is an Address: either a Workload (a pod, a WorkloadEntry,
// a ServiceEntry endpoint, a network gateway; keyed by its Uid, with its
// addresses as 4- or 16-byte slices, its Status, and the services it
// backs by "namespace/hostname" with their ports) or a Service (keyed by
// "namespace/hostname", with its VIPs per network and ports). Read them
// from an address.Snapshot, or decode a WDS response's resources with
// proto.Unmarshal into an Address, as ztunnel does; use the generated
// getters (GetWorkload, GetService, GetStatus, ...), which are nil-safe.
//
// The messages are wire-compatible with ztunnel: their proto package
// (istio.workload), message, field and enum names, field numbers, types
// and oneofs are those of Istio's pkg/workloadapi/workload.proto
// (wire_test.go pins them), while the .proto, its comments and the Go
// code are the project's own; the module does not depend on
// istio.io/istio.
//
// # Regenerating
//
// After editing workload.proto, with protoc (Debian: protobuf-compiler)
// and protoc-gen-go at go.mod's google.golang.org/protobuf version
// (go install google.golang.org/protobuf/cmd/protoc-gen-go@v1.36.12) on
// PATH, run `go generate ./address/workloadapi/` from the module root and
// commit workload.pb.go with the .proto. A wire change must follow one
// upstream, never the other way round.
package workloadapi

//go:generate protoc --go_out=. --go_opt=paths=source_relative workload.proto
