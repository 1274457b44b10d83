// Package fanout measures serving: how long a registry change takes to
// reach every proxy that should get it, what it costs the server, and
// what each connected proxy costs it. It drives any ADS server that
// serves Envoy sidecars (delta CDS and EDS) and ztunnels (delta WDS) on
// one port and offers the control API below, so that the library's
// server (cmd/fanout-server) and Istio's (hack/fanout-istio) are
// measured by the same client on the same world.
//
// The world (World, Write) is Kubernetes objects: namespaces of
// Services whose endpoints are Pods, each namespace's Services exported
// to itself and the shared namespace, and the shared namespace's
// Services exported to every namespace, so that a sidecar sees its own
// namespace's Services and the shared ones, as meshes scope visibility.
//
// A server under test takes -world FILE, -xds-addr and -control-addr,
// and answers on the control address: GET /ready (200 once it serves the
// whole world), POST /apply (YAML objects to create or update) and GET
// /stats (Stats). Run connects the proxies from this process, so the
// server's CPU is its own, waits until each has the world, then applies
// the changes (Changes) one at a time and reports (Report).
package fanout
