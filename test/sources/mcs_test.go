package sources

import (
	"flag"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/meshreg/meshreg/internal/manifest"
	"github.com/meshreg/meshreg/model"
)

const export = `apiVersion: multicluster.x-k8s.io/v1alpha1
kind: ServiceExport
metadata: {name: web, namespace: default}
`

const serviceImport = `apiVersion: multicluster.x-k8s.io/v1alpha1
kind: ServiceImport
metadata: {name: web, namespace: default}
spec: {type: ClusterSetIP, ips: [242.0.0.1], ports: [{name: http, port: 80}]}
`

func TestMCSFlags(t *testing.T) {
	tests := []struct {
		args []string
		want MCS
		err  string
	}{
		{args: nil, want: MCS{}},
		{args: []string{"-mcs-discovery"}, want: MCS{ServiceDiscovery: true}},
		{args: []string{"-mcs-discovery", "-mcs-host", "-mcs-cluster-local"}, want: MCS{ServiceDiscovery: true, Host: true, ClusterLocal: true}},
		{args: []string{"-mcs-host"}, err: "-mcs-host needs -mcs-discovery"},
		{args: []string{"-mcs-discovery", "-mcs-cluster-local"}, err: "-mcs-cluster-local needs -mcs-host"},
	}
	for _, tt := range tests {
		var f Flags
		fs := flag.NewFlagSet("x", flag.ContinueOnError)
		f.Register(fs)
		if err := fs.Parse(tt.args); err != nil {
			t.Fatal(err)
		}
		cfg, err := f.Config(nil)
		switch {
		case tt.err != "":
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("%q: err = %v, want %q", tt.args, err, tt.err)
			}
		case err != nil:
			t.Errorf("%q: %v", tt.args, err)
		case cfg.MCS != tt.want:
			t.Errorf("%q: MCS = %+v, want %+v", tt.args, cfg.MCS, tt.want)
		}
	}
}

// ServiceExports and ServiceImports in manifests reach the MCS API the
// kube controllers read, with the switches on; applying manifests without
// the import removes its ClusterSet host.
func TestManifestsMCS(t *testing.T) {
	fsys := fstest.MapFS{"a.yaml": {Data: []byte(web + "---\n" + export + "---\n" + serviceImport)}}
	b, err := Build(Config{Clusters: []Cluster{{ID: "a", FS: fsys, Manifests: "."}}, MCS: MCS{ServiceDiscovery: true, Host: true}})
	if err != nil {
		t.Fatal(err)
	}
	defer run(t, b)()
	set := model.ClusterSetHostname("web", "default")
	waitFor(t, "the ClusterSet host", func() bool { return b.Discovery.GetService(set) != nil })
	if svc := b.Discovery.GetService("web.default.svc.cluster.local"); svc == nil || len(svc.Exports) != 1 {
		t.Errorf("web = %+v, want it exported by cluster a", svc)
	}
	objs, err := manifest.Load(strings.NewReader(web + "---\n" + export))
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Manifests["a"].Apply(objs); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the ClusterSet host gone with its import", func() bool { return b.Discovery.GetService(set) == nil })
}
