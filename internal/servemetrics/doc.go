// Package servemetrics holds the Prometheus metrics that the library's
// xDS servers share: package xds (Envoy and gRPC clients) and package wds
// (ztunnel). Both register them on the Registerer they are given; when
// the other has already, each takes the collectors registered, so that
// the two servers of one control plane feed one set of series, told
// apart by their client and type labels.
//
// A nil *Metrics is off: every method does nothing.
package servemetrics
