// Package kube is the meshreg registry of one Kubernetes cluster: it turns
// the cluster's Services, EndpointSlices (discovery.k8s.io/v1), Pods, Nodes
// and Namespaces into model Services, endpoints, Pod workload instances
// and diagnostics, in the shard (Kubernetes, cluster ID).
//
// Create a Controller with New over any kubernetes.Interface and run it
// with Run; or hand it a control plane's own informers
// (Options.Informers: a SharedInformerFactory's through FactoryInformers,
// or controller-runtime's), which it shares without modifying their
// objects. Queries answer from its store at any time (empty until the
// initial state is converted); HasSynced turns true once the informers'
// initial lists are converted and delivered to every handler;
// HandleWorkload takes the WorkloadEntries its Services may select (the
// aggregate wires it). A change converts only what it affects, and changes
// that arrive together are converted together: subscribers see the
// resulting state, never the states in between.
//
// Readiness, as a slice you write is read: an endpoint with ready true
// (or ready unset) is Healthy; ready: false with terminating: false is
// Unhealthy; ready: false with terminating true, or with terminating
// unset, is Terminating (Istio's rule: an endpoint that does not say it
// is not terminating is taken as going away; Draining instead when its
// Service carries one of Options.DrainingLabels and it still serves,
// serving true or unset). proxyview sends a
// Terminating endpoint to no proxy, and an Unhealthy one as unhealthy.
// Kubernetes' EndpointSlice controller always writes terminating; a
// slice written by hand or in a test for a pod that is merely not ready
// needs terminating: false to be Unhealthy.
//
// In tests, the controller runs on client-go's fake clientset as it is;
// see "Testing on fake clientsets" below, and package fixture, which runs
// it (and the serviceentry controller, under an aggregate) on fakes and
// follows it to a settled state.
//
// Values handed out are never modified. An endpoint that did not change
// when its service was converted again keeps its identity: the registry
// hands out the same *model.Endpoint as before, so a consumer may skip
// unchanged endpoints by comparing pointers (equal values may still come
// as different pointers).
//
// How the controller works inside (its worker, the staged and memoized
// computation of endpoints, the dependency graph, the initial
// conversion) is in ARCHITECTURE.md, "kube".
//
// # Conversion rules
//
// The rules are Istio's registry's (checked against it: hack/oracle), but
// for the few differences docs/DIFFERENCES.md lists.
//
//   - Hostnames are name.namespace.svc.<DomainSuffix>; VIPs are the
//     cluster IPs; headless Services are Passthrough, ExternalName ones
//     Alias and mesh-external; LoadBalancer ingress and externalIPs are
//     external addresses; exportTo comes from networking.istio.io/exportTo
//     and service accounts from alpha.istio.io/canonical-serviceaccounts
//     and alpha.istio.io/kubernetes-serviceaccounts.
//   - Endpoints come from EndpointSlices only (no legacy Endpoints), one
//     per address and service port, for the ports the Service declares.
//     An address in two slices is taken from the newest slice (creation
//     time, then name), an address a slice lists twice from its first
//     listing; the IPv4 and IPv6 addresses of one pod are one endpoint, in
//     the pod's order. Slices an MCS controller writes
//     (multicluster.kubernetes.io/service-name) are not the Service's.
//   - Health (conditions.go): ready or unset → Healthy; else serving and
//     terminating → Draining for a Service with one of
//     Options.DrainingLabels (Istio's persistent-session labels), else
//     terminating (unset counts) → Terminating; else Unhealthy. Serving
//     carries the serving condition.
//   - An endpoint takes its metadata from its targetRef pod, which must be
//     of its slice's namespace (a targetRef into another namespace is
//     used as naming none, with a diagnostic); an endpoint whose pod is
//     not known yet is withheld and reported pending, and released when
//     the pod arrives. An endpoint without a targetRef takes the metadata
//     of a Ready, non-hostNetwork pod of its Service's namespace at its
//     address, else only its cluster and network.
//   - Endpoint labels are the pod's labels plus topology.istio.io/cluster,
//     kubernetes.io/hostname (the node) and, when known,
//     topology.istio.io/network and the locality's region, zone and
//     subzone labels. Locality is the pod's topology.istio.io/locality
//     label, else its istio-locality label, else its node's
//     topology.kubernetes.io/region and zone (else the beta
//     failure-domain labels) and topology.istio.io/subzone. Network is
//     the pod's topology.istio.io/network label, else the cluster's
//     network (Options.Network, else that label on the system
//     namespace, else the mesh networks' network FromRegistry this
//     cluster, see SetMeshNetworks), else the most specific range of
//     Options.NetworkCIDRs and the mesh networks' FromCIDR ranges. A pod in a headless Service
//     lends its endpoints its DNS names (spec.hostname, spec.subdomain).
//   - Pods that serve (Ready, not being deleted, not terminal, with an
//     IP) are published as WorkloadInstances of kind Pod, which
//     ServiceEntry selectors select, with the same metadata and a port
//     map of their named TCP container and native-sidecar ports.
//   - WorkloadEntry instances handed in through HandleWorkload are
//     selected by the ClientSideLB Services of their namespace: a named
//     targetPort maps through the entry's ports (an entry without that
//     name does not serve the port), a numeric one is overridden by the
//     entry's port named like the service port.
//   - Network gateways (NetworkGateways, gateways.go) come from Services
//     labelled topology.istio.io/network: the networking.istio.io/gatewayPort
//     label's port (default 15443) and HBONE's 15008, each when the Service
//     has it, at each of the Service's external addresses; a NodePort
//     Service with the traffic.istio.io/nodeSelector annotation is reached
//     on its node ports at the first ExternalIP of each node it selects.
//     A Service the mesh networks name by registryServiceName, for a
//     network whose endpoints come from this cluster, is that network's
//     gateway on the port they give, unless its own label says otherwise.
//     With Options.GatewayClient, a Gateway API Gateway labelled
//     topology.istio.io/network is a gateway at each of its IPAddress and
//     Hostname addresses, on its auto-passthrough TLS and its HBONE
//     listeners (gatewayapi.go). Any namespace may declare gateways, as
//     in Istio, unless Options.GatewayNamespaces names the ones that may:
//     a mesh of tenants that do not trust each other should set it.
//
// # Multi-Cluster Services
//
// With Options.MCS, the controller reads the MCS API's ServiceExports and
// ServiceImports (multicluster.x-k8s.io/v1alpha1, through MCSOptions.Client)
// as Istio's three switches do, each needing the one before:
//
//   - ServiceDiscovery (ENABLE_MCS_SERVICE_DISCOVERY): a Service's
//     endpoints, its WorkloadEntries' included, are
//     model.AlwaysDiscoverable while the cluster has a ServiceExport of
//     its name, else model.DiscoverableFromSameCluster (for this
//     cluster's proxies only); the Service records the export
//     (model.Service.Exports). An export of a Service the cluster lacks
//     exports nothing (a diagnostic).
//   - Host (ENABLE_MCS_HOST): a ServiceImport with ClusterSet IPs
//     (spec.ips) gives name.namespace.svc.clusterset.local, a copy of the
//     cluster's Service of that name (else a service of the import's
//     ports) with the import's IPs as its VIPs, and the Service's
//     endpoints, always discoverable while the cluster exports it. A
//     headless import gives it as Passthrough without VIPs (Istio gives
//     none); an import without IPs gives none, with a diagnostic. The
//     ClusterSet host is no proxy target. An aggregate completes it with
//     the merged Service's attributes and the other clusters' endpoints.
//   - ClusterLocal (ENABLE_MCS_CLUSTER_LOCAL): the cluster.local host's
//     endpoints are for this cluster's proxies only.
//
// When the cluster does not serve the MCS API (its CRDs are not
// installed), Run logs it, exports nothing, and looks again every
// MCSOptions.CheckInterval; once it is served, the controller reads it
// without a restart.
//
// # Bad input
//
// Nothing panics and nothing unrelated is lost. A Service's duplicate or
// out-of-range ports, unknown protocols and malformed cluster IPs are
// dropped with a diagnostic (the rest of the Service is kept); FQDN slices
// and malformed slice addresses are diagnostics; slices of a missing
// Service are held, with a diagnostic, until it exists; slices without a
// kubernetes.io/service-name label are ignored; pods without an IP yield
// no workload. A ServiceImport's malformed IPs and bad ports are dropped,
// with a diagnostic.
//
// # Testing on fake clientsets
//
// Since client-go v0.35 an informer, by default, streams its initial
// list (the WatchListClient feature: a watch with sendInitialEvents,
// ended by a bookmark) unless its ListerWatcher says the client cannot. A
// fake over client-go's object tracker (kubernetes/fake, istio
// client-go's fake, the MCS API's and Gateway API's fakes) never sends
// the bookmark, so an informer that streams from one never syncs, and
// neither does a registry waiting for it.
//
// The controller's own informers (the default) and its Gateway API and
// MCS informers list on any such fake: nothing to set. Shared informers
// (Options.Informers) are their owner's: a client-go
// SharedInformerFactory's ask the fake and list too; informers that do
// not ask (istio client-go's generated ones, a cache.ListWatch of your
// own) hang on a fake. Either call fixture.RefuseWatchList on the fake
// before the informers start (the fake then refuses the streaming
// request, as an API server without the feature does, and the informers
// list), or set KUBE_FEATURE_WatchListClient=false in the test process's
// environment before any informer is created (client-go reads it once,
// for the whole process: for example with os.Setenv in TestMain).
//
// A registry that waits says for what: PendingSync (the informers that
// have not listed, by kind), WaitSynced's error (a *registry.SyncError),
// a Warn log record after Options.SyncReportInterval and each interval
// after, debughttp's /sync and the meshreg_sync_pending metric.
package kube
