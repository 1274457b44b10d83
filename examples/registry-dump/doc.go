// Command registry-dump prints a meshreg registry: the services,
// endpoints, workloads, network gateways and diagnostics of one or more
// clusters, built from manifests or watched live.
//
// With no arguments it prints an embedded demo: two clusters on two
// networks with services, pods and EndpointSlices across zones, each
// network's east-west gateway, a ServiceEntry whose workloadSelector
// selects pods, WorkloadEntries, and one deliberately invalid
// ServiceEntry.
//
// Usage:
//
//	registry-dump [flags]
//
//	-cluster NAME=PATH      manifests (a YAML file or a directory) for a cluster; repeatable.
//	                        The first cluster is the config cluster: its ServiceEntries
//	                        and WorkloadEntries feed the serviceentry controller; the
//	                        WorkloadEntries of the others feed one registry each.
//	-f PATH                 shorthand for -cluster Kubernetes=PATH
//	-kubeconfig [NAME=]PATH watch a live cluster; repeatable
//	-o table|json|yaml|addresses
//	                        output format (json is the registry dump format; addresses
//	                        Istio ambient's address index, package address, as JSON)
//	-multi-network          with -o addresses: every cluster in the index, as Istio's
//	                        AMBIENT_ENABLE_MULTI_NETWORK (else the config cluster alone)
//	-step DIR=OUT           with -o addresses: after printing, bring the clusters
//	                        DIR/cluster-<id>.yaml names to those manifests and write the
//	                        index to OUT (repeatable; hack/ambient-oracle's -step)
//	-mesh-config FILE       Istio's mesh config: its serviceEntryVisibility, and with
//	                        -o addresses its serviceScopeConfigs (which Services are global)
//	-watch                  keep running and print each change
//	-domain-suffix SUFFIX   service hostname suffix (default cluster.local)
//	-trust-domain DOMAIN    SPIFFE trust domain (default cluster.local)
//	-namespace-selector SEL only namespaces whose labels match, e.g. "mesh=on"
//	-mesh-networks FILE     Istio's meshNetworks YAML: endpoint networks, network gateways
//	-mcs-discovery          Multi-Cluster Services: endpoints reach other clusters only
//	                        where a ServiceExport exports their Service (ENABLE_MCS_SERVICE_DISCOVERY)
//	-mcs-host               and each ServiceImport gives name.ns.svc.clusterset.local (ENABLE_MCS_HOST)
//	-mcs-cluster-local      and name.ns.svc.cluster.local reaches its own cluster only (ENABLE_MCS_CLUSTER_LOCAL)
//
// Bad flags or unreadable files print one line and exit with status 2;
// objects the registry refuses are diagnostics in the output, and the
// status is 0.
package main
