// ambient-oracle feeds Kubernetes/Istio manifests into Istio's own ambient index
// (istio.io/istio/pilot/pkg/serviceregistry/ambient, the krt-based index istiod builds with
// PILOT_ENABLE_AMBIENT=true), waits until it settles, and prints its workloads and services
// as JSON.
//
//	ambient-oracle -cluster NAME=PATH [-cluster NAME2=PATH2 ...] [-domain-suffix cluster.local]
//	               [-network NAME] [-multi-network] [-trust-domain cluster.local] [-o FILE] [-v]
//	               [-step DIR=OUT ...]
//
// The first -cluster is the config cluster. See README.md.
package main

import (
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"istio.io/api/label"
	"istio.io/istio/pilot/pkg/features"
	"istio.io/istio/pkg/config/mesh"
	istiolog "istio.io/istio/pkg/log"
)

type clusterFlags []string

func (c *clusterFlags) String() string     { return strings.Join(*c, ",") }
func (c *clusterFlags) Set(v string) error { *c = append(*c, v); return nil }

var verbose bool

func warnf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "ambient-oracle: warning: "+format+"\n", args...)
}

func verbosef(format string, args ...any) {
	if verbose {
		fmt.Fprintf(os.Stderr, "ambient-oracle: "+format+"\n", args...)
	}
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "ambient-oracle:", err)
	os.Exit(1)
}

func main() {
	var clusters clusterFlags
	var steps stepFlags
	flag.Var(&steps, "step", "DIR=OUT: after the first state, bring the clusters DIR/cluster-<id>.yaml names to those manifests "+
		"(created, updated, deleted through the running index) and write the index to OUT (repeatable, in order)")
	flag.Var(&clusters, "cluster", "NAME=PATH: a cluster ID and a YAML file or directory of YAML files (repeatable; the first is the config cluster)")
	domainSuffix := flag.String("domain-suffix", "cluster.local", "Kubernetes DNS domain suffix")
	networkName := flag.String("network", "", "network of the config cluster: written as the topology.istio.io/network label of its "+
		"istio-system Namespace (Istio's ambient index has no network option; it reads only that label)")
	multiNetwork := flag.Bool("multi-network", false, "set Istio's AMBIENT_ENABLE_MULTI_NETWORK feature (ambient multi-network / multicluster)")
	trustDomain := flag.String("trust-domain", "cluster.local", "mesh config trustDomain")
	meshConfigFile := flag.String("mesh-config", "", "optional MeshConfig YAML (istiod's 'mesh' ConfigMap key), e.g. for serviceScopeConfigs; "+
		"-trust-domain, when given, overrides its trustDomain")
	validate := flag.Bool("validate", true, "drop ServiceEntries/WorkloadEntries that Istio's validation (admission webhook) rejects")
	quiet := flag.Duration("settle", 500*time.Millisecond, "quiet period before printing")
	timeout := flag.Duration("timeout", 60*time.Second, "overall timeout")
	output := flag.String("o", "-", "output file ('-' for stdout)")
	flag.BoolVar(&verbose, "v", false, "show Istio's logs and progress on stderr")
	flag.Parse()
	if len(clusters) == 0 || flag.NArg() != 0 {
		fmt.Fprintln(os.Stderr, "ambient-oracle: at least one -cluster NAME=PATH is required, and no arguments")
		flag.Usage()
		os.Exit(2)
	}
	explicit := map[string]bool{}
	flag.Visit(func(f *flag.Flag) { explicit[f.Name] = true })

	lo := istiolog.DefaultOptions()
	lo.OutputPaths = []string{"stderr"}
	lo.ErrorOutputPaths = []string{"stderr"}
	if !verbose {
		lo.SetDefaultOutputLevel(istiolog.OverrideScopeName, istiolog.NoneLevel)
	}
	if err := istiolog.Configure(lo); err != nil {
		fatal(err)
	}

	setAmbientFeatures(*multiNetwork)
	if len(clusters) > 1 && !*multiNetwork {
		warnf("%d clusters given without -multi-network: as in istiod, remote clusters are registered (remote secrets) "+
			"but Istio's ambient index reads only the config cluster unless AMBIENT_ENABLE_MULTI_NETWORK is set", len(clusters))
	}

	mc := mesh.DefaultMeshConfig()
	if *meshConfigFile != "" {
		data, err := os.ReadFile(*meshConfigFile)
		if err != nil {
			fatal(err)
		}
		if mc, err = mesh.ApplyMeshConfigDefaults(string(data)); err != nil {
			fatal(fmt.Errorf("-mesh-config: %v", err))
		}
	}
	if *meshConfigFile == "" || explicit["trust-domain"] {
		mc.TrustDomain = *trustDomain
	}
	mc.RootNamespace = systemNamespace

	var inputs []*clusterInput
	seen := map[string]bool{}
	for _, c := range clusters {
		name, path, ok := strings.Cut(c, "=")
		if !ok || name == "" || path == "" {
			fatal(fmt.Errorf("bad -cluster %q, want NAME=PATH", c))
		}
		if seen[name] {
			fatal(fmt.Errorf("cluster %q given twice", name))
		}
		seen[name] = true
		in, err := loadCluster(name, path, *domainSuffix)
		if err != nil {
			fatal(err)
		}
		inputs = append(inputs, in)
	}
	if *networkName != "" {
		if err := setNetworkLabel(inputs[0], *networkName); err != nil {
			fatal(err)
		}
	}
	var parsed []*step
	for _, s := range steps {
		st, err := parseStep(s, *domainSuffix)
		if err != nil {
			fatal(err)
		}
		for _, in := range st.clusters {
			if in.ID == inputs[0].ID && *networkName != "" {
				if err := setNetworkLabel(in, *networkName); err != nil {
					fatal(err)
				}
			}
		}
		parsed = append(parsed, st)
	}

	deadline := time.Now().Add(*timeout)
	w := newWorld(inputs, *domainSuffix, mc, *validate)
	if err := w.start(deadline); err != nil {
		fatal(err)
	}
	verbosef("index synced; creating objects")
	if err := w.apply(); err != nil {
		fatal(err)
	}
	data, err := w.settle(*quiet, deadline)
	if err != nil {
		fatal(err)
	}
	if err := writeDoc(*output, data); err != nil {
		fatal(err)
	}
	for _, st := range parsed {
		verbosef("step %s", st.dir)
		if err := w.runStep(st); err != nil {
			fatal(err)
		}
		data, err := w.settle(*quiet, deadline)
		if err != nil {
			fatal(fmt.Errorf("step %s: %v", st.dir, err))
		}
		if err := writeDoc(st.out, data); err != nil {
			fatal(err)
		}
	}
	// Do not wait for informers to shut down; the process exits.
	os.Exit(0)
}

// setAmbientFeatures gives Istio's feature flags the values istiod has with
// PILOT_ENABLE_AMBIENT=true (pilot/pkg/features/ambient.go: registerAmbient's "with ambient"
// defaults), plus AMBIENT_ENABLE_MULTI_NETWORK as asked. Istio reads these variables at
// run time, so assigning them before anything is built is enough; the one init-time
// derivative that matters here (gatewaycommon.AllClasses) is recomputed in
// createDefaultGatewayClasses.
func setAmbientFeatures(multiNetwork bool) {
	features.EnableAmbient = true
	features.EnableAmbientWaypoints = true
	features.EnableHBONESend = true
	features.EnableSidecarHBONEListening = true
	features.EnableAmbientStatus = true
	features.PreferHBONESend = false
	features.DefaultAllowFromWaypoint = false
	features.EnableIngressWaypointRouting = true
	features.EnableAmbientMultiNetwork = multiNetwork
	features.EnableAmbientBaggage = false
	features.EnableAmbientWaypointMultiNetwork = true
	features.EnableAmbientIngressMultiNetwork = false
	features.EnableWdsDryRunAuthzPol = false
}

// setNetworkLabel applies -network: the topology.istio.io/network label of the config
// cluster's system namespace (added when the manifests have no istio-system Namespace).
func setNetworkLabel(in *clusterInput, nw string) error {
	for _, o := range in.Objects {
		ns, ok := o.Obj.(*corev1.Namespace)
		if !ok || ns.Name != systemNamespace {
			continue
		}
		if cur, f := ns.Labels[label.TopologyNetwork.Name]; f && cur != nw {
			return fmt.Errorf("-network %s: cluster %s's %s Namespace already has %s=%s",
				nw, in.ID, systemNamespace, label.TopologyNetwork.Name, cur)
		}
		if ns.Labels == nil {
			ns.Labels = map[string]string{}
		}
		ns.Labels[label.TopologyNetwork.Name] = nw
		return nil
	}
	in.Objects = append(in.Objects, inputObject{
		Kind:   KindNamespace,
		Source: "-network",
		Obj: &corev1.Namespace{
			TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: KindNamespace},
			ObjectMeta: metav1.ObjectMeta{
				Name:   systemNamespace,
				Labels: map[string]string{label.TopologyNetwork.Name: nw},
			},
		},
	})
	return nil
}
