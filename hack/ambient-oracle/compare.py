#!/usr/bin/env python3
"""Compare two ambient-oracle documents ({"workloads": [...], "services": [...]}).

usage: compare.py WANT.json GOT.json

Workloads are matched by "uid", services by "namespace/hostname". For each key the
script prints entries missing from GOT or extra in GOT, and for matched entries every
differing field as a JSON path with both values. Lists are compared position by
position, but a service's subjectAltNames, which are a set: Istio's index sends a merged
(global) service's in the order of a Go map, so they are compared sorted. Exit status: 0 when the documents are equal, 1 when they differ, 2 on usage
or input errors.
"""

import json
import sys

MISSING = object()


def fmt(v):
    if v is MISSING:
        return "(absent)"
    return json.dumps(v, sort_keys=True)


def diff(want, got, path, out):
    """Append (path, want, got) for every difference between two JSON values."""
    if isinstance(want, dict) and isinstance(got, dict):
        for k in sorted(set(want) | set(got)):
            diff(want.get(k, MISSING), got.get(k, MISSING), "%s.%s" % (path, k) if _plain(k) else "%s[%s]" % (path, json.dumps(k)), out)
        return
    if isinstance(want, list) and isinstance(got, list):
        for i in range(max(len(want), len(got))):
            diff(want[i] if i < len(want) else MISSING, got[i] if i < len(got) else MISSING, "%s[%d]" % (path, i), out)
        return
    if want is MISSING and got is MISSING:
        return
    if type(want) is not type(got) or want != got:
        out.append((path, want, got))


def _plain(k):
    return k.replace("_", "").isalnum() and not k[:1].isdigit()


def index(doc, section, keyfn, name, problems):
    entries = doc.get(section)
    if entries is None:
        problems.append("%s: no %r list" % (name, section))
        return {}
    if not isinstance(entries, list):
        problems.append("%s: %r is not a list" % (name, section))
        return {}
    res = {}
    for i, e in enumerate(entries):
        if not isinstance(e, dict):
            problems.append("%s: %s[%d] is not an object" % (name, section, i))
            continue
        k = keyfn(e)
        if k in res:
            problems.append("%s: duplicate %s key %s" % (name, section, k))
        res[k] = e
    return res


SECTIONS = [
    ("workloads", lambda e: e.get("uid", "")),
    ("services", lambda e: "%s/%s" % (e.get("namespace", ""), e.get("hostname", ""))),
]


def as_compared(section, entry):
    """The entry as compared: a service's subjectAltNames sorted."""
    if section == "services" and isinstance(entry.get("subjectAltNames"), list):
        entry = dict(entry, subjectAltNames=sorted(entry["subjectAltNames"], key=json.dumps))
    return entry


def compare(want, got):
    """Returns the report lines; empty when equal."""
    lines = []
    for section, keyfn in SECTIONS:
        problems = []
        w = index(want, section, keyfn, "WANT", problems)
        g = index(got, section, keyfn, "GOT", problems)
        lines.extend(problems)
        for k in sorted(set(w) | set(g)):
            if k not in g:
                lines.append("%s %s: missing (in WANT, not in GOT)" % (section, k))
                continue
            if k not in w:
                lines.append("%s %s: extra (in GOT, not in WANT)" % (section, k))
                continue
            out = []
            diff(as_compared(section, w[k]), as_compared(section, g[k]), "", out)
            if out:
                lines.append("%s %s: %d field(s) differ" % (section, k, len(out)))
                for path, a, b in out:
                    lines.append("  %s: want %s, got %s" % (path.lstrip(".") or "$", fmt(a), fmt(b)))
    for k in sorted(set(want) | set(got)):
        if k in ("workloads", "services"):
            continue
        if want.get(k, MISSING) != got.get(k, MISSING):
            lines.append("top-level %s: want %s, got %s" % (k, fmt(want.get(k, MISSING)), fmt(got.get(k, MISSING))))
    return lines


def load(path):
    with open(path) as f:
        doc = json.load(f)
    if not isinstance(doc, dict):
        raise ValueError("%s: not a JSON object" % path)
    return doc


def load_allowed(path, scenario):
    """The patterns allowed.txt allows for a scenario: lines "SCENARIO-GLOB REGEX  # reason"."""
    import fnmatch
    import re
    pats = []
    with open(path) as f:
        for raw in f:
            line = raw.split(" # ", 1)[0].strip()
            if not line or line.startswith("#"):
                continue
            glob, _, pat = line.partition(" ")
            if fnmatch.fnmatch(scenario, glob):
                pats.append(re.compile(pat.strip()))
    return pats


def filter_allowed(lines, pats):
    """Drops the report lines a pattern matches; a field line is matched with its header."""
    out, header, kept_header = [], "", False
    for line in lines:
        if line.startswith("  "):
            full = header + " |" + line
            if not any(p.search(full) for p in pats):
                if not kept_header:
                    out.append(header)
                    kept_header = True
                out.append(line)
            continue
        header, kept_header = line, False
        if " field(s) differ" in line:
            continue  # printed with its first kept field
        if not any(p.search(line) for p in pats):
            out.append(line)
    return out


def main(argv):
    allowed, scenario = None, ""
    args = []
    i = 1
    while i < len(argv):
        if argv[i] == "--allowed" and i + 1 < len(argv):
            allowed = argv[i + 1]
            i += 2
        elif argv[i] == "--scenario" and i + 1 < len(argv):
            scenario = argv[i + 1]
            i += 2
        else:
            args.append(argv[i])
            i += 1
    if len(args) != 2:
        sys.stderr.write("usage: compare.py [--allowed FILE --scenario NAME] WANT.json GOT.json\n")
        return 2
    try:
        want, got = load(args[0]), load(args[1])
    except (OSError, ValueError) as e:
        sys.stderr.write("compare.py: %s\n" % e)
        return 2
    lines = compare(want, got)
    if allowed:
        lines = filter_allowed(lines, load_allowed(allowed, scenario))
    for line in lines:
        print(line)
    if lines:
        return 1
    print("EQUAL: %d workloads, %d services" % (len(want.get("workloads", [])), len(want.get("services", []))))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
