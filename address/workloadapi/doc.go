// Package workloadapi holds the wire messages of Istio's workload discovery
// (WDS) API: the Address resources, each a Workload or a Service, that an
// Istio control plane sends ztunnel over delta xDS under the type URL
// type.googleapis.com/istio.workload.Address.
//
// The Go code is generated from the project's own workload.proto. Its proto
// package (istio.workload) and its message, field and enum names, field
// numbers, types and oneofs are those of Istio's pkg/workloadapi/workload.proto,
// so the messages are wire-compatible with ztunnel; the comments are the
// project's. The module does not depend on istio.io/istio for them. The
// wire facts are pinned by wire_test.go: a change there must follow a
// change upstream, never the other way round.
//
// To regenerate workload.pb.go after editing workload.proto, install protoc
// (Debian: apt-get install protobuf-compiler, which also brings the
// well-known types it imports) and protoc-gen-go at the version of
// google.golang.org/protobuf in go.mod:
//
//	go install google.golang.org/protobuf/cmd/protoc-gen-go@v1.36.12
//
// then, from the module root, with protoc-gen-go on PATH:
//
//	go generate ./address/workloadapi/
//
// and commit workload.pb.go with the .proto.
package workloadapi

//go:generate protoc --go_out=. --go_opt=paths=source_relative workload.proto
