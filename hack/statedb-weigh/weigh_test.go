package weigh

import (
	"math/rand/v2"
	"net/netip"
	"runtime"
	"testing"
)

var holders = []struct {
	name string
	new  func() Holder
}{
	{"own", func() Holder { return NewOwn() }},
	{"statedb", func() Holder { return NewStateDB() }},
}

// TestSame checks both holders answer the same after a build and a replace.
func TestSame(t *testing.T) {
	ws := GenerateAll()
	repl := GenerateNamespace(7, 1)
	for _, h := range holders {
		t.Run(h.name, func(t *testing.T) {
			x := h.new()
			x.Apply(ws)
			x.Apply(repl)
			for _, w := range ws {
				got, ok := x.ByUID(w.UID)
				if !ok || got.UID != w.UID {
					t.Fatalf("ByUID(%s) = %v, %v", w.UID, got, ok)
				}
				byIP, ok := x.ByIP(w.IP)
				if !ok || byIP != got {
					t.Fatalf("ByIP(%s) = %v, %v", w.IP, byIP, ok)
				}
			}
			for ns := range NumNamespaces {
				n, gen := 0, 0
				x.ListNamespace(nsName(ns), func(w *Workload) { n++; gen += int(w.Payload[0]) })
				want := 0
				if ns == 7 {
					want = PerNamespace
				}
				if n != PerNamespace || gen != want {
					t.Fatalf("ns %d: %d workloads, gen sum %d", ns, n, gen)
				}
			}
		})
	}
}

func heapAlloc() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// BenchmarkHeap (a): heap held after building all 100,000 workloads.
// data-B/wl is the workloads themselves (struct, strings, labels map,
// 300-byte payload); holder-B/wl is what the holder adds; total-B/wl both.
func BenchmarkHeap(b *testing.B) {
	for _, h := range holders {
		b.Run(h.name, func(b *testing.B) {
			var data, holder float64
			for range b.N {
				m0 := heapAlloc()
				ws := GenerateAll()
				m1 := heapAlloc()
				x := h.new()
				x.Apply(ws)
				m2 := heapAlloc()
				runtime.KeepAlive(ws)
				runtime.KeepAlive(x)
				data += float64(m1-m0) - float64(8*cap(ws)) // minus the []*Workload backing array
				holder += float64(m2 - m1)
			}
			n := float64(b.N) * NumWorkloads
			b.ReportMetric(data/n, "data-B/wl")
			b.ReportMetric(holder/n, "holder-B/wl")
			b.ReportMetric((data+holder)/n, "total-B/wl")
		})
	}
}

// BenchmarkBuild (b): one batch of all 100,000 into an empty holder.
// The workloads are allocated beforehand, outside the timer.
func BenchmarkBuild(b *testing.B) {
	ws := GenerateAll()
	for _, h := range holders {
		b.Run(h.name, func(b *testing.B) {
			b.ReportAllocs()
			for range b.N {
				b.StopTimer()
				x := h.new()
				b.StartTimer()
				x.Apply(ws)
			}
		})
	}
}

// BenchmarkReplaceNamespace (c): one batch replacing the 500 workloads of
// ns-007 with new values (new labels and payload; UID, namespace and IP
// unchanged), publishing a new version. Two pre-allocated value sets
// alternate so every insert is a new pointer.
func BenchmarkReplaceNamespace(b *testing.B) {
	ws := GenerateAll()
	sets := [2][]*Workload{GenerateNamespace(7, 1), GenerateNamespace(7, 2)}
	for _, h := range holders {
		b.Run(h.name, func(b *testing.B) {
			x := h.new()
			x.Apply(ws)
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				x.Apply(sets[i&1])
			}
		})
	}
}

func shuffled(ws []*Workload) []*Workload {
	s := append([]*Workload(nil), ws...)
	rand.New(rand.NewPCG(1, 2)).Shuffle(len(s), func(i, j int) { s[i], s[j] = s[j], s[i] })
	return s
}

// BenchmarkGetByUID (d): one lookup by UID, UIDs visited in shuffled order.
func BenchmarkGetByUID(b *testing.B) {
	ws := GenerateAll()
	order := shuffled(ws)
	for _, h := range holders {
		b.Run(h.name, func(b *testing.B) {
			x := h.new()
			x.Apply(ws)
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				if _, ok := x.ByUID(order[i%len(order)].UID); !ok {
					b.Fatal("missing")
				}
			}
		})
	}
}

// BenchmarkGetByIP: one lookup by IP, shuffled order.
func BenchmarkGetByIP(b *testing.B) {
	ws := GenerateAll()
	order := shuffled(ws)
	ips := make([]netip.Addr, len(order))
	for i, w := range order {
		ips[i] = w.IP
	}
	for _, h := range holders {
		b.Run(h.name, func(b *testing.B) {
			x := h.new()
			x.Apply(ws)
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				if _, ok := x.ByIP(ips[i%len(ips)]); !ok {
					b.Fatal("missing")
				}
			}
		})
	}
}

// BenchmarkListNamespace (d): visit all 500 workloads of one namespace,
// namespaces in turn.
func BenchmarkListNamespace(b *testing.B) {
	ws := GenerateAll()
	names := make([]string, NumNamespaces)
	for i := range names {
		names[i] = nsName(i)
	}
	for _, h := range holders {
		b.Run(h.name, func(b *testing.B) {
			x := h.new()
			x.Apply(ws)
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				n := 0
				x.ListNamespace(names[i%len(names)], func(w *Workload) { n += len(w.Name) })
				if n == 0 {
					b.Fatal("empty")
				}
			}
		})
	}
}

// BenchmarkReplaceOne (extra, not in the brief): one batch replacing a
// single workload, to separate per-batch fixed cost from per-shard copying.
func BenchmarkReplaceOne(b *testing.B) {
	ws := GenerateAll()
	sets := [2][]*Workload{{NewWorkload(7, 123, 1)}, {NewWorkload(7, 123, 2)}}
	for _, h := range holders {
		b.Run(h.name, func(b *testing.B) {
			x := h.new()
			x.Apply(ws)
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				x.Apply(sets[i&1])
			}
		})
	}
}
