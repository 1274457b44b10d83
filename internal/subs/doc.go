// Package subs is a set of subscribers: the functions a component calls
// with each of its changes, added and removed from any goroutine, and
// read as a copy so that they are called without the set's lock.
package subs
