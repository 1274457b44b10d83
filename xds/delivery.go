package xds

import (
	"slices"
	"time"
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

// subscribe records a request of a registered stream.
func (n *nodeSet) subscribe(key streamKey, typeURL string, record func(*kindSubscription)) {
	k, ok := kindOf(typeURL)
	if !ok {
		return
	}
	n.streamsMu.Lock()
	nd := n.streams[key].node
	n.streamsMu.Unlock()
	if nd == nil {
		return
	}
	nd.subsMu.Lock()
	defer nd.subsMu.Unlock()
	s := nd.subs[key]
	if s == nil {
		s = &subscriptions{}
		nd.subs[key] = s
	}
	record(&s[k])
}

// owe records that the resources names of each kind changed for a node
// with a change that reached the view at since: a kind one of whose
// streams subscribes to one of them owes its client a response.
func (n *nodeSet) owe(nd *node, names [numKinds][]string, since time.Time) {
	nd.subsMu.Lock()
	defer nd.subsMu.Unlock()
	for k, ns := range names {
		if len(ns) == 0 {
			continue
		}
		wanted := false
		for _, s := range nd.subs {
			if wanted = s[k].wants(ns); wanted {
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
