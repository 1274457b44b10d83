#!/usr/bin/env python3
"""Helpers of differential.sh (Python 3, standard library only).

usage: differential.py allow WORLD ISTIO.json NAME
       differential.py derived NAME ISTIO.json MESHREG.json
       differential.py report OUT WORLDS TOTAL NAME...

allow prints, as lines of the compare tool's deviations file, the
deliberate differences of one world that no glob of hack/oracle/allowed.txt
can name, because they depend on the world's objects (docs/DIFFERENCES.md
and ARCHITECTURE.md's decisions give the reasons):

  port     an endpoint Istio indexes for a port its service does not have
           (a slice port named unlike the Service's, clusters disagreeing
           on the ports, a ServiceEntry's port): meshreg leaves it out, the
           merged service's ports rule (decision 8); Istio's EDS filters it.
  shadowed an endpoint a ServiceEntry would add to a Kubernetes Service of
           its hostname and namespace (its inline addresses, the workloads
           its selector matches): meshreg's ServiceEntry contributes none
           (decision 8); Istio's index keeps them, its EDS filters them.
  none     endpoints of a cluster whose Service is exported to "~": Istio
           indexes them only when the slice came before the Service, which
           in the oracle's creation order it never does (decisions 6, 7).
  once-per-workload  the endpoints of a host that several ServiceEntries with
           a workloadSelector declare: a workload they all select is one
           endpoint per port in meshreg, one per entry in Istio
           (decision 8).
  newest-slice  the endpoints at an address two slices of one Service
           list, and their fields: meshreg takes the newest slice's
           listing, with its ports, conditions and pod; Istio keeps per
           port name the listing its map iteration meets first
           (decision 6).
  own-ports  endpoints of a slice port that the slice's own cluster's
           Service does not declare: meshreg gives none, even when the
           merged Service (another cluster's ports rule it) has the port;
           Istio indexes them (decision 8).
  orphan   endpoints of a slice whose Service its cluster does not have:
           meshreg holds them, with a diagnostic, until the Service exists
           there; Istio indexes them under the hostname anyway, so they
           join another cluster's Service of that name, or a ServiceEntry
           of that hostname.
  merged-ports  the ports a younger ServiceEntry of a host (in the same
           namespace) adds to the host's service: meshreg merges them into
           the service, as Istio's sidecar scope does for each proxy
           (appendSidecarServices); Istio's registry, which the oracle
           prints, holds each entry's service apart, the oldest's winning.
           Derived from the two dumps alone: a ServiceEntry host whose
           ports in meshreg's dump are Istio's, in Istio's order, followed
           by others; each of the others is allowed (which ports merge is
           checked against Istio's EDS, hack/oracle/eds.sh).

Each is an exact check path (or a path up to the endpoint's cluster),
never a field of an endpoint both registries have, but for newest-slice,
where the fields come from another listing by design. The worlds are read as the
worlds command writes them (block YAML, one object per document).

derived prints the lines of the classes that depend on the two dumps
alone (port, merged-ports), for a golden scenario (hack/oracle/goldens.sh);
allow prints them for a world with the others.

report prints the summary of a run: one line per world that differs or
failed, counts, and the differences by class with names generalised.
"""

import json
import os
import re
import sys

CONFIG_CLUSTER = "a"
DOMAIN = "svc.cluster.local"


def documents(path):
    try:
        return open(path).read().split("\n---")
    except OSError:
        return []


def field(doc, indent, key):
    m = re.search(r"^%s%s: (.+)$" % (" " * indent, re.escape(key)), doc, re.M)
    return m.group(1).strip().strip('"') if m else None


def services(world, cluster):
    """(namespace, name, exportTo annotation) of a cluster's Services."""
    out = []
    for doc in documents(os.path.join(world, "cluster-%s.yaml" % cluster)):
        if re.search(r"^kind: Service$", doc, re.M):
            out.append((field(doc, 2, "namespace"), field(doc, 2, "name"),
                        field(doc, 4, "networking.istio.io/exportTo") or ""))
    return out


def slice_addresses(world, cluster):
    """(namespace, service name, address) of a cluster's EndpointSlices."""
    out = set()
    for doc in documents(os.path.join(world, "cluster-%s.yaml" % cluster)):
        if re.search(r"^kind: EndpointSlice$", doc, re.M):
            ns, svc = field(doc, 2, "namespace"), field(doc, 4, "kubernetes.io/service-name")
            for addrs in re.findall(r"^- addresses: \[(.*)\]$", doc, re.M):
                out |= {(ns, svc, a.strip()) for a in addrs.split(",")}
    return out


def slice_listings(world, cluster):
    """(namespace, service name, slice name, address) of a cluster's
    EndpointSlices' endpoints."""
    out = []
    for doc in documents(os.path.join(world, "cluster-%s.yaml" % cluster)):
        if re.search(r"^kind: EndpointSlice$", doc, re.M):
            ns, svc, name = field(doc, 2, "namespace"), field(doc, 4, "kubernetes.io/service-name"), field(doc, 2, "name")
            for addrs in re.findall(r"^- addresses: \[(.*)\]$", doc, re.M):
                out += [(ns, svc, name, a.strip()) for a in addrs.split(",")]
    return out


def own_port_gaps(world, cluster):
    """(namespace, service name, port name) of the ports a cluster's
    EndpointSlices list that the cluster's own Service of the slice does
    not declare."""
    ports = {}
    for doc in documents(os.path.join(world, "cluster-%s.yaml" % cluster)):
        if re.search(r"^kind: Service$", doc, re.M):
            ports[(field(doc, 2, "namespace"), field(doc, 2, "name"))] = set(re.findall(r"^  - name: (\S+)$", doc, re.M))
    out = set()
    for doc in documents(os.path.join(world, "cluster-%s.yaml" % cluster)):
        if re.search(r"^kind: EndpointSlice$", doc, re.M):
            key = (field(doc, 2, "namespace"), field(doc, 4, "kubernetes.io/service-name"))
            if key in ports:
                out |= {key + (p,) for p in re.findall(r"^- name: (\S+)$", doc, re.M) if p not in ports[key]}
    return out


def service_entries(world):
    """(namespace, hosts, inline addresses, selector labels or None) of the
    config cluster's ServiceEntries."""
    out = []
    for doc in documents(os.path.join(world, "cluster-%s.yaml" % CONFIG_CLUSTER)):
        if not re.search(r"^kind: ServiceEntry$", doc, re.M):
            continue
        hosts = re.findall(r'"([^"]+)"', field(doc, 2, "hosts") or "")
        addrs = re.findall(r"^  - address: (\S+)$", doc, re.M)
        sel = None
        m = re.search(r"^  workloadSelector:\n    labels:\n((?:      .*\n?)*)", doc, re.M)
        if m:
            sel = dict(re.findall(r"^      ([^:]+): (.*)$", m.group(1), re.M))
            sel = {k: v.strip().strip('"') for k, v in sel.items()}
        if not addrs and sel is None and field(doc, 2, "resolution") in ("DNS", "DNS_ROUND_ROBIN"):
            addrs = hosts  # a DNS entry without endpoints resolves its own hosts
        out.append((field(doc, 2, "namespace"), hosts, addrs, sel))
    return out


def load(path):
    try:
        return json.load(open(path))
    except (OSError, ValueError):
        return {}


def derived(name, istio, meshreg):
    """The lines of the port and merged-ports classes (see the module doc),
    which depend on the two dumps alone."""
    ours = {(s.get("hostname"), s.get("namespace")): s for s in meshreg.get("services") or []}
    lines = []
    for s in istio.get("services") or []:
        host, ns = s.get("hostname"), s.get("namespace")
        spath = "service/%s/%s" % (host, ns)
        ports = {p.get("name") for p in s.get("ports") or []}
        for e in s.get("endpoints") or []:
            if e.get("servicePort") not in ports:
                lines.append("%s %s/endpoint/%s/%s/%s/%s port: Istio indexes endpoints of a port its service lacks; "
                             "the merged service's ports rule (ARCHITECTURE.md decision 8)"
                             % (name, spath, e.get("servicePort"), e.get("address"), e.get("port"), e.get("cluster")))
        m = ours.get((host, ns))
        if s.get("provider") != "External" or m is None or m.get("provider") != "External":
            continue

        def key(p):
            return p.get("name"), p.get("port"), p.get("protocol")
        theirs, mine = [key(p) for p in s.get("ports") or []], [key(p) for p in m.get("ports") or []]
        if mine[:len(theirs)] != theirs:
            continue
        for port, _, _ in mine[len(theirs):]:
            lines.append("%s %s/ports/%s merged-ports: a younger ServiceEntry's port merged into the host, "
                         "as Istio's sidecar scope merges it; Istio's registry holds the oldest entry's ports"
                         % (name, spath, port))
    return lines


def allow(world, istio_path, name):
    istio = load(istio_path)
    meshreg = load(os.path.join(os.path.dirname(istio_path), "meshreg.json"))
    workloads = (istio.get("workloads") or []) + (meshreg.get("workloads") or [])
    lines = derived(name, istio, meshreg)
    for s in istio.get("services") or []:
        host, ns = s.get("hostname"), s.get("namespace")
        spath = "service/%s/%s" % (host, ns)
        if s.get("provider") != "Kubernetes":
            continue
        for se_ns, hosts, addrs, sel in service_entries(world):
            if se_ns != ns or host not in hosts:
                continue
            reached = {(a, CONFIG_CLUSTER) for a in addrs}
            for w in workloads if sel else []:
                labels = w.get("labels") or {}
                if w.get("namespace") == ns and all(labels.get(k) == v for k, v in sel.items()):
                    reached |= {(a, w.get("cluster")) for a in w.get("addresses") or []}
            for a, c in sorted(reached):
                lines.append("%s %s/endpoint/*/%s/*/%s shadowed: a Kubernetes Service beats a ServiceEntry of its "
                             "hostname, which contributes no endpoints to it (ARCHITECTURE.md decision 8)" % (name, spath, a, c))
    selecting = {}
    for se_ns, hosts, _, sel in service_entries(world):
        if sel is not None:
            for h in hosts:
                selecting[(se_ns, h)] = selecting.get((se_ns, h), 0) + 1
    for (se_ns, h), n in sorted(selecting.items()):
        if n > 1:
            lines.append("%s service/%s/%s/endpoint/* once-per-workload: a workload that several ServiceEntries of one "
                         "host select is one endpoint per port; Istio lists it once per entry (ARCHITECTURE.md decision 8)"
                         % (name, h, se_ns))
    for c in ("a", "b"):
        for ns, svc, export in services(world, c):
            if "~" in [x.strip() for x in export.split(",")]:
                lines.append("%s service/%s.%s.%s/%s/endpoint/*/%s none: Istio indexes the endpoints of a Service "
                             "exported to ~ only when its slice came first (ARCHITECTURE.md decisions 6, 7)"
                             % (name, svc, ns, DOMAIN, ns, c))
        counts = {}
        for ns, svc, slice_name, addr in slice_listings(world, c):
            counts.setdefault((ns, svc, addr), set()).add(slice_name)
        for (ns, svc, addr), names in sorted(counts.items()):
            if len(names) > 1:
                # The endpoint, and each field of it: the newest slice's
                # listing gives its conditions and the pod it names.
                for tail in ("", "/*"):
                    lines.append("%s service/%s.%s.%s/%s/endpoint/*/%s/*/%s%s newest-slice: an address two slices of a "
                                 "Service list is taken from the newest, with its ports, conditions and pod; Istio keeps per "
                                 "port the listing its map iteration meets first (ARCHITECTURE.md decision 6)"
                                 % (name, svc, ns, DOMAIN, ns, addr, c, tail))
        for ns, svc, port in sorted(own_port_gaps(world, c)):
            lines.append("%s service/%s.%s.%s/%s/endpoint/%s/*/%s own-ports: a slice port its cluster's Service does not "
                         "declare gives no endpoints, even when the merged Service (another cluster's ports) has it; Istio "
                         "indexes them under the merged Service's port (ARCHITECTURE.md decision 8)"
                         % (name, svc, ns, DOMAIN, ns, port, c))
        present = {(n, v) for n, v, _ in services(world, c)}
        for ns, svc, addr in sorted(slice_addresses(world, c)):
            if (ns, svc) not in present:
                lines.append("%s service/%s.%s.%s/*/endpoint/*/%s/*/%s orphan: a slice whose Service its cluster lacks "
                             "is held until the Service exists there; Istio indexes it under the hostname"
                             % (name, svc, ns, DOMAIN, addr, c))
    print("\n".join(lines))


# --- report ---

def general_path(p):
    """A check path with its names left out: service/*/endpoint/*/health."""
    p = re.sub(r"^service/[^/]+/[^/]+", "service/*", p)
    p = re.sub(r"/endpoint/[^/]*/[^/]*/[^/]*/[^/]*", "/endpoint/*", p)
    p = re.sub(r"/(ports|addresses)/[^/]*", r"/\1/*", p)
    p = re.sub(r"^gateway/[^/]*/[^/]*/[^/]*/[^/]*", "gateway/*", p)
    return p


def general_msg(m):
    """A difference's message with addresses, counts and names left out."""
    m = re.sub(r"\(expected \d+, got \d+\)", "", m).strip()
    m = re.sub(r"\d+\.\d+\.\d+\.\d+", "IP", m)
    m = re.sub(r"/ns/[^/\"]+/sa/[^\"]*", "/ns/*/sa/*", m)
    return m


class Dump:
    """One dump, indexed to describe what a difference is about."""

    def __init__(self, path):
        d = load(path)
        self.services = {(s.get("hostname"), s.get("namespace")): s for s in d.get("services") or []}
        self.kinds = {}
        for w in d.get("workloads") or []:
            self.kinds["%s/%s" % (w.get("namespace"), w.get("name"))] = w.get("kind", "?")

    def endpoint(self, host, ns, key):
        for e in (self.services.get((host, ns)) or {}).get("endpoints") or []:
            if "%s/%s/%s/%s" % (e.get("servicePort"), e.get("address"), e.get("port"), e.get("cluster")) == key:
                return e


def describe(path, istio, meshreg, world):
    """What a difference is about, in general terms: the service's provider,
    and for an endpoint one registry lacks, the kind of workload behind it
    (a Pod, a WorkloadEntry, or none known) and, when only Istio has it,
    whether it comes from a slice of a cluster that lacks the slice's
    Service."""
    m = re.match(r"service/([^/]+)/([^/]+)(/endpoint/([^/]*/([^/]*)/[^/]*/([^/]*)))?", path)
    if not m:
        return ""
    host, ns, key, addr, cluster = m.group(1), m.group(2), m.group(4), m.group(5), m.group(6)
    out = [(istio.services.get((host, ns)) or meshreg.services.get((host, ns)) or {}).get("provider", "?")]
    if key:
        for d in (istio, meshreg):
            e = d.endpoint(host, ns, key)
            if e is None:
                continue
            out.append(d.kinds.get(e.get("workload") or "", "no workload"))
            k = re.match(r"([^.]+)\.([^.]+)\.svc\.", host)
            if d is istio and k and (k.group(2), k.group(1), addr) in slice_addresses(world, cluster) and \
                    (k.group(2), k.group(1)) not in {(n, s) for n, s, _ in services(world, cluster)}:
                out.append("from a slice whose Service its cluster lacks")
            break
    return " [%s]" % ", ".join(out)


def report(out, worlds, total, names):
    agree = with_allowed = 0
    differ, errors, classes, allowed = [], [], {}, {}
    for name in names:
        d = os.path.join(out, name)
        try:
            status = open(os.path.join(d, "status")).read().strip()
        except OSError:
            status = "error: no status"
        if status not in ("agree", "differ"):
            errors.append(name)
            print("%s: %s" % (name, status))
            continue
        istio, meshreg = Dump(os.path.join(d, "istio.json")), Dump(os.path.join(d, "meshreg.json"))
        fails, mine, allows = 0, [], set()
        for line in open(os.path.join(d, "compare.txt")):
            m = re.match(r"ALLOW \S+ \S+: .* \(deviation: (\w+):", line)
            if m:
                allows.add(m.group(1))
                continue
            m = re.match(r"ALLOW \S+ \S+: .* \(deviation: (.*)\)$", line.rstrip("\n"))
            if m:
                allows.add(m.group(1))
                continue
            m = re.match(r"FAIL \S+ (\S+): (.*)$", line.rstrip("\n"))
            if not m:
                continue
            fails += 1
            cls = "%s: %s%s" % (general_path(m.group(1)), general_msg(m.group(2)),
                                describe(m.group(1), istio, meshreg, os.path.join(worlds, name)))
            if cls not in mine:
                mine.append(cls)
                classes.setdefault(cls, []).append(name)
        for a in allows:
            allowed.setdefault(a, []).append(name)
        if status == "agree":
            agree += 1
            with_allowed += bool(allows)
            continue
        differ.append(name)
        print("%s: %d differences (%s)" % (name, fails, "; ".join(mine)))

    print("worlds: %d run, %d agree with Istio (%d of them with allowed differences), %d differ, %d failed to run; "
          "output in %s" % (total, agree, with_allowed, len(differ), len(errors), out))

    def histogram(title, hist):
        if not hist:
            return
        print(title)
        for cls, ws in sorted(hist.items(), key=lambda kv: (-len(kv[1]), kv[0])):
            print("  %s: %d worlds (%s%s)" % (cls, len(ws), ", ".join(ws[:5]), ", ..." if len(ws) > 5 else ""))

    histogram("allowed differences by reason (worlds each appears in):", allowed)
    histogram("differences by class, Istio's dump being the expected one (missing: only Istio has it; unexpected: "
              "only meshreg) [the service's provider; for an endpoint only one has: the kind of workload behind it, "
              "and whether it comes from a slice whose Service its cluster lacks]:", classes)
    return 1 if differ or errors else 0


def main(argv):
    if len(argv) == 4 and argv[0] == "allow":
        allow(argv[1], argv[2], argv[3])
        return 0
    if len(argv) == 4 and argv[0] == "derived":
        lines = derived(argv[1], load(argv[2]), load(argv[3]))
        if lines:
            print("\n".join(lines))
        return 0
    if len(argv) >= 4 and argv[0] == "report":
        return report(argv[1], argv[2], int(argv[3]), argv[4:])
    print(__doc__.split("\n\n")[1], file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
