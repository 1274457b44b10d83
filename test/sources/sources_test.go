package sources

import (
	"context"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"go.uber.org/goleak"

	"github.com/meshreg/meshreg/internal/manifest"
	"github.com/meshreg/meshreg/model"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const web = `apiVersion: v1
kind: Service
metadata: {name: web, namespace: default}
spec:
  clusterIP: 10.0.0.1
  ports: [{name: http, port: 80}]
`

const entry = `apiVersion: networking.istio.io/v1
kind: ServiceEntry
metadata: {name: db, namespace: default}
spec:
  hosts: [db.example.com]
  addresses: [240.0.0.1]
  resolution: STATIC
  ports: [{name: tcp, number: 5432, protocol: TCP}]
  endpoints: [{address: 192.168.0.1}]
`

func TestBuildErrors(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name     string
		clusters []Cluster
		want     string
	}{
		{"no cluster", nil, "no cluster given"},
		{"no name", []Cluster{{Manifests: dir}}, "a cluster has no name"},
		{"twice", []Cluster{{ID: "a", Manifests: dir}, {ID: "a", Manifests: dir}}, "cluster a given twice"},
		{"both sources", []Cluster{{ID: "a", Manifests: dir, Kubeconfig: "kc"}}, "exactly one of manifests or a kubeconfig"},
		{"missing file", []Cluster{{ID: "a", Manifests: filepath.Join(dir, "absent.yaml")}}, "no such file"},
		{"bad kubeconfig", []Cluster{{ID: "a", Kubeconfig: filepath.Join(dir, "absent-kubeconfig")}}, "cluster a: kubeconfig"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Build(Config{Clusters: tc.clusters})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want one containing %q", err, tc.want)
			}
		})
	}
	// Mistakes in the Config itself are marked as such.
	for _, c := range [][]Cluster{nil, {{ID: "a"}}} {
		if _, err := Build(Config{Clusters: c}); !errors.Is(err, ErrUsage) {
			t.Errorf("Build(%+v) = %v, want ErrUsage", c, err)
		}
	}
}

// run starts the built aggregate and waits for it to sync; the returned
// function stops it.
func run(t *testing.T, b *Built) func() {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- b.Aggregate.Run(ctx) }()
	waitFor(t, "sync", b.Aggregate.HasSynced)
	return func() { cancel(); <-done }
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestManifestClusterApply(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "a.yaml")
	if err := os.WriteFile(file, []byte(web+"---\n"+entry), 0o600); err != nil {
		t.Fatal(err)
	}
	b, err := Build(Config{Clusters: []Cluster{{ID: "a", Manifests: file}}})
	if err != nil {
		t.Fatal(err)
	}
	defer run(t, b)()
	hosts := func() string {
		var hs []string
		for _, s := range b.Discovery.Services() {
			hs = append(hs, string(s.Hostname))
		}
		return strings.Join(hs, " ")
	}
	if got := hosts(); got != "db.example.com web.default.svc.cluster.local" {
		t.Fatalf("services = %q", got)
	}

	// Apply the file's next version: web changes port, db goes, api comes.
	next := strings.ReplaceAll(web, "port: 80", "port: 8080") + "---\n" + strings.ReplaceAll(web, "web", "api")
	objs, err := manifest.Load(strings.NewReader(next))
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Manifests["a"].Apply(objs); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the applied manifests", func() bool { return hosts() == "api.default.svc.cluster.local web.default.svc.cluster.local" })
	waitFor(t, "web's new port", func() bool {
		svc := b.Discovery.GetService("web.default.svc.cluster.local")
		return svc != nil && svc.Ports[0].Port == 8080
	})

	// Reload reads the file again: back to the first version.
	b.Manifests["a"].path = file
	if err := b.Manifests["a"].Reload(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the reloaded file", func() bool { return hosts() == "db.example.com web.default.svc.cluster.local" })
}

func TestUndecodableDocumentsAreDiagnostics(t *testing.T) {
	fsys := fstest.MapFS{
		"m/a.yaml": {Data: []byte(web + "---\napiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w}\n")},
		"m/b.txt":  {Data: []byte("not read")},
	}
	b, err := Build(Config{Clusters: []Cluster{{ID: "a", FS: fsys, Manifests: "m"}, {ID: "b", FS: fstest.MapFS{"e.yaml": {Data: []byte(entry)}}, Manifests: "."}}})
	if err != nil {
		t.Fatal(err)
	}
	defer run(t, b)()
	ds := b.Discovery.Diagnostics()
	var kinds []string
	for _, d := range ds {
		kinds = append(kinds, d.Kind+" "+d.Name+" "+string(d.Cluster))
	}
	want := []string{"Widget m/a.yaml#2 a", "ServiceEntry db b"} // sorted by cluster first
	if strings.Join(kinds, ",") != strings.Join(want, ",") {
		t.Errorf("diagnostics = %q, want %q (the Widget, and the entry outside the config cluster)", kinds, want)
	}
	if len(b.Discovery.Services()) != 1 {
		t.Errorf("services = %v, want web only", b.Discovery.Services())
	}
}

func TestFlags(t *testing.T) {
	var f Flags
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	f.Register(fs)
	if err := fs.Parse([]string{"-cluster", "east=./e", "-f", "./w.yaml", "-kubeconfig", "/kc", "-namespace-selector", "mesh=on,env in (a,b)"}); err != nil {
		t.Fatal(err)
	}
	cfg, err := f.Config(nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []Cluster{{ID: "east", Manifests: "./e"}, {ID: "Kubernetes", Manifests: "./w.yaml"}, {ID: "Kubernetes", Kubeconfig: "/kc"}}
	if len(cfg.Clusters) != 3 {
		t.Fatalf("clusters = %+v", cfg.Clusters)
	}
	for i := range want {
		if cfg.Clusters[i] != want[i] {
			t.Errorf("cluster %d = %+v, want %+v", i, cfg.Clusters[i], want[i])
		}
	}
	if cfg.DomainSuffix != model.DefaultDomainSuffix || cfg.NamespaceSelector == nil || len(cfg.NamespaceSelector.MatchExpressions) != 1 {
		t.Errorf("config = %+v", cfg)
	}
	for _, bad := range [][]string{{"-cluster", "noname"}, {"-cluster", "=p"}} {
		var g Flags
		gs := flag.NewFlagSet("y", flag.ContinueOnError)
		gs.SetOutput(discard{})
		g.Register(gs)
		if err := gs.Parse(bad); err == nil || !strings.Contains(err.Error(), "want NAME=PATH") {
			t.Errorf("%q: err = %v", bad, err)
		}
	}
	g := Flags{NamespaceSelector: "a in ("}
	if _, err := g.Config(nil); err == nil || !strings.Contains(err.Error(), "-namespace-selector") {
		t.Errorf("bad selector: err = %v", err)
	}
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }
