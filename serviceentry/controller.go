package serviceentry

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	networkingv1 "istio.io/client-go/pkg/apis/networking/v1"

	"github.com/meshreg/meshreg/internal/metrics"
	"github.com/meshreg/meshreg/internal/store"
	"github.com/meshreg/meshreg/internal/syncreport"
	"github.com/meshreg/meshreg/internal/workqueue"
	"github.com/meshreg/meshreg/model"
	"github.com/meshreg/meshreg/registry"
)

// Controller is the registry of a Source's ServiceEntries and
// WorkloadEntries, with the workloads of other registries handed in by
// HandleWorkload (Pods, and other clusters' WorkloadEntries). With
// Options.WorkloadEntriesOnly it is a cluster's WorkloadEntry registry
// alone. It implements registry.Registry; it is safe for concurrent use.
//
// Changes are applied by one worker goroutine that Run starts: the
// source's events and HandleWorkload only queue the objects that
// changed, and the worker recomputes what depends on them (a
// WorkloadEntry or Pod change recomputes only the entries that select it)
// and writes the result to the store, which publishes the differences.
type Controller struct {
	opts Options
	src  Source
	// store holds the registry's state: the worker writes it, the
	// queries and subscriptions read it (queries.go).
	store *store.Store
	// metrics is nil unless Options.Metrics is set.
	metrics *metrics.Registry
	state   *state    // owned by the worker goroutine
	nsf     *nsFilter // owned by the worker goroutine
	// nsViews holds what each namespace's entries were last converted
	// with of it, for the namespaces where it is not the zero value;
	// owned by the worker goroutine.
	nsViews map[string]nsView

	ran atomic.Bool

	// in holds the changes waiting for the worker.
	in *workqueue.Queue[queued]
}

// queued are the changes waiting for the worker: the objects of the
// source that changed, and the latest version of each workload handed in.
type queued struct {
	refs   map[Ref]struct{}
	handed map[model.WorkloadKey]handedChange
}

func newQueued() queued {
	return queued{refs: map[Ref]struct{}{}, handed: map[model.WorkloadKey]handedChange{}}
}

func (q *queued) empty() bool { return len(q.refs) == 0 && len(q.handed) == 0 }

// handedChange is the current version of a workload handed in by
// HandleWorkload, nil once deleted.
type handedChange struct{ current *model.WorkloadInstance }

var (
	_ registry.Registry        = (*Controller)(nil)
	_ registry.WorkloadHandler = (*Controller)(nil)
	_ registry.Settler         = (*Controller)(nil)
	_ registry.SyncReporter    = (*Controller)(nil)
)

// New returns a controller over src. It does nothing until Run. With a
// NamespaceSelector, src must be a NamespaceSource that holds namespaces.
func New(src Source, opts Options) (*Controller, error) {
	if src == nil {
		return nil, errors.New("serviceentry: nil Source")
	}
	opts = opts.defaults()
	if opts.SyncReportInterval < 0 {
		return nil, fmt.Errorf("serviceentry: negative SyncReportInterval %v", opts.SyncReportInterval)
	}
	nsf, err := newNSFilter(opts.NamespaceSelector, src)
	if err != nil {
		return nil, err
	}
	st := store.New()
	m, err := metrics.New(opts.Metrics, model.External.String(), opts.ClusterID)
	if err != nil {
		return nil, fmt.Errorf("serviceentry: %w", err)
	}
	if m != nil {
		st.Observe(m)
	}
	c := &Controller{
		metrics: m,
		opts:    opts,
		src:     src,
		store:   st,
		nsf:     nsf,
		nsViews: map[string]nsView{},
		state:   newState(convCtx{Cluster: opts.ClusterID, TrustDomain: opts.TrustDomain}, st, opts.Logger),
		in:      workqueue.New(newQueued(), (*queued).empty),
	}
	m.Watch(metrics.State{Discovery: c, QueueDepths: st.QueueDepths, SyncPending: c.PendingSync})
	return c, nil
}

// Provider returns model.External.
func (c *Controller) Provider() model.Provider { return model.External }

// Cluster returns the cluster the registry reports under.
func (c *Controller) Cluster() model.ClusterID { return c.opts.ClusterID }

// HandleWorkload takes a workload event from another registry, wired by
// the aggregate, so that workloadSelectors select it in the entries'
// namespaces: the Pods of every cluster's kube controller, and the
// WorkloadEntries of other clusters' registries (a remote cluster's
// WorkloadEntriesOnly registry), as Istio's ServiceEntry controller takes
// both in. Taken workloads keep their cluster on the endpoints they give.
// Ignored: a WorkloadEntry addressed by a DNS name or unix socket (Istio's
// registries never hand those over: they back their own registry's DNS
// entries only), one of this registry's own cluster (its own
// WorkloadEntries come from its source), other kinds, and every event in
// WorkloadEntriesOnly mode. It may be called before Run and from any
// goroutine; it never blocks on the worker.
func (c *Controller) HandleWorkload(ev registry.WorkloadEvent) {
	w := ev.Workload()
	if w == nil || c.opts.WorkloadEntriesOnly || !c.takes(ev.Current) && !c.takes(ev.Previous) {
		return
	}
	cur := ev.Current
	if ev.Type == model.EventDelete || !c.takes(cur) {
		cur = nil
	}
	c.in.Add(func(q *queued) { q.handed[w.Key()] = handedChange{current: cur} })
}

// takes reports whether HandleWorkload takes a workload in.
func (c *Controller) takes(w *model.WorkloadInstance) bool {
	switch {
	case w == nil:
		return false
	case w.Kind == model.KindPod:
		// Only a pod that can serve: Ready, not being deleted.
		return w.Endpoint.Health == model.Healthy
	case w.Kind == model.KindWorkloadEntry:
		return w.Endpoint.Hostname == "" && w.Endpoint.Cluster != c.opts.ClusterID
	}
	return false
}

// enqueue is the source's event handler.
func (c *Controller) enqueue(r Ref) {
	c.in.Add(func(q *queued) { q.refs[r] = struct{}{} })
}

// Run runs the source and the worker until ctx is done, then stops both
// and returns nil. The registry is synced (HasSynced) once the source has
// synced and its initial state has been converted and delivered. Run
// returns the source's error if the source stops on its own, and
// an error wrapping registry.ErrAlreadyRunning when called a second time.
func (c *Controller) Run(ctx context.Context) error {
	if !c.ran.CompareAndSwap(false, true) {
		return fmt.Errorf("serviceentry: controller of cluster %s: %w", c.opts.ClusterID, registry.ErrAlreadyRunning)
	}
	defer c.metrics.Unregister()
	start := time.Now()
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()

	unsubscribe := c.src.Subscribe(c.enqueue)
	defer unsubscribe()
	srcDone := make(chan error, 1)
	wg.Go(func() { srcDone <- c.src.Run(ctx) })
	wg.Go(func() {
		syncreport.Watch(ctx, c.opts.Logger.With("cluster", string(c.opts.ClusterID)), c.opts.SyncReportInterval, c.PendingSync)
	})

	if err := c.waitForSource(ctx, srcDone); err != nil || ctx.Err() != nil {
		return err
	}
	c.initialSync()
	c.store.MarkSynced()
	c.metrics.Synced(time.Since(start))
	c.opts.Logger.Info("ServiceEntry registry synced", "cluster", c.opts.ClusterID)

	for {
		select {
		case <-ctx.Done():
			return nil
		case err := <-srcDone:
			if ctx.Err() != nil {
				return nil
			}
			return sourceStopped(err)
		case <-c.in.Wake():
			c.process()
		}
	}
}

func sourceStopped(err error) error {
	if err == nil {
		return errors.New("serviceentry: source stopped")
	}
	return err
}

// waitForSource waits until the source has synced, ctx is done, or the
// source stops.
func (c *Controller) waitForSource(ctx context.Context, srcDone <-chan error) error {
	select {
	case <-c.src.Synced():
		return nil
	case <-ctx.Done():
		return nil
	case err := <-srcDone:
		if ctx.Err() != nil {
			return nil
		}
		return sourceStopped(err)
	}
}

// Settled reports whether every change queued so far (source events and
// workloads handed in through HandleWorkload) has been applied, and every
// event that produced has reached the subscribers. The aggregate waits for
// it, so that its HasSynced covers the Pods it hands this registry.
func (c *Controller) Settled() bool { return c.in.Idle() && c.store.Idle() }

// take returns the queued changes, the refs sorted; the worker calls
// c.in.Done when it has applied them.
func (c *Controller) take() ([]Ref, map[model.WorkloadKey]handedChange) {
	q := c.in.Take(newQueued())
	refs := slices.SortedFunc(maps.Keys(q.refs), compareRefs)
	return refs, q.handed
}

// initialSync converts the source's whole state at once, so that VIPs
// are allocated over the complete set of hosts.
func (c *Controller) initialSync() {
	defer c.in.Done()
	_, handed := c.take() // the listing below covers the queued refs
	d := dirty{}
	c.applyHanded(handed, d)
	for _, we := range c.src.WorkloadEntries() {
		if c.nsf.selected(we.Namespace) {
			c.state.setWorkloadEntry(nsName{we.Namespace, we.Name}, we, d)
		}
	}
	for _, se := range c.serviceEntries() {
		if c.nsf.selected(se.Namespace) {
			c.state.setServiceEntry(nsName{se.Namespace, se.Name}, se, c.namespaceView(se.Namespace), d)
		}
	}
	c.state.flush(d)
}

// serviceEntries returns the source's ServiceEntries; none in
// WorkloadEntriesOnly mode.
func (c *Controller) serviceEntries() []*networkingv1.ServiceEntry {
	if c.opts.WorkloadEntriesOnly {
		return nil
	}
	return c.src.ServiceEntries()
}

// process applies the queued changes: namespaces first, whose change of
// selection re-applies all their objects; then workloads, so that entries
// converted in the same batch see them.
func (c *Controller) process() {
	defer c.in.Done()
	refs, handed := c.take()
	refs = c.namespaceChanges(refs)
	d := dirty{}
	c.applyHanded(handed, d)
	for _, r := range refs {
		if r.Kind == KindWorkloadEntry {
			c.state.setWorkloadEntry(nsName{r.Namespace, r.Name}, c.workloadEntry(r), d)
		}
	}
	for _, r := range refs {
		if r.Kind == KindServiceEntry && !c.opts.WorkloadEntriesOnly {
			c.state.setServiceEntry(nsName{r.Namespace, r.Name}, c.serviceEntry(r), c.namespaceView(r.Namespace), d)
		}
	}
	c.state.flush(d)
}

// namespaceChanges returns refs with the ServiceEntries and WorkloadEntries
// of each namespace whose selection the namespace's change (a ref of refs)
// turned, and the ServiceEntries of each whose view (traffic
// distribution annotation, entries' visibility) changed, sorted, without
// duplicates.
func (c *Controller) namespaceChanges(refs []Ref) []Ref {
	var turned, traffic []string
	for _, r := range refs {
		if r.Kind != KindNamespace {
			continue
		}
		if c.nsf.redecide(r.Name) {
			turned = append(turned, r.Name)
		}
		if was := c.nsViews[r.Name]; was != c.namespaceView(r.Name) {
			traffic = append(traffic, r.Name)
		}
	}
	if len(turned) == 0 && len(traffic) == 0 {
		return refs
	}
	for _, se := range c.serviceEntries() {
		if slices.Contains(turned, se.Namespace) || slices.Contains(traffic, se.Namespace) {
			refs = append(refs, Ref{KindServiceEntry, se.Namespace, se.Name})
		}
	}
	for _, we := range c.src.WorkloadEntries() {
		if slices.Contains(turned, we.Namespace) {
			refs = append(refs, Ref{KindWorkloadEntry, we.Namespace, we.Name})
		}
	}
	slices.SortFunc(refs, compareRefs)
	return slices.Compact(refs)
}

// serviceEntry reads a ServiceEntry from the source, nil when absent or
// of a namespace the selector leaves out.
func (c *Controller) serviceEntry(r Ref) *networkingv1.ServiceEntry {
	if !c.nsf.selected(r.Namespace) {
		return nil
	}
	return c.src.ServiceEntry(r.Namespace, r.Name)
}

// workloadEntry is serviceEntry for WorkloadEntries.
func (c *Controller) workloadEntry(r Ref) *networkingv1.WorkloadEntry {
	if !c.nsf.selected(r.Namespace) {
		return nil
	}
	return c.src.WorkloadEntry(r.Namespace, r.Name)
}

// applyHanded applies the workloads handed in, in key order.
func (c *Controller) applyHanded(handed map[model.WorkloadKey]handedChange, d dirty) {
	for _, k := range slices.SortedFunc(maps.Keys(handed), model.WorkloadKey.Compare) {
		c.state.setWorkload(k, k.Namespace, handed[k].current, d)
	}
}

func compareRefs(a, b Ref) int {
	switch {
	case a.Kind != b.Kind:
		return int(a.Kind) - int(b.Kind)
	case a.Namespace != b.Namespace:
		if a.Namespace < b.Namespace {
			return -1
		}
		return 1
	case a.Name < b.Name:
		return -1
	case a.Name > b.Name:
		return 1
	}
	return 0
}
