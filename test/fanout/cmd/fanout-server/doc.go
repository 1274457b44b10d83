// Command fanout-server is the library's control plane for the fan-out
// benchmark (package fanout): a world's Kubernetes objects in a fake
// API, a kube controller, the aggregate, the proxy view and the address
// index, and the xDS and WDS servers on one port, with Istio's defaults.
//
//	fanout-server -world FILE.yaml [-xds-addr 127.0.0.1:15010] [-control-addr 127.0.0.1:15014] [-v]
//
// The control address answers GET /ready, POST /apply and GET /stats
// (package fanout). hack/fanout-istio is Istio's server with the same
// flags and API.
package main
