//go:build tools

// Package tools pins the Kubernetes and etcd servers the integration tier
// runs, so that `go build` in this module builds them from the Go module
// proxy. It is a module of its own so the library's go.mod does not carry
// k8s.io/kubernetes.
package tools

import (
	_ "go.etcd.io/etcd/server/v3"
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
)
