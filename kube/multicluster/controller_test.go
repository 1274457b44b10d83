package multicluster

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/meshreg/meshreg/model"
	"github.com/meshreg/meshreg/registry"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// stubRegistry stands for a cluster registry; the recording target only
// asks it for its provider and cluster.
type stubRegistry struct {
	registry.Registry
	provider   model.Provider
	cluster    model.ClusterID
	kubeconfig string
}

func (s stubRegistry) Cluster() model.ClusterID { return s.cluster }
func (s stubRegistry) Provider() model.Provider { return s.provider }

// recordingTarget records the calls the controller makes, as
// "add c1 cfg" lines (a WorkloadEntry registry: "add c1/we cfg"), and the
// registries it holds, by "c1" or "c1/we".
type recordingTarget struct {
	mu    sync.Mutex
	calls []string
	held  map[string]string
}

func newRecordingTarget() *recordingTarget { return &recordingTarget{held: map[string]string{}} }

func slotName(p model.Provider, c model.ClusterID) string {
	if p == model.External {
		return string(c) + "/we"
	}
	return string(c)
}

func (r *recordingTarget) Add(reg registry.Registry) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := reg.(stubRegistry)
	name := slotName(s.provider, s.cluster)
	if _, ok := r.held[name]; ok {
		return errors.New("duplicate")
	}
	r.held[name] = s.kubeconfig
	r.calls = append(r.calls, "add "+name+" "+s.kubeconfig)
	return nil
}

func (r *recordingTarget) Replace(reg registry.Registry) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := reg.(stubRegistry)
	name := slotName(s.provider, s.cluster)
	r.held[name] = s.kubeconfig
	r.calls = append(r.calls, "replace "+name+" "+s.kubeconfig)
	return nil
}

func (r *recordingTarget) Remove(p model.Provider, c model.ClusterID) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	name := slotName(p, c)
	if _, ok := r.held[name]; !ok {
		return errors.New("not found")
	}
	delete(r.held, name)
	r.calls = append(r.calls, "remove "+name)
	return nil
}

func (r *recordingTarget) snapshot() ([]string, map[string]string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.calls), maps.Clone(r.held)
}

// stubFactory builds stub Kubernetes registries; a kubeconfig starting
// with "bad" fails.
func stubFactory(cluster model.ClusterID, kubeconfig []byte) (registry.Registry, error) {
	return stubOf(model.Kubernetes, cluster, kubeconfig)
}

// stubWorkloadEntries builds stub WorkloadEntry registries; a kubeconfig
// starting with "bad" or "no-we" fails.
func stubWorkloadEntries(cluster model.ClusterID, kubeconfig []byte) (registry.Registry, error) {
	if strings.HasPrefix(string(kubeconfig), "no-we") {
		return nil, fmt.Errorf("no WorkloadEntries from %q", kubeconfig)
	}
	return stubOf(model.External, cluster, kubeconfig)
}

func stubOf(p model.Provider, cluster model.ClusterID, kubeconfig []byte) (registry.Registry, error) {
	if strings.HasPrefix(string(kubeconfig), "bad") {
		return nil, fmt.Errorf("invalid kubeconfig %q", kubeconfig)
	}
	return stubRegistry{provider: p, cluster: cluster, kubeconfig: string(kubeconfig)}, nil
}

func secret(name string, labelled bool, data map[string]string) *corev1.Secret {
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "istio-system"}, Data: map[string][]byte{}}
	if labelled {
		s.Labels = map[string]string{SecretLabel: "true"}
	}
	for k, v := range data {
		s.Data[k] = []byte(v)
	}
	return s
}

// eventually polls cond until it holds or a deadline passes.
// startController runs a new controller until the test ends; the context
// it returns ends then too.
func startController(t *testing.T, client kubernetes.Interface, target Target, opts Options) (*Controller, context.Context) {
	t.Helper()
	c, err := New(client, target, opts)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() { defer close(done); _ = c.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	return c, ctx
}

func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestSecretsDriveClusterRegistries(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts Options
		// want are the calls, held what the target holds, after each
		// step of the test.
		want []string
		held []map[string]string
	}{{
		name: "Kubernetes registries alone",
		opts: Options{SkipWorkloadEntries: true},
		want: []string{"add c1 cfg1", "add c2 cfg2", "remove c2", "replace c1 cfg1b", "add c3 cfg3", "remove c1", "replace c3 other"},
		held: []map[string]string{
			{"c1": "cfg1", "c2": "cfg2"},
			{"c1": "cfg1b", "c3": "cfg3"},
			{"c3": "other"},
		},
	}, {
		// Each cluster's WorkloadEntry registry comes after its
		// Kubernetes registry, is replaced with it and goes with it.
		name: "with WorkloadEntry registries",
		opts: Options{WorkloadEntries: stubWorkloadEntries},
		want: []string{
			"add c1 cfg1", "add c1/we cfg1", "add c2 cfg2", "add c2/we cfg2",
			"remove c2", "remove c2/we", "replace c1 cfg1b", "replace c1/we cfg1b", "add c3 cfg3", "add c3/we cfg3",
			"remove c1", "remove c1/we", "replace c3 other", "replace c3/we other",
		},
		held: []map[string]string{
			{"c1": "cfg1", "c1/we": "cfg1", "c2": "cfg2", "c2/we": "cfg2"},
			{"c1": "cfg1b", "c1/we": "cfg1b", "c3": "cfg3", "c3/we": "cfg3"},
			{"c3": "other", "c3/we": "other"},
		},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			client := fake.NewSimpleClientset(
				secret("remote-1", true, map[string]string{"c1": "cfg1", "c2": "cfg2"}),
				secret("unlabelled", false, map[string]string{"c9": "cfg9"}),
			)
			// The fake loses a delete made between its list and the informer's
			// watch: changes are made only once the watch is open.
			watching := make(chan struct{})
			var once sync.Once
			client.PrependWatchReactor("secrets", func(k8stesting.Action) (bool, watch.Interface, error) {
				once.Do(func() { close(watching) })
				return false, nil, nil
			})
			target := newRecordingTarget()
			opts := tc.opts
			opts.Factory, opts.LocalCluster = stubFactory, "local"
			c, ctx := startController(t, client, target, opts)

			held := func(want map[string]string) func() bool {
				return func() bool {
					_, got := target.snapshot()
					return maps.Equal(got, want)
				}
			}
			eventually(t, "c1 and c2 added", held(tc.held[0]))
			<-watching
			// The target holds the registries before the handler returns from
			// the initial list, and HasSynced turns true when it has returned.
			eventually(t, "HasSynced once the initial list was handled", c.HasSynced)

			secrets := client.CoreV1().Secrets("istio-system")
			// A changed kubeconfig replaces, a dropped key removes, a new one adds.
			if _, err := secrets.Update(ctx, secret("remote-1", true, map[string]string{"c1": "cfg1b", "c3": "cfg3"}), metav1.UpdateOptions{}); err != nil {
				t.Fatal(err)
			}
			eventually(t, "c1 replaced, c2 removed, c3 added", held(tc.held[1]))

			// A second Secret claiming c3, a bad kubeconfig, and the local cluster:
			// diagnostics, and nothing else changes.
			if _, err := secrets.Create(ctx, secret("remote-2", true, map[string]string{"c3": "other", "c4": "bad!", "local": "cfgl"}), metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			eventually(t, "three diagnostics for remote-2", func() bool { return len(c.Diagnostics()) == 3 })
			for _, d := range c.Diagnostics() {
				if d.Kind != "Secret" || d.Name != "remote-2" || d.Namespace != "istio-system" {
					t.Errorf("diagnostic names %s %s/%s, want Secret istio-system/remote-2", d.Kind, d.Namespace, d.Name)
				}
			}
			if _, got := target.snapshot(); !maps.Equal(got, tc.held[1]) {
				t.Errorf("target holds %v after the conflicting Secret, want %v", got, tc.held[1])
			}

			// The first Secret goes: its clusters go, and remote-2's claim on c3
			// takes over.
			if err := secrets.Delete(ctx, "remote-1", metav1.DeleteOptions{}); err != nil {
				t.Fatal(err)
			}
			eventually(t, "c1 removed, c3 from remote-2", held(tc.held[2]))
			calls, _ := target.snapshot()
			if !slices.Equal(calls, tc.want) {
				t.Errorf("calls = %q,\nwant %q", calls, tc.want)
			}
			if got := c.Clusters(); !slices.Equal(got, []model.ClusterID{"c3"}) {
				t.Errorf("Clusters() = %v, want [c3]", got)
			}
		})
	}
}

// A WorkloadEntry registry that cannot be built or added leaves the
// cluster's Kubernetes registry alone, with a diagnostic; one the target
// holds already (an External registry of the caller's) is never replaced
// or removed.
func TestWorkloadEntryRegistryProblems(t *testing.T) {
	client := fake.NewSimpleClientset(secret("remote-1", true, map[string]string{"c1": "no-we-1", "c2": "cfg2"}))
	target := newRecordingTarget()
	target.held["c2/we"] = "the caller's"
	c, ctx := startController(t, client, target, Options{Factory: stubFactory, WorkloadEntries: stubWorkloadEntries})
	eventually(t, "HasSynced", c.HasSynced)
	want := map[string]string{"c1": "no-we-1", "c2": "cfg2", "c2/we": "the caller's"}
	if _, got := target.snapshot(); !maps.Equal(got, want) {
		t.Fatalf("target holds %v, want %v", got, want)
	}
	ds := c.Diagnostics()
	if len(ds) != 2 || ds[0].Cluster != "c1" || !strings.Contains(ds[0].Message, "cannot build the cluster's WorkloadEntry registry") ||
		ds[1].Cluster != "c2" || !strings.Contains(ds[1].Message, "cannot add the cluster's WorkloadEntry registry") {
		t.Fatalf("diagnostics = %v", ds)
	}

	// c1's kubeconfig is fixed: its WorkloadEntry registry comes, its
	// Kubernetes registry is replaced. Then both clusters go: the
	// caller's registry of c2 stays.
	secrets := client.CoreV1().Secrets("istio-system")
	if _, err := secrets.Update(ctx, secret("remote-1", true, map[string]string{"c1": "cfg1", "c2": "cfg2"}), metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "c1's WorkloadEntry registry", func() bool { _, got := target.snapshot(); return got["c1/we"] == "cfg1" })
	if err := secrets.Delete(ctx, "remote-1", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the clusters removed", func() bool {
		_, got := target.snapshot()
		return maps.Equal(got, map[string]string{"c2/we": "the caller's"})
	})
	calls, _ := target.snapshot()
	wantCalls := []string{"add c1 no-we-1", "add c2 cfg2", "replace c1 cfg1", "add c1/we cfg1", "remove c1", "remove c1/we", "remove c2"}
	if !slices.Equal(calls, wantCalls) {
		t.Errorf("calls = %q,\nwant %q", calls, wantCalls)
	}
}

func TestNewNeedsAFactory(t *testing.T) {
	if _, err := New(fake.NewSimpleClientset(), &recordingTarget{}, Options{}); !errors.Is(err, ErrNoFactory) {
		t.Errorf("New without a factory: %v, want ErrNoFactory", err)
	}
}

func TestClientFactoryRejectsAnUnreadableKubeconfig(t *testing.T) {
	f := ClientFactory(func(model.ClusterID, kubernetes.Interface) (registry.Registry, error) {
		t.Fatal("build called for an unreadable kubeconfig")
		return nil, nil
	})
	if _, err := f("c1", []byte("{not yaml")); err == nil || !strings.Contains(err.Error(), "reading kubeconfig") {
		t.Errorf("err = %v, want a kubeconfig read error", err)
	}
}

// HasSynced waits for the handler, not only for the informer's cache: a
// control plane that waits for it expects the declared clusters' registries
// in its target.
func TestHasSyncedWaitsForTheHandler(t *testing.T) {
	client := fake.NewSimpleClientset(secret("remote-1", true, map[string]string{"c1": "cfg1"}))
	entered, release := make(chan struct{}), make(chan struct{})
	factory := func(id model.ClusterID, kubeconfig []byte) (registry.Registry, error) {
		close(entered)
		<-release
		return stubFactory(id, kubeconfig)
	}
	c, _ := startController(t, client, newRecordingTarget(), Options{Factory: factory, SkipWorkloadEntries: true})

	<-entered // the informer's cache holds the Secret; its handler is busy
	if c.HasSynced() {
		t.Error("HasSynced true while the handler was still building the cluster's registry")
	}
	close(release)
	eventually(t, "HasSynced", c.HasSynced)
	if got := c.Clusters(); !slices.Equal(got, []model.ClusterID{"c1"}) {
		t.Errorf("Clusters() = %v after HasSynced, want [c1]", got)
	}
}
