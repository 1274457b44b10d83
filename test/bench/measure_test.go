package bench

import (
	"os"
	"runtime"
	"strings"
	"testing"
)

// TestProcessUsageCountsFaults: touching memory the process never used
// shows in the minor page faults, and CPU time only grows.
func TestProcessUsageCountsFaults(t *testing.T) {
	const size = 64 << 20 // more than any earlier test left free
	u0 := processUsage()
	buf := make([]byte, size)
	for i := 0; i < len(buf); i += 4096 {
		buf[i] = 1
	}
	u1 := processUsage()
	runtime.KeepAlive(buf)
	// Each page is a fault: 4 KiB ones, or 2 MiB ones where the kernel
	// backs all memory with transparent huge pages. Ask for a tenth.
	page := 4096
	if b, err := os.ReadFile("/sys/kernel/mm/transparent_hugepage/enabled"); err == nil && strings.Contains(string(b), "[always]") {
		page = 2 << 20
	}
	if got, want := u1.minorFaults-u0.minorFaults, int64(size/page/10); got < want {
		t.Errorf("%d minor faults touching %d MiB of fresh memory, want at least %d", got, size>>20, want)
	}
	if u1.user < u0.user || u1.system < u0.system {
		t.Errorf("CPU time went back: %+v then %+v", u0, u1)
	}
}
