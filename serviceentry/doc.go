// Package serviceentry is the registry of Istio ServiceEntries and
// WorkloadEntries: one model.Service per (namespace, host), their
// endpoints, and WorkloadEntries published as workload instances that
// Kubernetes Services can select.
//
// # Sources
//
// A Controller reads its objects from a Source: an InformerSource over a
// cluster's networking.istio.io/v1 objects (istio client-go informers), or
// a StaticSource whose objects are added, replaced and deleted from code,
// for manifests (decode them with istio client-go's scheme, or
// sigs.k8s.io/yaml into networkingv1.ServiceEntry and WorkloadEntry),
// tests and control planes that get their configuration elsewhere. Pods reach workloadSelectors through
// HandleWorkload, wired to the kube controllers by the aggregate, and so do
// the WorkloadEntries of other clusters (see below). An entry keeps the
// workloads it selects, and selection goes through a label index: an
// entry's change reads the workloads carrying its selector's rarest
// label, a pod's or WorkloadEntry's change the entries that could select
// it, and either costs their selected workloads' endpoints, not a scan of
// the namespace's workloads or entries.
//
// # WorkloadEntries of remote clusters
//
// Istio reads ServiceEntries from the config cluster only, but
// WorkloadEntries from every cluster: for each remote cluster istiod runs a
// WorkloadEntry-only controller (PILOT_ENABLE_CROSS_CLUSTER_WORKLOAD_ENTRY,
// on by default), whose entries join the Services of their own cluster and
// the config cluster's ServiceEntries. Options.WorkloadEntriesOnly makes a
// Controller that registry: it reports under the remote cluster's ID, so
// the entries' endpoints carry that cluster; it ignores ServiceEntries and
// takes no workloads in. Over an InformerSource, InformerOptions'
// WorkloadEntriesOnly watches the WorkloadEntries alone, and
// CRDPollInterval lets it run on a cluster without Istio's CRDs (it syncs
// empty, and reads the entries once the CRD is installed).
// kube/multicluster builds one per remote cluster from its Secret; for a
// cluster added by code, add one beside its kube controller:
//
//	src, _ := serviceentry.NewInformerSource(westIstio, serviceentry.InformerOptions{WorkloadEntriesOnly: true, CRDPollInterval: 10 * time.Second})
//	wes, _ := serviceentry.New(src, serviceentry.Options{ClusterID: "west", WorkloadEntriesOnly: true})
//	_ = agg.Add(westKube)
//	_ = agg.Add(wes)
//
// The full registry's HandleWorkload takes the WorkloadEntries the
// aggregate hands it from such registries, and its workloadSelectors
// select them in their own namespace like its own; an entry addressed by
// a DNS name or unix socket is not taken, as Istio never hands those over.
//
// Options.NamespaceSelector limits the registry to the objects of the
// namespaces whose labels it selects, as Istio's discoverySelectors do:
// the others are ignored, and a namespace whose labels change brings all
// its objects in or takes them all out. The namespaces come from the
// source (NamespaceSource): Namespace objects upserted into a
// StaticSource, or an InformerSource's namespace informer over the
// Kubernetes client in InformerOptions.Namespaces. Without a selector,
// every namespace is used.
//
// # Conversion
//
// Each ServiceEntry and WorkloadEntry is validated first, by the rules of
// Istio's admission webhook, for users who have none: hosts (DNS names, a
// wildcard only as the first label), addresses (IPs or CIDRs, CIDRs only
// with resolution NONE or STATIC), ports (numbers in range and unique,
// names DNS-1123 labels and unique, known protocols), exportTo ("." "*"
// "~" or namespace names, "*" and "~" alone), labels, the
// workloadSelector, and the rules of each resolution (STATIC endpoints by
// IP or unix socket, DNS endpoints by IP or DNS name and wildcard hosts
// only with endpoints, one endpoint at most for DNS_ROUND_ROBIN, several
// hosts only on ports that tell them apart, HTTP or TLS). An invalid
// object is left out whole and reported as one Error diagnostic listing
// every rule it breaks, and no other object is affected. What the webhook
// takes with a warning (a selector without labels, a partial wildcard
// host, ...) is used, with a Warning diagnostic. A valid entry becomes:
//
//   - one Service per host, provider External, with every address of the
//     entry as VIPs under Options.ClusterID, the ports' protocols,
//     MeshExternal for location MESH_EXTERNAL, exportTo sorted,
//     subjectAltNames as service accounts, and the creation time;
//   - resolution NONE→Passthrough, STATIC→ClientSideLB, DNS→DNS,
//     DNS_ROUND_ROBIN→DNSRoundRobin (one endpoint per port kept, see
//     below), DYNAMIC_DNS→DynamicDNS (wildcard hosts the client resolves
//     when it connects: no endpoints, and a workloadSelector selects
//     nothing);
//   - endpoints from its inline endpoints, or from the WorkloadEntries
//     and Pods its workloadSelector selects in its own namespace, or, for
//     a DNS entry with neither, from its host itself; the target port is
//     the workload's port for the port name, else the port's targetPort,
//     else the port number.
//
// Several entries declaring one host in one namespace make one service,
// as Istio's sidecar scope merges them: the oldest entry's attributes
// (then by name), with the ports of the younger entries merged in, and
// the endpoints of all of them for the merged ports. A younger entry's
// ports merge only when it has the oldest's resolution, labels,
// workloadSelector and exportTo (location, addresses and the rest are
// the oldest's alone); a port merges unless the host already has its
// number or its name, the older port being kept. A younger entry's port
// that the host does not have as declared is a Warning diagnostic on
// that entry, naming the entry that holds the port or the attributes that
// differ; its endpoints serve the host's port of the same name, if there
// is one, as Istio's EDS picks endpoints by port name, and are not used
// otherwise. A merged port names its entry (model.Port.Origin). Entries
// of other namespaces never add ports to a host of this one: each
// namespace's host is its own service. There is one endpoint per
// workload and port, not per address: two workloads at one IP are two
// endpoints, each inline endpoint is its own (two entries listing one
// address contribute one each, as in Istio), and only a Pod or
// WorkloadEntry selected by several of the entries is counted once. As in
// Istio, a DNS_ROUND_ROBIN entry contributes an endpoint for a port only
// when no endpoint of an older entry (or an earlier one of its own)
// serves that port.
//
// WorkloadEntry labels are the spec's merged with the metadata's, the
// metadata winning on a conflict (as in Istio); TLS mode comes from the
// security.istio.io/tlsMode label, else istio when a service account is
// set. A WorkloadEntry whose annotation proxy.istio.io/health-checks-enabled
// is true (as strconv.ParseBool reads it: "true", "1", "T", ...) is used
// only while its status has a Healthy condition with status True; until
// then it is left out entirely, as in Istio (no workload, so neither
// ServiceEntries nor Kubernetes Services select it, and no endpoint), with
// a Warning diagnostic.
//
// # Auto-allocated VIPs
//
// A host whose winning entry declares no addresses, has a resolution other
// than NONE and does not opt out (label
// networking.istio.io/enable-autoallocate-ip: "false") gets VIPs, reported
// as AutoAddresses: those the entry's status.addresses give it (Istio's IP
// allocator writes them), as Istio reads them; else, for a host that is
// not a wildcard (nor DYNAMIC_DNS), a pair the registry allocates from
// 240.240.0.0/16 and 2001:2::/48 (see autoaddress.go). The allocation is a
// function of the objects alone, whatever the order of their events, so
// replicas agree: the oldest entries' hosts are served first, a newer host
// never takes an older one's VIP, and a status address is never handed
// to another host.
//
// # Events
//
// The Controller publishes through internal/store: service events,
// endpoint events (the full set of one service), and workload events for
// WorkloadEntries; an update that changes nothing publishes nothing.
//
// # Testing on fake clientsets
//
// An InformerSource runs on istio client-go's fake clientset
// (fake.NewSimpleClientset) as it is: its informers list. A
// NewSharedInformerSource over an istio SharedInformerFactory built on
// that fake does not sync unless you act: since client-go v0.35 an
// informer streams its initial list by default (the WatchListClient
// feature) unless told the client cannot, istio client-go's generated
// informers never ask, and its fake never sends the bookmark that ends
// the stream. The registry's PendingSync, its Warn log record after
// Options.SyncReportInterval, and WaitSynced's error then name the
// ServiceEntry and WorkloadEntry informers. Call
// fixture.RefuseWatchList(fake) before the factory starts (the fake
// refuses the streaming request, as an API server without the feature
// does, and the informers list and watch), or set
// KUBE_FEATURE_WatchListClient=false in the test process's environment
// before any informer is created (client-go reads it once per process).
// Package fixture runs this controller on the fakes with that done.
package serviceentry
