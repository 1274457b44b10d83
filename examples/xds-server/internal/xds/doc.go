// Package xds serves a meshreg registry to gRPC clients and Envoy through
// go-control-plane.
//
// It has three parts, kept apart so each can be tested alone:
//
//   - Translation (names.go, translate.go, endpoints.go): pure functions
//     from model values to Envoy protos. For each port of a service with
//     client-side load balancing they build an API Listener named
//     "<hostname>:<port>" (what a gRPC client dialling
//     "xds:///<hostname>:<port>" asks for) whose HttpConnectionManager
//     fetches a RouteConfiguration of the same name over ADS, a Cluster
//     "outbound|<port>||<hostname>" of type EDS, and the cluster's
//     ClusterLoadAssignment.
//   - The Updater: subscribes to a registry and keeps one go-control-plane
//     LinearCache per resource type up to date, touching only the
//     resources of the service an event is about.
//   - The Server: the gRPC server that answers ADS (state of the world and
//     delta) and the per-type discovery services from those caches.
//
// # Mapping
//
// Endpoints are grouped into one LocalityLbEndpoints per locality (region,
// zone, subzone), sorted by locality. An endpoint's weight is its model
// weight, left unset when the model says 0 (unset), so Envoy and gRPC use
// 1. A locality's weight is the sum of its endpoints' weights (1 for each
// unset one), as Istio does: gRPC ignores localities without a weight.
//
// Health: Healthy is HEALTHY, Unhealthy is UNHEALTHY, Draining is
// DRAINING. Terminating endpoints are left out: they no longer serve, and
// Envoy drains the connections of a removed host just as it would those of
// an unhealthy one, while gRPC would keep a subchannel open to it.
//
// Only IP-addressed endpoints are sent (an EDS cluster takes socket
// addresses); a dual-stack endpoint's further addresses become
// additional_addresses. Two endpoints with the same address and port (for
// example overlapping pod IPs in two clusters) would make gRPC reject the
// whole assignment, so the first in registry order is kept.
//
// Services resolved by DNS, passthrough or alias services, and wildcard
// hosts get no resources: see Translatable.
package xds
