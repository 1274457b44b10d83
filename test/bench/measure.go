package bench

import (
	"cmp"
	"math"
	"runtime"
	"slices"
	"syscall"
	"time"
)

// heapStats is the heap after a full collection.
type heapStats struct {
	alloc, inuse int64
}

// liveHeap collects garbage twice (finalizers and sweeping settle) and
// reads the heap.
func liveHeap() heapStats {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return heapStats{alloc: int64(m.HeapAlloc), inuse: int64(m.HeapInuse)}
}

// cpuTime is the process's user plus system CPU time so far. Other
// processes on the machine do not count, which makes it steadier than
// wall time on a shared machine.
func cpuTime() time.Duration {
	u := processUsage()
	return u.user + u.system
}

// usage is what the process has used so far: CPU time in user space and
// in the kernel, and minor page faults (first touches of memory the
// process had not used, which the kernel zeroes and maps).
type usage struct {
	user, system time.Duration
	minorFaults  int64
}

// processUsage returns the process's usage so far; zero when the system
// does not tell.
func processUsage() usage {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return usage{}
	}
	return usage{
		user:        time.Duration(ru.Utime.Nano()),
		system:      time.Duration(ru.Stime.Nano()),
		minorFaults: int64(ru.Minflt),
	}
}

// percentile returns the p-th percentile (0..1) of sorted ds by the
// nearest-rank method; 0 for none.
func percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(math.Ceil(p*float64(len(sorted)))) - 1
	return sorted[max(0, min(i, len(sorted)-1))]
}

// median returns the median of xs (the mean of the middle two for an
// even count); 0 for none.
func median[T int64 | float64](xs []T) T {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.SortFunc(s, cmp.Compare)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// allocs reads the allocation counters.
func allocs() runtime.MemStats {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m
}
