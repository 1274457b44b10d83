// Package derived is the core of the views meshreg derives from a
// registry (proxyview.View, address.Index): what they have in common, so
// that each holds its own rules and nothing else.
//
// A view subscribes to its source and records, in its marks, what each
// event says changed (Loop.Mark, from the source's handlers). One
// goroutine (Loop.Run) takes the marks in batches, debounced (Debounce:
// a quiet period and a maximum), and hands each batch to the view, which
// applies it and publishes its next immutable state; the loop then tells
// the view's subscribers, one call at a time, a new subscriber first the
// current state. Deps indexes what each derived output read (the index
// records the waypoints and network gateways a workload or service read),
// so that a change of one of them marks only the outputs that read it.
//
// ARCHITECTURE.md, "Derived views", says why the core is the project's
// own.
package derived
