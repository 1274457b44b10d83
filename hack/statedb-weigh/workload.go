// Package weigh compares two holders of a derived workload index:
// meshreg's own copy-on-write maps (cow.Map + Go maps) and Cilium's StateDB.
package weigh

import (
	"fmt"
	"net/netip"
	"strconv"
)

const (
	NumNamespaces = 200
	PerNamespace  = 500
	NumWorkloads  = NumNamespaces * PerNamespace // 100,000
	PayloadSize   = 300
)

// Workload is the value both holders index. It must not be mutated once
// handed to a holder; an update is a new *Workload.
type Workload struct {
	UID       string // "c1//Pod/ns-007/pod-123"
	Namespace string
	Name      string
	IP        netip.Addr
	Labels    map[string]string // 2 entries
	Payload   []byte            // stands in for the ~300-byte workload message
}

// TableHeader and TableRow exist only because statedb.NewTable requires
// Obj to implement statedb.TableWritable (used by its debug/show commands).
func (w *Workload) TableHeader() []string { return []string{"UID", "IP"} }
func (w *Workload) TableRow() []string    { return []string{w.UID, w.IP.String()} }

func nsName(n int) string { return fmt.Sprintf("ns-%03d", n) }

// ipFor gives workload (ns, i) a distinct IPv4 address in 10.0.0.0/8.
func ipFor(ns, i int) netip.Addr {
	k := ns*PerNamespace + i + 1
	return netip.AddrFrom4([4]byte{10, byte(k >> 16), byte(k >> 8), byte(k)})
}

// NewWorkload allocates one workload; gen distinguishes successive values
// of the same UID (different labels, fresh payload).
func NewWorkload(ns, i, gen int) *Workload {
	namespace := nsName(ns)
	name := "pod-" + strconv.Itoa(i)
	p := make([]byte, PayloadSize)
	p[0] = byte(gen)
	return &Workload{
		UID:       "c1//Pod/" + namespace + "/" + name,
		Namespace: namespace,
		Name:      name,
		IP:        ipFor(ns, i),
		Labels: map[string]string{
			"app":     "app-" + strconv.Itoa(i%50),
			"version": "v" + strconv.Itoa(gen),
		},
		Payload: p,
	}
}

// GenerateAll returns all 100,000 workloads, namespace by namespace.
func GenerateAll() []*Workload {
	ws := make([]*Workload, 0, NumWorkloads)
	for ns := range NumNamespaces {
		for i := range PerNamespace {
			ws = append(ws, NewWorkload(ns, i, 0))
		}
	}
	return ws
}

// GenerateNamespace returns new values for the 500 workloads of ns.
func GenerateNamespace(ns, gen int) []*Workload {
	ws := make([]*Workload, 0, PerNamespace)
	for i := range PerNamespace {
		ws = append(ws, NewWorkload(ns, i, gen))
	}
	return ws
}

// Holder is the common surface of both implementations.
type Holder interface {
	// Apply writes one batch and publishes the new version.
	Apply(batch []*Workload)
	ByUID(uid string) (*Workload, bool)
	ByIP(ip netip.Addr) (*Workload, bool)
	// ListNamespace calls fn for each workload of ns in the current version.
	ListNamespace(ns string, fn func(*Workload))
}
