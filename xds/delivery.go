package xds

import (
	"cmp"
	"slices"
	"strings"
	"sync"
	"time"

	rpcstatus "google.golang.org/genproto/googleapis/rpc/status"
)

// wildcardName is the resource name that subscribes to every resource of
// a type.
const wildcardName = "*"

// subscriptions are what one stream asked for, per kind.
type subscriptions [numKinds]kindSubscription

// kindSubscription is what a stream asked for of one kind.
type kindSubscription struct {
	asked    bool
	wildcard bool
	names    map[string]struct{}
}

// replace takes a state-of-the-world request's names: all of them, none
// (or "*") for every resource.
func (s *kindSubscription) replace(names []string) {
	s.asked = true
	s.wildcard = len(names) == 0 || slices.Contains(names, wildcardName)
	s.names = make(map[string]struct{}, len(names))
	for _, n := range names {
		s.names[n] = struct{}{}
	}
}

// change takes a delta request's subscribe and unsubscribe lists; the
// first request of the kind subscribes to every resource when it names
// none.
func (s *kindSubscription) change(subscribe, unsubscribe []string) {
	if !s.asked {
		s.asked, s.wildcard = true, len(subscribe) == 0
		s.names = map[string]struct{}{}
	}
	for _, n := range subscribe {
		if n == wildcardName {
			s.wildcard = true
		} else {
			s.names[n] = struct{}{}
		}
	}
	for _, n := range unsubscribe {
		if n == wildcardName {
			s.wildcard = false
		} else {
			delete(s.names, n)
		}
	}
}

// wants reports whether the subscription holds one of names.
func (s *kindSubscription) wants(names []string) bool {
	if !s.asked {
		return false
	}
	if s.wildcard {
		return true
	}
	for _, n := range names {
		if _, ok := s.names[n]; ok {
			return true
		}
	}
	return false
}

// stream is a registered stream: its node, the kind of client it was
// opened by, what it subscribes to and what it was sent.
type stream struct {
	key    streamKey
	node   *node
	client Client
	opened time.Time

	// mu guards subs and types.
	mu    sync.Mutex
	subs  subscriptions
	types [numKinds]typeLog
}

// typeLog is what a stream was last sent of a type, and what its client
// said of it.
type typeLog struct {
	sent, acked Response
	nack        string
}

// Response is one response sent on a stream, as StreamStatus shows it.
type Response struct {
	// Version is the response's version (a delta response's system
	// version); Nonce its nonce.
	Version, Nonce string
	// Resources is the number of resources it held.
	Resources int
	// At is when it was sent.
	At time.Time
}

// request records a request of the stream's for kind k: what it
// subscribes to (record), and whether it acknowledges or rejects the
// response it names. It returns the rejection's message; "" for none.
func (st *stream) request(k kind, nonce string, nack *rpcstatus.Status, record func(*kindSubscription)) {
	st.mu.Lock()
	defer st.mu.Unlock()
	record(&st.subs[k])
	if nonce == "" {
		return
	}
	l := &st.types[k]
	switch {
	case nack != nil:
		l.nack = nack.GetMessage()
	case nonce == l.sent.Nonce:
		l.acked = l.sent
	}
}

// sent records a response of kind k.
func (st *stream) sent(k kind, r Response) {
	st.mu.Lock()
	st.types[k].sent = r
	st.mu.Unlock()
}

// wants reports whether the stream subscribes to one of names of kind k.
func (st *stream) wants(k kind, names []string) bool {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.subs[k].wants(names)
}

// owe records that the resources names of each kind changed for a node
// with a change that reached the view at since: a kind one of whose
// streams subscribes to one of them owes its client a response.
func (n *nodeSet) owe(nd *node, names [numKinds][]string, since time.Time) {
	nd.openMu.Lock()
	defer nd.openMu.Unlock()
	for k, ns := range names {
		if len(ns) == 0 {
			continue
		}
		wanted := false
		for _, st := range nd.open {
			if wanted = st.wants(kind(k), ns); wanted {
				break
			}
		}
		if wanted && nd.changedAt[k].CompareAndSwap(0, since.UnixNano()) {
			n.metrics.pending(nd.client, 1)
		}
	}
}

// paid records a response of a kind to a node, and returns when the
// oldest change it carries reached the view; zero when it carries none
// (an answer to a request).
func (n *nodeSet) paid(nd *node, k kind) time.Time {
	at := nd.changedAt[k].Swap(0)
	if at == 0 {
		return time.Time{}
	}
	n.metrics.pending(nd.client, -1)
	return time.Unix(0, at)
}

// forgive drops what a node gone owes.
func (n *nodeSet) forgive(nd *node) {
	for k := range numKinds {
		if nd.changedAt[k].Swap(0) != 0 {
			n.metrics.pending(nd.client, -1)
		}
	}
}

// StreamStatus is one open stream as the server knows it.
type StreamStatus struct {
	// Node is the ID of the stream's node, Client its kind.
	Node   string
	Client Client
	// Delta says the stream is a delta one; ID is its number among
	// those of its variant.
	Delta bool
	ID    int64
	// Opened is when its first request registered it.
	Opened time.Time
	// Types are the types it asked for, in the order listeners, routes,
	// clusters, load assignments.
	Types []StreamType
}

// StreamType is what a stream asked for of one type and was sent.
type StreamType struct {
	TypeURL string
	// Wildcard says it subscribes to every resource; Subscribed is the
	// number of names it subscribes to besides.
	Wildcard   bool
	Subscribed int
	// Sent is the last response sent, Acked the last one its client
	// acknowledged (zero for none).
	Sent, Acked Response
	// NACK is the message of the last rejection; "" for none.
	NACK string
	// Owed is when the oldest change to a resource of the type that the
	// node's streams subscribe to and that was not sent yet reached the
	// view; zero for none.
	Owed time.Time
}

// status returns the stream's status.
func (st *stream) status() StreamStatus {
	out := StreamStatus{Node: st.node.id, Client: st.client, Delta: st.key.delta, ID: st.key.id, Opened: st.opened}
	st.mu.Lock()
	defer st.mu.Unlock()
	for k, sub := range st.subs {
		if !sub.asked {
			continue
		}
		t := StreamType{
			TypeURL: typeURLs[k], Wildcard: sub.wildcard, Subscribed: len(sub.names),
			Sent: st.types[k].sent, Acked: st.types[k].acked, NACK: st.types[k].nack,
		}
		if at := st.node.changedAt[k].Load(); at != 0 {
			t.Owed = time.Unix(0, at)
		}
		out.Types = append(out.Types, t)
	}
	return out
}

// Streams returns the open streams whose node registered, by node ID,
// then state-of-the-world before delta, then number.
func (s *Server) Streams() []StreamStatus {
	s.nodes.streamsMu.Lock()
	streams := make([]*stream, 0, len(s.nodes.streams))
	for _, st := range s.nodes.streams {
		streams = append(streams, st)
	}
	s.nodes.streamsMu.Unlock()
	out := make([]StreamStatus, 0, len(streams))
	for _, st := range streams {
		out = append(out, st.status())
	}
	slices.SortFunc(out, func(a, b StreamStatus) int {
		if c := strings.Compare(a.Node, b.Node); c != 0 {
			return c
		}
		if a.Delta != b.Delta {
			if b.Delta {
				return -1
			}
			return 1
		}
		return cmp.Compare(a.ID, b.ID)
	})
	return out
}
