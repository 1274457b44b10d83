package xds

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	cachev3 "github.com/envoyproxy/go-control-plane/pkg/cache/v3"

	"github.com/meshreg/meshreg/model"
	"github.com/meshreg/meshreg/proxyview"
)

// snapshotSource is where nodeSet takes the view's state before the first
// push: a *proxyview.View.
type snapshotSource interface {
	Snapshot() *proxyview.Snapshot
}

// nodeSet keeps the resources of each connected node in a go-control-plane
// SnapshotCache, one snapshot per node ID.
//
// A node is registered by the first request of one of its streams
// (Serve's callbacks): its resources are built then, before the request
// is answered. Its streams are counted; when the last one closes, its
// snapshot is cleared. Push brings every node to the push's snapshot,
// incrementally (see the package doc).
//
// Every node is built from the snapshot of the latest push, so that all
// nodes agree; until a push brings a synced snapshot (the view's initial
// state), from the view's latest snapshot, and that push rebuilds every
// node in full.
type nodeSet struct {
	view  snapshotSource
	cache cachev3.SnapshotCache
	log   *slog.Logger
	// metrics is nil when off.
	metrics *metrics
	// epoch prefixes the versions, so that a client that reconnects to
	// a restarted server never finds its old version reused.
	epoch string
	seq   atomic.Uint64

	// mu guards nodes, cur and pushed (whether a push brought a synced
	// snapshot); it is held while nodes are built
	// and their snapshots set, so that snapshots reach the cache in the
	// order they were built.
	mu     sync.Mutex
	nodes  map[string]*node
	cur    *proxyview.Snapshot
	pushed bool
	// caches hold what nodes share: resources of the service alone, and
	// load assignments.
	caches caches

	// streamsMu guards streams. It may be taken while mu is held, never
	// the other way round.
	streamsMu sync.Mutex
	streams   map[streamKey]*stream
}

// node is one connected node.
type node struct {
	id      string
	streams int         // under nodeSet.mu
	state   *proxyState // under nodeSet.mu
	// client is the kind of client of the node's first stream: the
	// label of what it is owed in the metrics.
	client Client
	// responses counts, per kind, the responses sent on its streams.
	responses [numKinds]atomic.Int64

	// openMu guards open, its streams.
	openMu sync.Mutex
	open   map[streamKey]*stream
	// changedAt holds, per kind, when the oldest change that a stream
	// subscribes to and that was not sent yet reached the view, in Unix
	// nanoseconds; 0 for none.
	changedAt [numKinds]atomic.Int64
}

// streamKey names a stream: the sotw and delta servers number their
// streams each from 1.
type streamKey struct {
	delta bool
	id    int64
}

// newNodeSet returns an empty set of nodes over view; log may be nil.
func newNodeSet(view snapshotSource, log *slog.Logger) *nodeSet {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &nodeSet{
		view:    view,
		cache:   cachev3.NewSnapshotCache(false, cachev3.IDHash{}, cacheLogger{log}),
		log:     log,
		epoch:   strconv.FormatInt(time.Now().UnixNano(), 36),
		nodes:   map[string]*node{},
		caches:  newCaches(),
		streams: map[streamKey]*stream{},
	}
}

// Cache returns the cache the xDS server answers from.
func (n *nodeSet) Cache() cachev3.Cache { return n.cache }

func (n *nodeSet) nextVersion() string {
	return n.epoch + "-" + strconv.FormatUint(n.seq.Add(1), 10)
}

// snapshot returns the snapshot a node registering is built from: that
// of the latest push; until a push brought a synced one, the view's
// latest. The caller holds n.mu.
func (n *nodeSet) snapshot() *proxyview.Snapshot {
	if !n.pushed {
		if s := n.view.Snapshot(); n.cur == nil || s.Generation() > n.cur.Generation() {
			// Anything may have changed since: nothing cached holds.
			n.cur = s
			n.caches.forget(nil, true)
		}
	}
	return n.cur
}

// openStream registers the stream's node on the stream's first request,
// building its resources when it is the node's first stream; later
// requests of the stream do nothing. A node whose metadata ProxyFromNode
// refuses is an error, which refuses the stream.
func (n *nodeSet) openStream(key streamKey, cn *corev3.Node) error {
	n.streamsMu.Lock()
	_, known := n.streams[key]
	n.streamsMu.Unlock()
	if known {
		return nil
	}
	proxy, err := ProxyFromNode(cn)
	if err != nil {
		n.log.Warn("xds node refused", "err", err)
		return err
	}
	client := ClientOf(cn)
	id := cn.GetId()

	n.mu.Lock()
	defer n.mu.Unlock()
	nd := n.nodes[id]
	if nd == nil {
		nd = &node{id: id, client: client, open: map[streamKey]*stream{}}
		n.nodes[id] = nd
	}
	nd.streams++
	n.metrics.streamOpened(client)
	st := &stream{key: key, node: nd, client: client, opened: time.Now()}
	nd.openMu.Lock()
	nd.open[key] = st
	nd.openMu.Unlock()
	n.streamsMu.Lock()
	n.streams[key] = st
	n.streamsMu.Unlock()
	switch {
	case nd.state == nil:
		nd.state = newProxyState(proxy, client)
	case !sameProxy(nd.state.proxy, proxy) || nd.state.client != client:
		// A new stream says something else of the node: it is the
		// node's latest word.
		n.log.Info("xds node metadata changed", "node", id)
		nd.state.proxy, nd.state.client = proxy, client
	default:
		return nil // registered by another stream
	}
	n.update(nd, newBuild(n.snapshot(), n.caches, n.nextVersion, n.log), true, nil, time.Time{})
	n.log.Debug("xds node registered", "node", id, "namespace", proxy.Namespace,
		"cluster", string(proxy.Cluster), "network", string(proxy.Network))
	return nil
}

// closeStream forgets a stream; the node's last stream clears its
// snapshot.
func (n *nodeSet) closeStream(key streamKey) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.streamsMu.Lock()
	st, ok := n.streams[key]
	delete(n.streams, key)
	n.streamsMu.Unlock()
	if !ok {
		return // refused, or closed before its first request
	}
	n.metrics.streamClosed(st.client)
	nd := st.node
	nd.openMu.Lock()
	delete(nd.open, key)
	nd.openMu.Unlock()
	if nd.streams--; nd.streams > 0 {
		return
	}
	n.forgive(nd)
	delete(n.nodes, nd.id)
	n.cache.ClearSnapshot(nd.id)
	n.log.Debug("xds node gone", "node", nd.id)
}

// stream returns a registered stream; nil for one refused or not yet
// registered.
func (n *nodeSet) stream(key streamKey) *stream {
	n.streamsMu.Lock()
	defer n.streamsMu.Unlock()
	return n.streams[key]
}

// responded records a response sent on a stream.
func (n *nodeSet) responded(key streamKey, typeURL string, r Response) {
	var since time.Time
	if st := n.stream(key); st != nil {
		if k, ok := kindOf(typeURL); ok {
			st.node.responses[k].Add(1)
			since = n.paid(st.node, k)
			st.sent(k, r)
		}
	}
	n.metrics.responded(typeURL, r.Resources, since)
}

// update brings one node to b's snapshot and sets its snapshot in the
// cache when anything changed; since is when the changes reached the
// view (zero when none did: the node's first build). The caller holds
// n.mu.
func (n *nodeSet) update(nd *node, b *build, full bool, changed map[model.ServiceKey]bool, since time.Time) {
	names, ok := nd.state.update(b, full, changed)
	if !ok {
		return
	}
	if !since.IsZero() {
		n.owe(nd, names, since)
	}
	// The server's watches have buffered channels, so this does not
	// wait for clients.
	if err := n.cache.SetSnapshot(context.Background(), nd.id, nd.state.served); err != nil {
		n.log.Error("xds snapshot not set", "node", nd.id, "err", err)
	}
}

// Push brings every node to the push's snapshot. It translates again, for
// each node, the services the push names and those whose visibility for
// the node changed; every service when the network gateways changed (any
// endpoint may now be reached another way), on the debouncer's initial
// push and on the first push.
func (n *nodeSet) push(p proxyview.Push) {
	changed := make(map[model.ServiceKey]bool, len(p.Services))
	for _, k := range p.Services {
		changed[k] = true
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	full := p.Initial || p.Gateways || !n.pushed
	snap := p.Snapshot
	if n.cur != nil && n.cur.Generation() > snap.Generation() {
		// Before the first push a node may have registered with a
		// snapshot newer than the push's: keep it rather than step
		// back. Its changes will be in the next push.
		snap = n.cur
	}
	n.pushed, n.cur = snap.Synced(), snap
	// What the nodes share of the services changed, and of every
	// service on a full push, is translated again on first use; that of
	// a service deleted is dropped.
	n.caches.forget(changed, full)
	b := newBuild(snap, n.caches, n.nextVersion, n.log)
	for _, id := range slices.Sorted(maps.Keys(n.nodes)) {
		n.update(n.nodes[id], b, full, changed, p.Since)
	}
}

// NodeStatus is one connected node as nodeSet knows it.
type NodeStatus struct {
	ID    string
	Proxy proxyview.Proxy
	// Snapshot is the view's snapshot the node's resources were last
	// brought to.
	Snapshot *proxyview.Snapshot
	Streams  int
	// Types are the types served, in the order listeners, routes,
	// clusters, load assignments.
	Types []TypeStatus
}

// TypeStatus is what a node is served of one resource type.
type TypeStatus struct {
	TypeURL   string
	Version   string
	Resources int
	// Versions is the number of versions the type was given since the
	// node registered; Responses the number of responses of the type
	// sent on the node's streams.
	Versions  int
	Responses int64
}

// Node returns a connected node's status; false for a node not connected.
func (n *nodeSet) Node(id string) (NodeStatus, bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	nd, ok := n.nodes[id]
	if !ok {
		return NodeStatus{}, false
	}
	st := NodeStatus{ID: id, Proxy: nd.state.proxy, Snapshot: nd.state.snap, Streams: nd.streams}
	for k, url := range typeURLs {
		ks := nd.state.served.kinds[k]
		st.Types = append(st.Types, TypeStatus{
			TypeURL: url, Version: ks.version, Resources: len(ks.raw),
			Versions: nd.state.updates[k], Responses: nd.responses[k].Load(),
		})
	}
	return st, true
}

// IDs returns the IDs of the connected nodes, sorted.
func (n *nodeSet) IDs() []string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return slices.Sorted(maps.Keys(n.nodes))
}

// Counts returns the number of connected nodes and the resources they are
// served, summed over nodes, by type URL.
func (n *nodeSet) Counts() (nodes int, resources map[string]int) {
	n.mu.Lock()
	defer n.mu.Unlock()
	resources = make(map[string]int, numKinds)
	for _, url := range typeURLs {
		resources[url] = 0
	}
	for _, nd := range n.nodes {
		for k, url := range typeURLs {
			resources[url] += len(nd.state.served.kinds[k].raw)
		}
	}
	return len(n.nodes), resources
}

func sameProxy(a, b proxyview.Proxy) bool {
	return a.Namespace == b.Namespace && a.Cluster == b.Cluster && a.Network == b.Network &&
		slices.Equal(a.IPs, b.IPs) && maps.Equal(a.Labels, b.Labels) && a.Locality == b.Locality &&
		a.NodeName == b.NodeName && a.DNSCapture == b.DNSCapture
}

// cacheLogger writes go-control-plane's log lines to a slog.Logger, its
// info lines (one per delta watch) at debug level.
type cacheLogger struct{ log *slog.Logger }

func (l cacheLogger) logf(level slog.Level, format string, args []any) {
	if l.log.Enabled(context.Background(), level) {
		l.log.Log(context.Background(), level, fmt.Sprintf(format, args...))
	}
}

func (l cacheLogger) Debugf(format string, args ...any) { l.logf(slog.LevelDebug, format, args) }
func (l cacheLogger) Infof(format string, args ...any)  { l.logf(slog.LevelDebug, format, args) }
func (l cacheLogger) Warnf(format string, args ...any)  { l.logf(slog.LevelWarn, format, args) }
func (l cacheLogger) Errorf(format string, args ...any) { l.logf(slog.LevelError, format, args) }
