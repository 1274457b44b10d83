package model

import (
	"testing"
	"unsafe"
)

// An Endpoint is the registry's most numerous value, one per address and
// service port, so its fields are ordered to leave no padded word: on a
// 64-bit platform it fills the allocator's 256-byte size class exactly,
// where one more word would move it to the 288-byte class (6 MB more at
// 200,000 endpoints). Keep the small fields (Port and Weight; TLSMode,
// Health, Serving and WorkloadKind) next to each other.
func TestEndpointFillsItsSizeClass(t *testing.T) {
	if unsafe.Sizeof(uintptr(0)) != 8 {
		t.Skip("the size classes checked are those of 64-bit platforms")
	}
	if got := unsafe.Sizeof(Endpoint{}); got != 256 {
		t.Errorf("unsafe.Sizeof(Endpoint{}) = %d bytes, want 256: a field added or moved left a padded word", got)
	}
}
