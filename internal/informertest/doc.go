// Package informertest holds what tests of shared informers need: an
// informer that counts the handlers added to it and not removed, to show
// that a registry leaves a shared informer as it found it.
package informertest
