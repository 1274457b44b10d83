// Package controllerruntime is an example: a control plane built on
// controller-runtime runs meshreg's kube controller on its manager's
// informers (kube/crinformers), as a runnable of the manager, so that the
// cluster is watched once. See example_test.go; the integration tier runs
// the same against a real kube-apiserver.
package controllerruntime
