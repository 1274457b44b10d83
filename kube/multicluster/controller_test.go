package multicluster

import (
	"context"
	"errors"
	"fmt"
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
// asks it for its cluster.
type stubRegistry struct {
	registry.Registry
	cluster    model.ClusterID
	kubeconfig string
}

func (s stubRegistry) Cluster() model.ClusterID { return s.cluster }
func (s stubRegistry) Provider() model.Provider { return model.Kubernetes }

// recordingTarget records the calls the controller makes, as
// "add c1 cfg" lines, and the clusters it holds.
type recordingTarget struct {
	mu    sync.Mutex
	calls []string
	held  map[model.ClusterID]string
}

func (r *recordingTarget) Add(reg registry.Registry) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := reg.(stubRegistry)
	if _, ok := r.held[s.cluster]; ok {
		return errors.New("duplicate")
	}
	r.held[s.cluster] = s.kubeconfig
	r.calls = append(r.calls, "add "+string(s.cluster)+" "+s.kubeconfig)
	return nil
}

func (r *recordingTarget) Replace(reg registry.Registry) {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := reg.(stubRegistry)
	r.held[s.cluster] = s.kubeconfig
	r.calls = append(r.calls, "replace "+string(s.cluster)+" "+s.kubeconfig)
}

func (r *recordingTarget) Remove(_ model.Provider, c model.ClusterID) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.held, c)
	r.calls = append(r.calls, "remove "+string(c))
	return nil
}

func (r *recordingTarget) snapshot() ([]string, map[model.ClusterID]string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	held := map[model.ClusterID]string{}
	for k, v := range r.held {
		held[k] = v
	}
	return slices.Clone(r.calls), held
}

// stubFactory builds stub registries; a kubeconfig starting with "bad"
// fails.
func stubFactory(cluster model.ClusterID, kubeconfig []byte) (registry.Registry, error) {
	if strings.HasPrefix(string(kubeconfig), "bad") {
		return nil, fmt.Errorf("invalid kubeconfig %q", kubeconfig)
	}
	return stubRegistry{cluster: cluster, kubeconfig: string(kubeconfig)}, nil
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
	target := &recordingTarget{held: map[model.ClusterID]string{}}
	c, ctx := startController(t, client, target, Options{Factory: stubFactory, LocalCluster: "local"})

	held := func(want map[model.ClusterID]string) func() bool {
		return func() bool {
			_, got := target.snapshot()
			if len(got) != len(want) {
				return false
			}
			for k, v := range want {
				if got[k] != v {
					return false
				}
			}
			return true
		}
	}
	eventually(t, "c1 and c2 added", held(map[model.ClusterID]string{"c1": "cfg1", "c2": "cfg2"}))
	<-watching
	// The target holds the registries before the handler returns from
	// the initial list, and HasSynced turns true when it has returned.
	eventually(t, "HasSynced once the initial list was handled", c.HasSynced)

	secrets := client.CoreV1().Secrets("istio-system")
	// A changed kubeconfig replaces, a dropped key removes, a new one adds.
	if _, err := secrets.Update(ctx, secret("remote-1", true, map[string]string{"c1": "cfg1b", "c3": "cfg3"}), metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "c1 replaced, c2 removed, c3 added", held(map[model.ClusterID]string{"c1": "cfg1b", "c3": "cfg3"}))

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
	if _, got := target.snapshot(); got["c3"] != "cfg3" || len(got) != 2 {
		t.Errorf("target holds %v after the conflicting Secret, want c1 and c3 unchanged", got)
	}

	// The first Secret goes: its clusters go, and remote-2's claim on c3
	// takes over.
	if err := secrets.Delete(ctx, "remote-1", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "c1 removed, c3 from remote-2", held(map[model.ClusterID]string{"c3": "other"}))
	calls, _ := target.snapshot()
	want := []string{"add c1 cfg1", "add c2 cfg2", "remove c2", "replace c1 cfg1b", "add c3 cfg3", "remove c1", "replace c3 other"}
	if !slices.Equal(calls, want) {
		t.Errorf("calls = %q,\nwant %q", calls, want)
	}
	if got := c.Clusters(); !slices.Equal(got, []model.ClusterID{"c3"}) {
		t.Errorf("Clusters() = %v, want [c3]", got)
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
	c, _ := startController(t, client, &recordingTarget{held: map[model.ClusterID]string{}}, Options{Factory: factory})

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
