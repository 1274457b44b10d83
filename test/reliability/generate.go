package reliability

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/meshreg/meshreg/model"
	"github.com/meshreg/meshreg/test/sources"
)

// Pause says what the checker does after applying a step.
type Pause uint8

// Pauses between steps.
const (
	// NoPause applies the next step at once, so that the registry sees
	// the changes of several steps in one burst, or mid-way.
	NoPause Pause = iota
	// Yield lets the registry run for a moment (up to 2ms) without
	// waiting for anything in particular.
	Yield
	// Drain waits until every member registry reports Settled (bounded
	// by 200ms), so that the registry processes the step on its own.
	Drain
)

// Step is one change of a sequence: the world after it, and the
// clusters whose objects it changed (applied through ManifestCluster.Apply
// in the order given, or all at once from separate goroutines when
// Concurrent is set).
type Step struct {
	World      World
	Clusters   []model.ClusterID
	Concurrent bool
	Pause      Pause
	// Ops describes the step's operations, for reading a failure.
	Ops []string
}

// Sequence is a random history: the world the aggregate starts from
// (applied before it runs), then the steps applied while it runs. The
// final world is that of the last step (or Initial when there is none).
type Sequence struct {
	Seed    uint64
	Initial World
	Steps   []Step
	// MCS are the Multi-Cluster Services switches both aggregates run
	// with (Generator.MCS).
	MCS sources.MCS
}

// Final returns the world the sequence ends in.
func (s Sequence) Final() World {
	if len(s.Steps) == 0 {
		return s.Initial
	}
	return s.Steps[len(s.Steps)-1].World
}

// Clusters of every generated world: "a" is the config cluster.
var Clusters = []model.ClusterID{"a", "b"}

// Generator makes random sequences over two clusters, with few objects
// drawn from small pools of names and IPs so that objects collide: pods
// reuse each other's IPs, WorkloadEntries take pod IPs, ServiceEntries
// take a Kubernetes Service's hostname, endpoints move between slices,
// namespaces move in and out of the namespace selector.
type Generator struct {
	// MinSteps and MaxSteps bound the steps of a sequence. Default 3
	// and 10.
	MinSteps, MaxSteps int
	// PodNamesPerCluster names the pods of every cluster but the first
	// after their cluster (p1 in "a", p1-b in "b"), so that no two
	// clusters hold a pod of the same namespace and name. The sequence
	// is otherwise the same. Istio's ServiceEntry controller keys pods
	// by namespace and name alone: of two such pods it selects the one
	// it heard of last, so differential testing against Istio avoids
	// them. Default false: the clusters share the pool of pod names.
	PodNamesPerCluster bool
	// MCS gives a third of the sequences MCS service discovery and
	// ClusterSet hosts, a third cluster-local mode as well, and every
	// sequence's worlds ServiceExports and ServiceImports, drawn by a
	// random generator of their own: without them each world is the one
	// the sequence has without MCS. Default false: MCS off, and no such
	// objects.
	MCS bool
}

var (
	poolNamespaces = []string{"ns1", "ns2"}
	poolNodes      = []string{"n1", "n2"}
	poolIPs        = []string{"10.1.0.1", "10.1.0.2", "10.1.0.3", "10.1.0.4"}
	poolVIPs       = []string{"10.96.0.1", "10.96.0.2", ""}
	poolApps       = []string{"a", "b"}
	poolServices   = []string{"s1", "s2"}
	poolSlices     = []string{"x", "y"}
	poolPods       = []string{"p1", "p2", "p3"}
	poolEntries    = []string{"e1", "e2"}
	poolWorkloads  = []string{"w1", "w2"}
	poolHosts      = []string{"s1.ns1.svc.cluster.local", "ext.example.com", "db.example.com"}
	poolNetworks   = []string{"", "", "net1", "net2"}
	poolCreated    = []string{"2024-01-01T00:00:00Z", "2024-01-01T00:00:00Z", "2024-06-01T00:00:00Z"}
	poolExportTo   = [][]string{nil, nil, {"."}, {"*"}, {"~"}, {"ns2"}}
	poolSvcExport  = []string{"", "", ".", "~", "ns1,ns2"}
	// Multi-Cluster Services: ClusterSet IPs (an MCS controller's, and
	// a bad one), and exports' creation times.
	poolClusterSetIPs = []string{"242.0.0.1", "242.0.0.2", "fd00:242::1", "not-an-ip"}
	poolExported      = []string{"", "2024-01-01T00:00:00Z", "2024-03-01T00:00:00Z"}
)

// gen is the state of one sequence being generated.
type gen struct {
	r     *rand.Rand
	world World
	// podSuffix says whether pod names carry their cluster
	// (Generator.PodNamesPerCluster).
	podSuffix bool
	// specs of the objects present, by cluster and World key, so that
	// an operation can change one field of an existing object.
	slices map[model.ClusterID]map[string]SliceSpec
	pods   map[model.ClusterID]map[string]PodSpec
	// created keeps a ServiceEntry's creation time across updates.
	created map[string]string
	// mcs, when set, draws the MCS objects (Generator.MCS), so that the
	// other draws are those of a sequence without them.
	mcs *rand.Rand
}

// Sequence returns the sequence of a seed; the same seed always yields the
// same sequence.
func (g Generator) Sequence(seed uint64) Sequence {
	minSteps, maxSteps := g.MinSteps, g.MaxSteps
	if minSteps <= 0 {
		minSteps = 3
	}
	if maxSteps < minSteps {
		maxSteps = max(minSteps, 10)
	}
	st := &gen{
		r:         rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)),
		world:     NewWorld(Clusters...),
		podSuffix: g.PodNamesPerCluster,
		slices:    map[model.ClusterID]map[string]SliceSpec{},
		pods:      map[model.ClusterID]map[string]PodSpec{},
		created:   map[string]string{},
	}
	for _, c := range Clusters {
		st.slices[c] = map[string]SliceSpec{}
		st.pods[c] = map[string]PodSpec{}
	}
	seq := Sequence{Seed: seed}
	if g.MCS {
		st.mcs = rand.New(rand.NewPCG(seed, 32))
		switch st.mcs.IntN(3) {
		case 1:
			seq.MCS = sources.MCS{ServiceDiscovery: true, Host: true}
		case 2:
			seq.MCS = sources.MCS{ServiceDiscovery: true, Host: true, ClusterLocal: true}
		default:
			// Off: the objects are there, and read by no registry.
		}
	}
	// Half the sequences start from a populated world, which the
	// registry converts at its initial sync; half of those with a
	// service whose slice names live pods (see backedOp).
	if st.r.IntN(2) == 0 {
		for range 3 + st.r.IntN(8) {
			st.op()
		}
		if st.r.IntN(2) == 0 {
			st.backedOp(pick(st.r, Clusters), pick(st.r, poolNamespaces))
		}
	}
	seq.Initial = st.world.Clone()
	for range minSteps + st.r.IntN(maxSteps-minSteps+1) {
		before := st.world.Clone()
		var ops []string
		for range 1 + st.r.IntN(3) {
			ops = append(ops, st.op())
		}
		step := Step{World: st.world.Clone(), Ops: ops, Pause: Pause(st.r.IntN(3))}
		base := 0 // clusters whose objects other than the MCS API's changed
		for _, c := range Clusters {
			if before.YAML(c) != step.World.YAML(c) {
				step.Clusters = append(step.Clusters, c)
			}
			if baseYAML(before, c) != baseYAML(step.World, c) {
				base++
			}
		}
		if len(step.Clusters) > 1 {
			r := st.r
			if base < 2 {
				r = st.mcs // the MCS objects made it two: the sequence without them draws nothing
			}
			if r.IntN(2) == 0 {
				slices.Reverse(step.Clusters)
			}
			step.Concurrent = r.IntN(2) == 0
		}
		seq.Steps = append(seq.Steps, step)
	}
	return seq
}

func pick[T any](r *rand.Rand, xs []T) T { return xs[r.IntN(len(xs))] }

// baseYAML is World.YAML without the MCS API's objects.
func baseYAML(w World, c model.ClusterID) string {
	if !slices.ContainsFunc(slices.Collect(maps.Keys(w.Objects[c])), isMCSKey) {
		return w.YAML(c)
	}
	w = w.Clone()
	for k := range w.Objects[c] {
		if isMCSKey(k) {
			w.Delete(c, k)
		}
	}
	return w.YAML(c)
}

func isMCSKey(k string) bool {
	return strings.HasPrefix(k, "ServiceExport/") || strings.HasPrefix(k, "ServiceImport/")
}

// podName returns what a pod the pool calls name is named in cluster c.
func (g *gen) podName(c model.ClusterID, name string) string {
	if g.podSuffix && c != Clusters[0] {
		return name + "-" + string(c)
	}
	return name
}

// op applies one random operation to the world, and with MCS objects
// (Generator.MCS) at times one more on them, and describes it.
func (g *gen) op() string {
	desc := g.baseOp()
	if g.mcs != nil && g.mcs.IntN(3) == 0 {
		desc += "; " + g.mcsOp()
	}
	return desc
}

// baseOp applies one random operation on an object other than the MCS
// API's.
func (g *gen) baseOp() string {
	c := pick(g.r, Clusters)
	ns := pick(g.r, poolNamespaces)
	del := g.r.IntN(5) == 0
	switch n := g.r.IntN(100); {
	case n < 10: // namespace in or out of the selector; the cluster network
		s := NamespaceSpec{Name: ns, Selected: g.r.IntN(3) != 0}
		if g.r.IntN(4) == 0 {
			s = NamespaceSpec{Name: "istio-system", Selected: g.r.IntN(2) == 0, Network: pick(g.r, poolNetworks)}
		}
		return g.set(c, s.Key(), s.YAML(), del)
	case n < 16:
		s := NodeSpec{Name: pick(g.r, poolNodes), Region: pick(g.r, []string{"r1", "r2"}), Zone: pick(g.r, []string{"z1", "z2", ""})}
		if g.r.IntN(2) == 0 {
			s.ExternalIP, s.GatewayNode = pick(g.r, []string{"198.51.100.1", "198.51.100.2"}), g.r.IntN(3) != 0
		}
		return g.set(c, s.Key(), s.YAML(), del)
	case n < 30:
		s := ServiceSpec{
			Namespace: ns, Name: pick(g.r, poolServices), App: pick(g.r, append([]string{""}, poolApps...)),
			VIP: pick(g.r, poolVIPs), PortName: pick(g.r, []string{"http", "grpc", "tcp"}), Port: 80 + int32(g.r.IntN(2)),
			TargetPort: 8080, PublishNotReady: g.r.IntN(4) == 0, ExportTo: pick(g.r, poolSvcExport),
		}
		if g.r.IntN(6) == 0 { // a network gateway
			s.Network, s.PortName, s.Port, s.TargetPort = pick(g.r, []string{"net1", "net2"}), "tls", 15443, 15443
			if g.r.IntN(3) == 0 {
				s.NodePort = 31443
			} else {
				s.Ingress = pick(g.r, []string{"", "203.0.113.1", "203.0.113.2", "gw.example.com"})
			}
		}
		return g.set(c, s.Key(), s.YAML(), del)
	case n < 50:
		return g.sliceOp(c, ns, del)
	case n < 75:
		return g.podOp(c, ns, del)
	case n < 88:
		s := ServiceEntrySpec{
			Namespace: ns, Name: pick(g.r, poolEntries), Host: pick(g.r, poolHosts),
			Resolution: pick(g.r, []string{"STATIC", "STATIC", "NONE", "DNS"}),
			Location:   pick(g.r, []string{"MESH_INTERNAL", "MESH_EXTERNAL"}),
			ExportTo:   pick(g.r, poolExportTo), PortName: pick(g.r, []string{"http", "tcp"}), Port: 80 + int32(g.r.IntN(2)),
		}
		if g.r.IntN(3) == 0 {
			s.Addresses = []string{pick(g.r, []string{"192.168.10.1", "192.168.10.2"})}
		}
		if g.r.IntN(2) == 0 {
			s.SelectApp = pick(g.r, poolApps)
		} else {
			for range g.r.IntN(3) {
				s.Endpoints = append(s.Endpoints, pick(g.r, poolIPs))
			}
			slices.Sort(s.Endpoints)
			s.Endpoints = slices.Compact(s.Endpoints)
		}
		if s.Resolution == "DNS" && s.SelectApp == "" && len(s.Endpoints) > 0 {
			s.Resolution = "STATIC" // keep DNS entries resolving their own host
		}
		if s.Resolution == "NONE" {
			s.Addresses = nil
		}
		k := s.Key()
		if _, ok := g.created[k]; !ok || g.world.Objects[Clusters[0]][k] == "" {
			g.created[k] = pick(g.r, poolCreated)
		}
		s.Created = g.created[k]
		return g.set(Clusters[0], k, s.YAML(), del)
	default:
		// WorkloadEntries in either cluster: the config cluster's and a
		// remote cluster's (read by its WorkloadEntry registry).
		s := WorkloadEntrySpec{
			Namespace: ns, Name: pick(g.r, poolWorkloads), IP: pick(g.r, poolIPs), App: pick(g.r, poolApps),
			Network: pick(g.r, poolNetworks), ServiceAccount: pick(g.r, []string{"", "vm"}),
		}
		return g.set(c, s.Key(), s.YAML(), del)
	}
}

// mcsOp writes or deletes a ServiceExport or a ServiceImport of a pool
// Service, in either cluster.
func (g *gen) mcsOp() string {
	r := g.mcs
	c, ns, name, del := pick(r, Clusters), pick(r, poolNamespaces), pick(r, poolServices), r.IntN(4) == 0
	if r.IntN(2) == 0 {
		s := ServiceExportSpec{Namespace: ns, Name: name, Created: pick(r, poolExported)}
		return g.set(c, s.Key(), s.YAML(), del)
	}
	s := ServiceImportSpec{Namespace: ns, Name: name, Type: pick(r, []string{"ClusterSetIP", "ClusterSetIP", "Headless"}),
		PortName: pick(r, []string{"http", "grpc"}), Port: 80 + int32(r.IntN(2))}
	for range r.IntN(3) {
		s.IPs = append(s.IPs, pick(r, poolClusterSetIPs))
	}
	return g.set(c, s.Key(), s.YAML(), del)
}

// set upserts or deletes one object.
func (g *gen) set(c model.ClusterID, key, yaml string, del bool) string {
	if del {
		g.world.Delete(c, key)
		return fmt.Sprintf("%s: delete %s", c, key)
	}
	g.world.Set(c, key, yaml)
	return fmt.Sprintf("%s: put %s", c, key)
}
