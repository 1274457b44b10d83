package kube

import "encoding/binary"

// portMaps interns the port maps of pod workloads. The replicas of a
// Deployment name the same container ports, so their workload instances
// can share one immutable map instead of holding a copy each (a small map
// costs about 250 bytes). Each map is counted by the pod memos
// (podMemo) whose workload holds it, and goes with the last of them.
// Not safe for concurrent use: the Controller's worker owns it, and the
// initial conversion's goroutines share it under a mutex (memoizePods).
type portMaps struct {
	m map[string]*portMapRef
}

type portMapRef struct {
	key   string
	ports map[string]uint32
	refs  int
}

// acquire returns the shared port map of a pod (podPortMap's result),
// counting one more user; release(pod) gives it back. A pod without valid
// named ports gets nil.
func (t *portMaps) acquire(pod *podInfo) map[string]uint32 {
	if len(pod.ports) == 0 {
		return nil
	}
	var buf [128]byte
	k := portsKey(buf[:0], pod.ports)
	if r, ok := t.m[string(k)]; ok {
		r.refs++
		return r.ports
	}
	ports := podPortMap(pod)
	if ports == nil {
		return nil // no valid port: nothing to share
	}
	if t.m == nil {
		t.m = map[string]*portMapRef{}
	}
	r := &portMapRef{key: string(k), ports: ports, refs: 1}
	t.m[r.key] = r
	return r.ports
}

// release gives back the map acquire(pod) returned, for the same
// (immutable) pod object.
func (t *portMaps) release(pod *podInfo) {
	if len(pod.ports) == 0 {
		return
	}
	var buf [128]byte
	k := portsKey(buf[:0], pod.ports)
	if r, ok := t.m[string(k)]; ok {
		if r.refs--; r.refs <= 0 {
			delete(t.m, r.key)
		}
	}
}

// portsKey appends an unambiguous encoding of ports to buf: each name,
// length-prefixed, and its number.
func portsKey(buf []byte, ports []namedPort) []byte {
	for _, p := range ports {
		buf = binary.AppendUvarint(buf, uint64(len(p.name)))
		buf = append(buf, p.name...)
		buf = binary.BigEndian.AppendUint32(buf, uint32(p.port))
	}
	return buf
}
