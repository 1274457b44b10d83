#!/usr/bin/env python3
"""Compares what two xDS servers sent the same proxies: the JSON that
istio-xds prints for Istio and xds-fetch prints for any ADS server
(../shared/oracle/istio-xds/README.md has the format).

    hack/oracle/eds_compare.py [-s SCENARIO] [-d ALLOWED] ISTIO.json MESHREG.json

Each difference is a path and the two values:

    PROXY/cluster/NAME                          a cluster only one side has
    PROXY/cluster/NAME/endpoint/ADDR:PORT       an endpoint only one side has
    PROXY/cluster/NAME/endpoint/ADDR:PORT/FIELD locality, weight, health,
                                                or priority
    PROXY/cluster/NAME/localityWeights/LOC      a locality's weight

A proxy only one side has is the path PROXY. ALLOWED lists deliberate
differences, one a line: SCENARIO-GLOB PATH-GLOB REASON ('*' matches '/'
too, '#' starts a comment); a difference it matches prints as ALLOW with
the reason, any other as DIFF. One deliberate difference depends on what
Istio sends, which no glob can name, and is allowed by rule
(docs/DIFFERENCES.md):

    same-name-port  a cluster only Istio sends whose endpoints (addresses
                    and ports, at least one) are those of another cluster
                    of the same host that both send: a younger
                    ServiceEntry's port whose name an older entry of the
                    host gives another number. Istio merges it and serves
                    it the endpoints of that name, the other port's;
                    meshreg keeps a service's port names unique and does
                    not merge it.
 The last line is "N passed, M failed":
the clusters that agree (allowed differences aside) and those that do not.
Exit status 1 when one does not.
"""
import argparse
import fnmatch
import json
import sys

# additionalAddresses are not compared: xds-fetch does not print them.
FIELDS = ("locality", "weight", "health", "priority")


def load_allowed(path):
    rules = []
    if not path:
        return rules
    for line in open(path):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        parts = line.split(None, 2)
        if len(parts) < 3:
            sys.exit("%s: want SCENARIO-GLOB PATH-GLOB REASON: %r" % (path, line))
        rules.append(parts)
    return rules


def endpoints_by_key(eps):
    """Endpoints by address:port; a key listed twice gets #2, #3..."""
    out = {}
    for ep in eps:
        key = "%s:%s" % (ep["address"], ep["port"])
        k, n = key, 1
        while k in out:
            n += 1
            k = "%s#%d" % (key, n)
        out[k] = ep
    return out


def compare_cluster(path, a, b, diffs):
    ea, eb = endpoints_by_key(a.get("endpoints", [])), endpoints_by_key(b.get("endpoints", []))
    for key in sorted(set(ea) | set(eb)):
        p = "%s/endpoint/%s" % (path, key)
        if key not in eb:
            diffs.append((p, "present", "absent"))
            continue
        if key not in ea:
            diffs.append((p, "absent", "present"))
            continue
        for f in FIELDS:
            va, vb = ea[key].get(f), eb[key].get(f)
            if f == "priority":
                va, vb = va or 0, vb or 0
            if va != vb:
                diffs.append(("%s/%s" % (p, f), json.dumps(va), json.dumps(vb)))
    la, lb = a.get("localityWeights") or {}, b.get("localityWeights") or {}
    for loc in sorted(set(la) | set(lb)):
        if la.get(loc) != lb.get(loc):
            diffs.append(("%s/localityWeights/%s" % (path, loc), json.dumps(la.get(loc)), json.dumps(lb.get(loc))))


def same_name_port(name, clusters, theirs):
    """Whether the cluster name, which only Istio sends (clusters, by
    name), is allowed as same-name-port: another cluster of its host,
    which the other side sends too (theirs), has the same endpoints."""
    parts = name.split("|")
    eps = endpoints_by_key(clusters[name].get("endpoints", []))
    if len(parts) != 4 or not eps:
        return False
    for other, c in clusters.items():
        o = other.split("|")
        if other != name and len(o) == 4 and o[0] == parts[0] and o[2:] == parts[2:] and other in theirs and \
                endpoints_by_key(c.get("endpoints", [])).keys() == eps.keys():
            return True
    return False


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("-s", default="", help="the scenario's name, for ALLOWED")
    ap.add_argument("-d", default="", help="allowed differences")
    ap.add_argument("istio")
    ap.add_argument("meshreg")
    o = ap.parse_args()
    rules = load_allowed(o.d)
    ia, ma = json.load(open(o.istio)), json.load(open(o.meshreg))
    pa = {p["id"]: p for p in ia.get("proxies", [])}
    pb = {p["id"]: p for p in ma.get("proxies", [])}
    passed = failed = 0
    for pid in sorted(set(pa) | set(pb)):
        if pid not in pa or pid not in pb:
            print("DIFF %s: %s" % (pid, "only in istio" if pid in pa else "only in meshreg"))
            failed += 1
            continue
        ca = {c["name"]: c for c in pa[pid].get("clusters", [])}
        cb = {c["name"]: c for c in pb[pid].get("clusters", [])}
        for name in sorted(set(ca) | set(cb)):
            path = "%s/cluster/%s" % (pid, name)
            diffs = []
            if name not in cb and same_name_port(name, ca, cb):
                print("ALLOW %s: istio=present meshreg=absent (same-name-port: a younger ServiceEntry's port whose "
                      "name the host has for another number; Istio serves it that port's endpoints)" % path)
            elif name not in cb:
                diffs.append((path, "present", "absent"))
            elif name not in ca:
                diffs.append((path, "absent", "present"))
            else:
                compare_cluster(path, ca[name], cb[name], diffs)
            bad = False
            for p, va, vb in diffs:
                reason = next((r for s, g, r in rules
                               if fnmatch.fnmatchcase(o.s, s) and fnmatch.fnmatchcase(p, g)), None)
                if reason:
                    print("ALLOW %s: istio=%s meshreg=%s (%s)" % (p, va, vb, reason))
                else:
                    print("DIFF %s: istio=%s meshreg=%s" % (p, va, vb))
                    bad = True
            if bad:
                failed += 1
            else:
                passed += 1
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
