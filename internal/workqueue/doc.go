// Package workqueue is the one work queue of meshreg's single-worker
// components: producers (informer handlers, a source's notices, workloads
// handed in by the aggregate) record changes in a batch and wake the
// worker; the worker takes the whole batch at once, applies it, and says
// when it is done.
//
// A batch coalesces by key, as its type decides: a map of the latest
// version of each object changed, so that several changes of one object
// before the worker looks are applied once, as their net result. The
// queue's lock is held only to record or to take, never while the worker
// applies a batch, so a producer never waits for the worker's work.
package workqueue
