#!/usr/bin/env python3
"""Prepare the reliability tier's random worlds for differential.sh.

usage: worlds.py [--multi] WORLDS-DIR

Each world is a directory world-<seed>/ of cluster-<id>.yaml manifests, the
config cluster being a. The worlds are rewritten in place so that they do
not exercise the deliberate differences between meshreg's address index and
Istio's (docs/DIFFERENCES.md) in ways compare.py cannot tell apart from a
bug; each step below names the difference it keeps out. Without --multi:

- ServiceEntries get creation times of their own: on a tie meshreg and
  Istio pick the winner of a host differently by design (decision 1).
- Pods get a uid, and each EndpointSlice targetRef the uid of the pod it
  names, as the EndpointSlice controller writes them: Istio's index matches
  a targetRef to its pod by uid too, meshreg by namespace and name.
- A Kubernetes Service of a cluster other than a, whose host a ServiceEntry
  of a names in the same namespace, is left out: in meshreg's registry it
  takes the host from the entry (a host in a namespace is one service), so
  the index, which does not hold that cluster's Service, has neither; Istio's
  index sends the entry.
- An EndpointSlice port that its Service (of the same cluster) does not
  have takes the name of the Service's first port: the registry holds no
  endpoint for a port its Service lacks (decision 8), so the index has
  neither the workloads of such a slice's endpoints without a pod nor the
  Service in the services of the pods it names, where Istio's index has
  both; the goldens cover that difference.
- An address that two EndpointSlices of a Service list is kept in the
  first only: the registry merges a Service's slices into one endpoint
  per address (the newest slice's listing), so the index has one workload
  where Istio's has one per slice (docs/DIFFERENCES.md).

With --multi (Istio's AMBIENT_ENABLE_MULTI_NETWORK on both sides) also:

- Networks and gateways: a's istio-system namespace is on net1; another
  cluster's on net1 in a world of even seed, else on net2, with an
  east-west Gateway (class istio-east-west) at 35.0.0.2.
- A Service named s1 is global (istio.io/global, testdata/global.yaml) when
  every cluster that has it declares it alike (the same spec but its
  cluster IPs): the registry merges a Service's versions, the first cluster's
  attributes ruling, where Istio's index selects each cluster's workloads by
  that cluster's version.
- Pods carry no network label of their own: a pod's network is its label's
  in meshreg (its endpoints' network), its cluster's in Istio's index; the
  runs without --multi cover that difference field by field, while with
  multi-network it would decide which pods are local.
- WorkloadEntries are left out: Istio's multicluster index builds every
  cluster's WorkloadEntry workloads from the config cluster's entries,
  under each cluster's ID, which then back that cluster's global services;
  the goldens cover WorkloadEntries with multi-network.
"""

import glob
import os
import re
import sys

SEP = "\n---\n"


def docs_of(path):
    return open(path).read().split(SEP)


def write(path, docs):
    open(path, "w").write(SEP.join(docs))


def kind(doc):
    m = re.search(r"^kind: (\S+)$", doc, re.M)
    return m.group(1) if m else ""


def meta(doc, field):
    m = re.search(r"^  %s: (\S+)$" % field, doc, re.M)
    return m.group(1) if m else ""


def add_label(doc, key, value):
    """Adds a label to a document's metadata."""
    if re.search(r"^  labels:$", doc, re.M):
        return re.sub(r"^  labels:\n", "  labels:\n    %s: %s\n" % (key, value), doc, count=1, flags=re.M)
    if re.search(r"^  labels: \{", doc, re.M):
        return re.sub(r"^  labels: \{", "  labels: {%s: %s, " % (key, value), doc, count=1, flags=re.M)
    return re.sub(r"^metadata:\n", "metadata:\n  labels: {%s: %s}\n" % (key, value), doc, count=1, flags=re.M)


def unique_entry_times(config):
    docs = docs_of(config)
    n = 0
    for i, d in enumerate(docs):
        if kind(d) == "ServiceEntry":
            docs[i] = re.sub(r'creationTimestamp: "(\d{4}-\d\d-\d\dT\d\d:\d\d):\d\dZ"', r'creationTimestamp: "\1:%02dZ"' % n, d)
            n += 1
    write(config, docs)


def pod_uids(path):
    cluster = os.path.basename(path)[len("cluster-"):-len(".yaml")]

    def uid(ns, name):
        return "uid-%s-%s-%s" % (cluster, ns, name)
    docs = docs_of(path)
    for i, d in enumerate(docs):
        if kind(d) == "Pod" and not re.search(r"^  uid:", d, re.M):
            d = re.sub(r"^metadata:\n", "metadata:\n  uid: %s\n" % uid(meta(d, "namespace"), meta(d, "name")), d, count=1, flags=re.M)
        if kind(d) == "EndpointSlice":
            d = re.sub(r"^(    kind: Pod\n    namespace: (\S+)\n    name: (\S+))$",
                       lambda m: m.group(1) + "\n    uid: " + uid(m.group(2), m.group(3)), d, flags=re.M)
        docs[i] = d
    write(path, docs)


def drop_shadowing_services(config, others):
    hosts, local = set(), set()
    for d in docs_of(config):
        m = re.search(r"^  hosts: \[(.*)\]$", d, re.M)
        if kind(d) == "ServiceEntry" and m:
            hosts.update((meta(d, "namespace"), h) for h in re.findall(r'"([^"]+)"', m.group(1)))
        if kind(d) == "Service":
            local.add((meta(d, "namespace"), meta(d, "name")))
    for path in others:
        keep = []
        for d in docs_of(path):
            ns, name = meta(d, "namespace"), meta(d, "name")
            if kind(d) == "Service" and (ns, "%s.%s.svc.cluster.local" % (name, ns)) in hosts and (ns, name) not in local:
                continue
            keep.append(d)
        write(path, keep)


EASTWEST = """apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata:
  name: eastwest
  namespace: istio-system
  labels: {topology.istio.io/network: net2}
spec:
  gatewayClassName: istio-east-west
  listeners:
  - {name: mesh, port: 15008, protocol: HBONE, tls: {mode: Terminate}}
status:
  addresses:
  - {type: IPAddress, value: 35.0.0.2}
"""


def multi_network(seed, files):
    def spec(d):
        return re.sub(r"\n  clusterIPs?: .*", "", d[d.index("\nspec:"):]) if "\nspec:" in d else ""
    versions = {}
    for path in files:
        for d in docs_of(path):
            if kind(d) == "Service" and meta(d, "name") == "s1":
                versions.setdefault(meta(d, "namespace"), set()).add(spec(d))
    alike = {ns for ns, v in versions.items() if len(v) == 1}
    for path in files:
        cluster = os.path.basename(path)[len("cluster-"):-len(".yaml")]
        network = "net1" if cluster == "a" or seed % 2 == 0 else "net2"
        docs, labelled = [], False
        for d in docs_of(path):
            k = kind(d)
            if k == "WorkloadEntry":
                continue
            if k == "Pod":
                d = re.sub(r"\n\s+topology\.istio\.io/network: .*", "", d)
            if k == "Service" and meta(d, "name") == "s1" and meta(d, "namespace") in alike:
                d = add_label(d, "istio.io/global", '"true"')
            if k == "Namespace" and meta(d, "name") == "istio-system":
                d = add_label(d, "topology.istio.io/network", network)
                labelled = True
            docs.append(d)
        if not labelled:
            docs.append("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: istio-system\n  labels: {topology.istio.io/network: %s}\n" % network)
        if network == "net2":
            docs.append(EASTWEST)
        write(path, docs)


def align_slice_ports(path):
    docs = docs_of(path)
    ports = {}
    for d in docs:
        if kind(d) == "Service":
            ports[(meta(d, "namespace"), meta(d, "name"))] = re.findall(r"^  - name: (\S+)$", d, re.M)
    for i, d in enumerate(docs):
        m = re.search(r"kubernetes\.io/service-name: (\S+)", d)
        names = ports.get((meta(d, "namespace"), m.group(1) if m else ""))
        if kind(d) != "EndpointSlice" or not names:
            continue
        head, sep, rest = d.partition("\nports:\n")
        block, sep2, tail = rest.partition("\nendpoints:")
        block = re.sub(r"^- name: (\S+)$", lambda n: n.group(0) if n.group(1) in names else "- name: " + names[0], block, flags=re.M)
        docs[i] = head + sep + block + sep2 + tail
    write(path, docs)


def one_listing_per_address(path):
    docs = docs_of(path)
    seen = {}
    for i, d in enumerate(docs):
        m = re.search(r"kubernetes\.io/service-name: (\S+)", d)
        if kind(d) != "EndpointSlice" or not m or "\nendpoints:\n" not in d:
            continue
        listed = seen.setdefault((meta(d, "namespace"), m.group(1)), set())
        head, sep, block = d.partition("\nendpoints:\n")
        items = re.split(r"(?m)^(?=- addresses:)", block)
        keep = []
        for item in items:
            a = re.match(r"- addresses: \[(.*)\]", item)
            if a:
                addrs = frozenset(x.strip() for x in a.group(1).split(","))
                if addrs & listed:
                    continue
                listed.update(addrs)
            keep.append(item)
        body = "".join(keep)
        docs[i] = head + sep + (body if body.strip() else "")
        if not body.strip():
            docs[i] = head + "\nendpoints: []\n"
    write(path, docs)


def main(argv):
    multi = "--multi" in argv
    args = [a for a in argv if a != "--multi"]
    if len(args) != 1:
        sys.stderr.write("usage: worlds.py [--multi] WORLDS-DIR\n")
        return 2
    for d in sorted(glob.glob(os.path.join(args[0], "world-*"))):
        seed = int(os.path.basename(d).split("-")[1])
        config = os.path.join(d, "cluster-a.yaml")
        files = sorted(glob.glob(os.path.join(d, "cluster-*.yaml")))
        unique_entry_times(config)
        for f in files:
            pod_uids(f)
            align_slice_ports(f)
            one_listing_per_address(f)
        drop_shadowing_services(config, [f for f in files if f != config])
        if multi:
            multi_network(seed, files)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
