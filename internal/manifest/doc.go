// Package manifest loads Kubernetes and Istio objects from multi-document
// YAML or JSON manifests, for the registry-dump example, golden scenarios
// and tests.
//
// Documents are decoded into typed objects through a scheme holding
// client-go's Kubernetes types and istio client-go's types (networking
// v1, v1beta1, v1alpha3 and the other Istio groups). A document that
// cannot be decoded (an unknown kind, bad syntax, a missing kind) is
// reported as a *DocumentError naming the file, the document index and the
// kind, and the other documents are still returned: Load returns the
// objects it could decode together with a non-nil error listing the
// documents it skipped.
//
// Limits keep hostile input cheap: a file larger than Loader.MaxFileSize
// is refused whole, and a document whose YAML aliases would expand past
// Loader.MaxExpandedSize (a "billion laughs" document) is refused before it
// is expanded.
//
// Split separates Kubernetes objects from Istio objects, and KubeClientset
// and IstioClientset seed client-go fake clientsets with them.
package manifest
