package wds

import (
	"errors"
	"io"
	"log/slog"
	"strconv"
	"sync"
	"time"

	discoverygrpc "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/meshreg/meshreg/address"
	"github.com/meshreg/meshreg/address/workloadapi"
)

// maxPending bounds the keys a stream keeps between two of its
// responses; beyond it, the stream checks every resource instead.
const maxPending = 4096

// stream is one client's delta stream. The index's goroutine records
// changes with notify; the stream's own goroutine (serve) reads the
// client's requests and sends the responses.
type stream struct {
	srv  *Server
	gs   DeltaStream
	log  *slog.Logger
	wake chan struct{} // capacity 1: a change is waiting

	// mu guards snap, pending, all, owed and status.
	mu sync.Mutex
	// snap is the latest snapshot handed to the stream.
	snap *address.Snapshot
	// pending are the keys changed since the client was last brought
	// up to date; all says every resource must be checked instead.
	pending map[string]struct{}
	all     bool
	// owed is when the oldest change recorded and not sent yet reached
	// the index; zero for none, or for changes of unknown age.
	owed time.Time
	// status is what Streams shows of the stream, but Owed.
	status StreamStatus

	// The rest is the stream goroutine's own.
	// client is the client's subscription to Address, from its first
	// request of that type; nil until then.
	client *client
	// started says the first response was sent.
	started bool
	// recheck says the next response checks every resource.
	recheck bool
	// nonce is the last response's.
	nonce string
	// answered holds the other types answered (answerOther).
	answered map[string]struct{}
}

// notify records a generation's changes, which reached the index at
// since; all says they are unknown. It never blocks.
func (st *stream) notify(snap *address.Snapshot, events []address.Event, all bool, since time.Time) {
	st.mu.Lock()
	if st.snap != nil {
		switch g, cur := snap.Generation(), st.snap.Generation(); {
		case g < cur:
			st.mu.Unlock() // an older look (Run's first); the stream is past it
			return
		case g > cur+1:
			all = true // generations missed
		}
	}
	st.snap = snap
	switch {
	case all || st.all:
		st.all, st.pending = true, nil
	default:
		if st.pending == nil {
			st.pending = map[string]struct{}{}
		}
		for _, e := range events {
			st.pending[e.Key] = struct{}{}
		}
		if len(st.pending) > maxPending {
			st.all, st.pending = true, nil
		}
	}
	if st.owed.IsZero() && !since.IsZero() && (all || len(events) > 0) {
		st.owed = since
		st.srv.metrics.Pending(clientKind, 1)
	}
	st.mu.Unlock()
	select {
	case st.wake <- struct{}{}:
	default:
	}
}

// serve serves the stream whose first request is given until it ends.
// Requests for other types (ztunnel's istio.security.Authorization, on
// the same stream) are answered with no resources; Address is served
// from the client's first request of that type on.
func (s *Server) serve(gs DeltaStream, first *discoverygrpc.DeltaDiscoveryRequest) error {
	select {
	case <-s.stopped:
		return status.Error(codes.Unavailable, "wds: server stopped")
	default:
	}
	st := &stream{
		srv:      s,
		gs:       gs,
		log:      s.log.With("node", first.GetNode().GetId()),
		wake:     make(chan struct{}, 1),
		answered: map[string]struct{}{},
		status:   StreamStatus{Node: first.GetNode().GetId(), Opened: time.Now()},
	}
	// Added before it looks at the index, so that no later generation
	// passes it by.
	defer st.forgive() // after remove: no change is recorded after it
	s.add(st)
	defer s.remove(st)
	s.metrics.StreamOpened(clientKind)
	defer s.metrics.StreamClosed(clientKind)
	st.mu.Lock()
	if st.snap == nil {
		st.snap = s.idx.Snapshot()
	}
	st.mu.Unlock()
	st.log.Debug("wds stream opened", "type", first.GetTypeUrl())
	defer st.log.Debug("wds stream closed")
	if _, err := st.handle(first); err != nil {
		return err
	}

	reqs := make(chan *discoverygrpc.DeltaDiscoveryRequest)
	recvErr := make(chan error, 1)
	done := make(chan struct{})
	defer close(done)
	go func() {
		for {
			r, err := gs.Recv()
			if err != nil {
				recvErr <- err
				return
			}
			select {
			case reqs <- r:
			case <-done:
				return
			}
		}
	}()

	ctx := gs.Context()
	for due := true; ; {
		if due {
			if err := st.flush(); err != nil {
				return err
			}
		}
		select {
		case <-ctx.Done():
			return status.FromContextError(ctx.Err()).Err()
		case <-s.stopped:
			return status.Error(codes.Unavailable, "wds: server stopped")
		case err := <-recvErr:
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		case r := <-reqs:
			var err error
			if due, err = st.handle(r); err != nil {
				return err
			}
		case <-st.wake:
			due = true
		}
	}
}

// handle takes one request of the client's; it reports whether its
// subscriptions changed.
func (st *stream) handle(r *discoverygrpc.DeltaDiscoveryRequest) (changed bool, err error) {
	if r.GetTypeUrl() != TypeURL {
		return false, st.answerOther(r)
	}
	if st.client == nil {
		st.client = newClient(r)
		st.subscribed()
		st.log.Debug("wds address subscription", "wildcard", st.client.wildcard, "names", len(st.client.names),
			"initial_resources", len(r.GetInitialResourceVersions()))
		return true, nil
	}
	if n := r.GetResponseNonce(); n != "" {
		if d := r.GetErrorDetail(); d != nil {
			// The client keeps what it had; a NACKed resource is sent
			// again only when it changes.
			st.srv.metrics.Nacked(TypeURL)
			st.log.Warn("wds response rejected", "nonce", n, "code", d.GetCode(), "error", d.GetMessage())
			st.mu.Lock()
			st.status.NACK = d.GetMessage()
			st.mu.Unlock()
		} else if n == st.nonce {
			st.log.Debug("wds response acknowledged", "nonce", n)
			st.mu.Lock()
			st.status.Acked = st.status.Sent
			st.mu.Unlock()
		}
	}
	if st.client.subscribe(r.GetResourceNamesSubscribe()) {
		st.recheck = true
	}
	st.client.unsubscribe(r.GetResourceNamesUnsubscribe())
	st.subscribed()
	return len(r.GetResourceNamesSubscribe())+len(r.GetResourceNamesUnsubscribe()) > 0, nil
}

// answerOther answers a request for a type the server does not serve
// with no resources, the names it subscribes to removed: once for the
// type's first request, and for each request that subscribes to names.
// ztunnel, which asks for istio.security.Authorization on the same
// stream, is ready once each type it asked for was answered.
func (st *stream) answerOther(r *discoverygrpc.DeltaDiscoveryRequest) error {
	_, seen := st.answered[r.GetTypeUrl()]
	var removed []string
	for _, n := range r.GetResourceNamesSubscribe() {
		if n != wildcard {
			removed = append(removed, n)
		}
	}
	if seen && len(removed) == 0 {
		return nil
	}
	st.answered[r.GetTypeUrl()] = struct{}{}
	st.log.Debug("wds answering a type it does not serve with nothing", "type", r.GetTypeUrl())
	if err := st.gs.Send(&discoverygrpc.DeltaDiscoveryResponse{TypeUrl: r.GetTypeUrl(), RemovedResources: removed, Nonce: st.srv.nextNonce()}); err != nil {
		return err
	}
	st.srv.metrics.Responded(r.GetTypeUrl(), 0, time.Time{})
	return nil
}

// flush sends the client what changed for it, if anything did; the
// first response waits for the client's first Address request and the
// index's sync, and is sent even when empty.
func (st *stream) flush() error {
	if st.client == nil {
		return nil // Address not asked for yet
	}
	st.mu.Lock()
	snap, pending, all, owed := st.snap, st.pending, st.all, st.owed
	if !st.started && !snap.Synced() {
		st.mu.Unlock()
		return nil
	}
	st.pending, st.all, st.owed = nil, false, time.Time{}
	st.mu.Unlock()
	if !owed.IsZero() {
		st.srv.metrics.Pending(clientKind, -1)
	}

	all = all || st.recheck || !st.started
	st.recheck = false
	resources, removed := st.client.diff(snap, pending, all, st.encode)
	if st.started && len(resources) == 0 && len(removed) == 0 {
		return nil
	}
	st.started = true
	resp := &discoverygrpc.DeltaDiscoveryResponse{
		SystemVersionInfo: strconv.FormatUint(snap.Generation(), 10),
		TypeUrl:           TypeURL,
		Resources:         resources,
		RemovedResources:  removed,
		Nonce:             st.srv.nextNonce(),
	}
	st.nonce = resp.Nonce
	if err := st.gs.Send(resp); err != nil {
		return err
	}
	st.mu.Lock()
	st.status.Sent = Response{Version: resp.SystemVersionInfo, Nonce: resp.Nonce, Resources: len(resources), At: time.Now()}
	st.mu.Unlock()
	st.srv.metrics.Responded(TypeURL, len(resources), owed)
	return nil
}

// subscribed records the client's subscription in the stream's status.
func (st *stream) subscribed() {
	st.mu.Lock()
	st.status.Wildcard, st.status.Subscribed = st.client.wildcard, len(st.client.names)
	st.mu.Unlock()
}

// forgive drops what the stream is owed when it ends.
func (st *stream) forgive() {
	st.mu.Lock()
	owed := st.owed
	st.owed = time.Time{}
	st.mu.Unlock()
	if !owed.IsZero() {
		st.srv.metrics.Pending(clientKind, -1)
	}
}

func (st *stream) encode(key string, a *workloadapi.Address) (encoded, bool) {
	e, err := st.srv.enc.encode(key, a)
	if err != nil {
		st.log.Error("wds resource not encoded; skipped", "key", key, "error", err.Error())
		return encoded{}, false
	}
	return e, true
}
