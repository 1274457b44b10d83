// Package ipmap provides Map, a map keyed by IP address that keys IPv4
// addresses by their 32-bit number.
//
// The registry indexes endpoints, workloads and pods by IP, and looks
// them up on every proxy connection. A netip.Addr map key is 24 bytes (it
// carries a zone handle) and hashes as variable-length memory; a uint32
// key takes the runtime's fast path and packs six times more keys per
// cache line. On a large index lookups are bound by memory latency, so
// this is what makes them fast. IPv4-mapped IPv6 addresses are IPv6 keys:
// unmap them first (the registries publish addresses unmapped), and
// addresses with a zone lose it.
package ipmap
