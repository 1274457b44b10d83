// Package model holds the plain data types of the meshreg service registry:
// services, their ports, endpoints, workload instances, diagnostics and the
// small enumerations they use.
//
// The types carry no behaviour beyond identity (Key), comparison (Equals),
// copying (DeepCopy) and rendering (String). Registries publish values of
// these types to their callers and handlers; a published value is never
// mutated afterwards. A registry that needs to change a service builds a new
// *Service and publishes that instead, so a caller may keep, compare and
// index the values it receives without copying them. Callers must treat the
// values they receive, including their slices and maps, as read-only; use
// DeepCopy to get a value you may modify.
//
// The words that String methods return are the words of the registry dump
// format (see the registry package), so that a dump, a log line and a test
// failure all spell a value the same way.
package model
