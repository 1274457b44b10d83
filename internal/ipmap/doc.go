// Package ipmap provides Map, a map keyed by IP address that keys IPv4
// addresses by their 32-bit number.
//
// The registry indexes endpoints, workloads and pods by IP, and looks
// them up on every proxy connection. A netip.Addr map key is 24 bytes (it
// carries a zone handle) and hashes as variable-length memory; a uint32
// key is a sixth of the size and takes the runtime's fast path for
// 32-bit keys. IPv4-mapped IPv6 addresses are IPv6 keys:
// unmap them first (the registries publish addresses unmapped), and
// addresses with a zone lose it.
package ipmap
