package model

import (
	"testing"
	"unsafe"
)

// An Endpoint is the registry's most numerous value, one per address and
// service port, so its fields are ordered to leave no padded word: on a
// 64-bit platform it takes 264 bytes of the allocator's 288-byte size
// class (the topology hints' pointer moved it out of the 256-byte one),
// which leaves three words for fields to come before the next class,
// 320. Keep the small fields (Port and Weight; TLSMode, Health, Serving
// and WorkloadKind) next to each other.
func TestEndpointFillsItsSizeClass(t *testing.T) {
	if unsafe.Sizeof(uintptr(0)) != 8 {
		t.Skip("the size classes checked are those of 64-bit platforms")
	}
	if got := unsafe.Sizeof(Endpoint{}); got != 264 {
		t.Errorf("unsafe.Sizeof(Endpoint{}) = %d bytes, want 264: a field added or moved left a padded word (or, added, update this test and its size class)", got)
	}
}
