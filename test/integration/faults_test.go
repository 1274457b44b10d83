//go:build integration

package integration

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/meshreg/meshreg/kube/multicluster"
)

// stallTime is how long a stall lasts: longer than client-go's HTTP/2
// health check (a ping after 30 s without a frame, 15 s for its answer),
// after which a client gives up on a connection that moves no bytes.
const stallTime = 60 * time.Second

// faultRun is the two clusters, their proxies and workloads, and the
// registry under test, which reaches both servers only through the
// proxies: the config cluster "a" directly, the remote cluster "b"
// through a Secret in a.
type faultRun struct {
	t          *testing.T
	a, b       *faultCluster
	pa, pb     *faultProxy
	wa, wb     *workload
	reg        *stack
	sub        *mirror
	unsub      func()
	token      int // the remote Secret's credentials' generation
	heapBefore uint64

	faults      map[string]int
	convergence []time.Duration
	divergences int
	churning    time.Duration // how long the workload churned
	revisions   int64         // etcd revisions the churn took, both clusters
}

func startFaultRun(t *testing.T) *faultRun {
	t.Helper()
	r := &faultRun{t: t, faults: map[string]int{}}
	r.a = startFaultCluster(t, "a", false, nil)
	// The remote cluster serves watches from etcd, so that a compaction
	// reaches its watchers as it does on a server without a watch cache;
	// a's watch cache makes a restart answer old watches 410 instead.
	r.token = 1
	r.b = startFaultCluster(t, "b", true, map[string]string{r.remoteToken(): "meshreg-remote"})
	var err error
	r.pa, err = newFaultProxy(r.a.Host())
	must(t, err)
	t.Cleanup(r.pa.close)
	r.pb, err = newFaultProxy(r.b.Host())
	must(t, err)
	t.Cleanup(r.pb.close)
	r.wa = newWorkload(t, r.a, true, "10.210", "web", "api", "db")
	r.wb = newWorkload(t, r.b, false, "10.211", "web", "api")
	t.Cleanup(r.wa.halt)
	t.Cleanup(r.wb.halt)

	_, err = r.a.admin.CoreV1().Namespaces().Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: secretsNS}}, metav1.CreateOptions{})
	must(t, err)
	must(t, r.putSecret())
	r.reg, err = startStack(r.a.config(adminToken, r.pa.addr()), "a")
	must(t, err)
	t.Cleanup(func() { must(t, r.reg.stop()) })
	r.sub = newMirror()
	r.unsub = r.reg.agg.Subscribe(r.sub)
	t.Cleanup(r.unsub)
	return r
}

// rotate gives the remote cluster's Secret new credentials: a new token,
// which the remote server accepts alone from its next start.
func (r *faultRun) rotate() error {
	r.token++
	if err := r.b.setTokens(map[string]string{r.remoteToken(): "meshreg-remote"}); err != nil {
		return err
	}
	return r.putSecret()
}

func (r *faultRun) remoteToken() string { return fmt.Sprintf("remote-token-%d", r.token) }

// putSecret writes the remote cluster's Secret, as of the current
// credentials, creating it when it is missing.
func (r *faultRun) putSecret() error {
	kc, err := r.b.kubeconfig(r.remoteToken(), r.pb.addr())
	if err != nil {
		return err
	}
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "remote-b", Namespace: secretsNS, Labels: map[string]string{multicluster.SecretLabel: "true"}},
		Data:       map[string][]byte{"b": kc},
	}
	ctx := context.Background()
	_, err = r.a.admin.CoreV1().Secrets(secretsNS).Update(ctx, secret, metav1.UpdateOptions{})
	if apierrors.IsNotFound(err) {
		_, err = r.a.admin.CoreV1().Secrets(secretsNS).Create(ctx, secret, metav1.CreateOptions{})
	}
	return err
}

// inject runs s while the workload churns and the subscriber is blocked
// for its first seconds, then stops the churn and waits for the registry
// to converge.
func (r *faultRun) inject(s scenario) {
	t := r.t
	revs := r.revision()
	churnStart := time.Now()
	r.wa.run(true)
	r.wb.run(true)
	time.Sleep(2 * time.Second)
	r.sub.blocked.Store(true)
	unblock := time.AfterFunc(5*time.Second, func() { r.sub.blocked.Store(false) })
	err := s.run(r)
	unblock.Stop()
	r.sub.blocked.Store(false)
	if err != nil {
		t.Fatalf("%s: injecting the fault: %v", s.name, err)
	}
	time.Sleep(2 * time.Second)
	r.faults[s.name]++
	r.churning += time.Since(churnStart)
	r.revisions += r.revision() - revs
	d, ok := r.converge(s.name)
	outcome := "converged in"
	if !ok {
		outcome = "did not converge in"
	}
	t.Logf("%s: %s %s (the registry's informers' relists so far: %v; changes so far: %d)", s.name, outcome, d.Round(time.Millisecond),
		r.reg.relists(), r.changes())
	if !ok {
		r.divergences++
	}
}

// converge stops the churn, lets the workload settle, and waits until
// the registry's dump equals that of a fresh registry over the same
// servers, both agree with the pods, and the slow subscriber has caught
// up. It returns how long that took from the churn's end.
func (r *faultRun) converge(what string) (time.Duration, bool) {
	t := r.t
	stopped := time.Now()
	r.wa.halt()
	r.wb.halt()
	// The kubelet runs on until its work is done.
	r.wa.run(false)
	r.wb.run(false)
	defer r.wa.halt()
	defer r.wb.halt()
	fresh, err := startStack(r.a.config(adminToken, ""), "a")
	must(t, err)
	defer func() { must(t, fresh.stop()) }()
	ctx := context.Background()
	var nudged time.Time
	err = waitFor(time.Until(stopped.Add(3*time.Minute)), "convergence", func() error {
		ok, msg := r.converged(ctx, fresh)
		if ok {
			return nil
		}
		if time.Since(nudged) > 20*time.Second && r.settled() {
			first, _, _ := strings.Cut(msg, "\n")
			t.Logf("%s: nudging the Services after %s, for %s", what, time.Since(stopped).Round(time.Millisecond), first)
			for _, w := range []*workload{r.wa, r.wb} {
				if err := w.nudge(ctx); err != nil {
					t.Logf("%s: nudging %s's Services: %v", what, w.c.name, err)
				}
			}
			nudged = time.Now()
		}
		return errors.New(msg)
	})
	took := time.Since(stopped)
	if err != nil {
		t.Errorf("%s: %v", what, err)
		return took, false
	}
	// The registry agrees with one started afresh from the final objects.
	// Kubernetes may still be changing them: after an API server
	// restart, the ReplicaSet controller can wait out its expectations
	// (up to 5 minutes) before it makes a Deployment's missing pods, so
	// the registry is given a while to follow such a change.
	final, err := startStack(r.a.config(adminToken, ""), "a")
	must(t, err)
	defer func() { must(t, final.stop()) }()
	if err := waitFor(time.Minute, "a fresh registry to sync", func() error {
		if !final.agg.HasSynced() {
			return errors.New("not synced")
		}
		return nil
	}); err != nil {
		t.Errorf("%s: %v", what, err)
		return took, false
	}
	if err := waitFor(30*time.Second, "the registry to agree with one started afresh", func() error {
		return r.sameDump(final)
	}); err != nil {
		t.Errorf("%s: converged, but: %v", what, err)
		return took, false
	}
	r.convergence = append(r.convergence, took)
	return took, true
}

// settled reports whether the kubelet has done its work in both
// clusters.
func (r *faultRun) settled() bool {
	a, _ := r.wa.quiet()
	b, _ := r.wb.quiet()
	return a && b
}

// converged is one look: the workload settled, the registry's dump that
// of the fresh registry, the pods' truth, and the subscriber up to date.
func (r *faultRun) converged(ctx context.Context, fresh *stack) (bool, string) {
	for _, w := range []*workload{r.wa, r.wb} {
		if ok, msg := w.quiet(); !ok {
			return false, msg
		}
	}
	if !fresh.agg.HasSynced() {
		return false, "the fresh registry has not synced"
	}
	if err := r.sameDump(fresh); err != nil {
		return false, err.Error()
	}
	if err := truth(ctx, r.reg.agg, r.a, "a", r.wa.ipBase); err != nil {
		return false, err.Error()
	}
	if err := truth(ctx, r.reg.agg, r.b, "b", r.wb.ipBase); err != nil {
		return false, err.Error()
	}
	return r.sub.agrees(r.reg.agg)
}

// sameDump reports how the registry's dump differs from fresh's, if it
// does.
func (r *faultRun) sameDump(fresh *stack) error {
	if got, want := r.reg.dump(), fresh.dump(); got != want {
		return errors.New("dumps differ (-fresh +registry):\n" + lineDiff(want, got))
	}
	return nil
}

// heap is the live heap after a collection.
func heap() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// lineDiff is the lines of want missing from got (-) and of got missing
// from want (+), at most 40.
func lineDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	var out []string
	for _, l := range w {
		if !slices.Contains(g, l) {
			out = append(out, "- "+l)
		}
	}
	for _, l := range g {
		if !slices.Contains(w, l) {
			out = append(out, "+ "+l)
		}
	}
	if len(out) > 40 {
		out = append(out[:40], fmt.Sprintf("... %d more", len(out)-40))
	}
	return strings.Join(out, "\n")
}

// TestFaults runs every fault scenario once, over two real clusters and
// a churning workload, and holds the registry to converging after each.
// With MESHREG_SOAK set to a duration, it runs random faults in a loop
// for that long and prints a summary.
func TestFaults(t *testing.T) {
	soak, err := soakDuration()
	must(t, err)
	r := startFaultRun(t)
	// The baseline: converged before any fault.
	if _, ok := r.converge("start"); !ok {
		t.FailNow()
	}
	r.convergence = nil
	r.heapBefore = heap()
	goroutines := runtime.NumGoroutine()
	start := time.Now()
	if soak == 0 {
		for _, s := range scenarios() {
			r.inject(s)
		}
	} else {
		all := scenarios()
		for time.Since(start) < soak {
			r.inject(all[rand.IntN(len(all))])
		}
	}
	after := heap()
	summary := fmt.Sprintf("%s, goroutines %d -> %d", r.summary(time.Since(start), after), goroutines, runtime.NumGoroutine())
	t.Log(summary)
	if soak > 0 {
		fmt.Println(summary)
	}
	if r.divergences > 0 {
		t.Errorf("%d divergences", r.divergences)
	}
	// A bound on growth, not a measure of it: the workload's size at the
	// end is random, and caches differ by some megabytes from run to
	// run, but a leak per fault would pass it.
	if limit := r.heapBefore + r.heapBefore/2 + 32<<20; after > limit {
		t.Errorf("heap after the faults %d MiB, before %d MiB: more than the bound %d MiB", after>>20, r.heapBefore>>20, limit>>20)
	}
}

func soakDuration() (time.Duration, error) {
	v := os.Getenv("MESHREG_SOAK")
	if v == "" {
		return 0, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("MESHREG_SOAK=%q: want a positive duration such as 30m", v)
	}
	return d, nil
}

// revision is the sum of both clusters' etcd revisions.
func (r *faultRun) revision() int64 {
	a, errA := r.a.revision()
	b, errB := r.b.revision()
	if err := errors.Join(errA, errB); err != nil {
		r.t.Fatalf("reading etcd's revision: %v", err)
	}
	return a + b
}

// changes is the number of the workload's writes that succeeded.
func (r *faultRun) changes() int64 {
	return r.wa.writes.Load() + r.wb.writes.Load() - r.wa.failed.Load() - r.wb.failed.Load()
}

// summary is the run's line: faults, changes, convergence p50 and p99,
// divergences, heap.
func (r *faultRun) summary(took time.Duration, heapAfter uint64) string {
	var faults []string
	n := 0
	for _, s := range scenarios() {
		faults = append(faults, fmt.Sprintf("%s %d", s.name, r.faults[s.name]))
		n += r.faults[s.name]
	}
	conv := slices.Clone(r.convergence)
	slices.Sort(conv)
	pct := func(p float64) time.Duration {
		if len(conv) == 0 {
			return 0
		}
		return conv[min(len(conv)-1, int(p*float64(len(conv))))].Round(10 * time.Millisecond)
	}
	changes := r.changes()
	churn := max(r.churning.Seconds(), 1)
	return fmt.Sprintf("faults: run of %s: %d faults (%s); %d changes by the test over %s of churn (%.0f/s; %d more failed on a server down), %d object writes in etcd (%.0f/s); convergence p50 %s p99 %s; divergences %d; heap %.1f MiB -> %.1f MiB",
		took.Round(time.Second), n, strings.Join(faults, ", "), changes, r.churning.Round(time.Second), float64(changes)/churn,
		r.wa.failed.Load()+r.wb.failed.Load(), r.revisions, float64(r.revisions)/churn, pct(0.5), pct(0.99), r.divergences,
		float64(r.heapBefore)/(1<<20), float64(heapAfter)/(1<<20))
}
