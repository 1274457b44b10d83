#!/usr/bin/env bash
# Runs Istio's registry (the oracle, see ../shared/oracle/README.md from
# the repository's parent) over every golden scenario in
# testdata/scenarios and compares its answer with the scenario's
# want.json, allowing the deliberate differences listed in
# hack/oracle/allowed.txt (each with its reason, as docs/DIFFERENCES.md
# states them) and those hack/oracle/differential.py derives from the two
# dumps (its port and merged-ports classes: see its doc).
#
#   hack/oracle/goldens.sh [SCENARIO-GLOB]
#
# ISTIO_DUMP is the oracle's binary (default /tmp/istio-dump, built as its
# README says); ORACLE the oracle's directory (default ../shared/oracle).
# A scenario's options.json gives the oracle the options it has flags for
# (domainSuffix, networkCIDRs as meshNetworks fromCidr, the mcs switches);
# one with other options is skipped. Removals are read as their result:
# the clusters remove.txt lists and the objects of removed-<ID>.yaml are
# left out. Prints one block per scenario with differences and a summary
# line. A development tool: CI does not run it.
set -uo pipefail
top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$top"
istio=${ISTIO_DUMP:-/tmp/istio-dump}
oracle=${ORACLE:-$top/../shared/oracle}
glob=${1:-*}
allowed=$top/hack/oracle/allowed.txt
out=${OUT:-$(mktemp -d)}; mkdir -p "$out"
[ -x "$istio" ] || { echo "goldens.sh: no oracle binary at $istio (see $oracle/README.md)" >&2; exit 2; }

pass=0 fail=0 skipped=0
for dir in testdata/scenarios/$glob/; do
  name=$(basename "$dir")
  args=()
  case $name in
    se-*) args+=(-cluster "Kubernetes=$dir/config.yaml") ;;
    *)
      removed=""
      [ -f "$dir/remove.txt" ] && removed=$(cat "$dir/remove.txt")
      for f in "$dir"/cluster-*.yaml; do
        id=$(basename "$f" .yaml); id=${id#cluster-}
        if grep -qx "$id" <<<"$removed"; then continue; fi
        args+=(-cluster "$id=$f")
      done ;;
  esac
  if [ -f "$dir/options.json" ]; then
    extra=$(python3 - "$dir/options.json" "$out/$name.mesh-networks.yaml" <<'PY'
import json, sys
o = json.load(open(sys.argv[1]))
# kube.Options.Network names the cluster's network over its system
# namespace's label, which Istio has no setting for: not run.
unsupported = [k for k in o if k not in ("domainSuffix", "networkCIDRs", "mcs")]
if unsupported:
    print("SKIP " + ",".join(sorted(unsupported)))
    sys.exit()
args = []
if "domainSuffix" in o:
    args += ["-domain-suffix", o["domainSuffix"]]
# Multi-Cluster Services: kube.MCSOptions's switches are Istio's.
mcs = o.get("mcs", {})
for key, flag in (("serviceDiscovery", "-mcs-discovery"), ("host", "-mcs-host"), ("clusterLocal", "-mcs-cluster-local")):
    if mcs.get(key):
        args.append(flag)
# The cluster's CIDR ranges are Istio's meshNetworks fromCidr.
networks = {}
for cidr, net in sorted(o.get("networkCIDRs", {}).items()):
    networks.setdefault(net, []).append("      - fromCidr: " + cidr)
if networks:
    with open(sys.argv[2], "w") as f:
        f.write("networks:\n")
        for net, eps in sorted(networks.items()):
            f.write("  %s:\n    endpoints:\n%s\n" % (net, "\n".join(eps)))
    args += ["-mesh-networks", sys.argv[2]]
print(" ".join(args))
PY
)
    case $extra in
      SKIP*) echo "== $name: skipped (options the oracle cannot take: ${extra#SKIP })"; skipped=$((skipped+1)); continue ;;
      *) args+=($extra) ;;
    esac
  fi
  [ -f "$dir/mesh-networks.yaml" ] && args+=(-mesh-networks "$dir/mesh-networks.yaml")
  if ! "$istio" "${args[@]}" > "$out/$name.istio.json" 2> "$out/$name.istio.err"; then
    echo "== $name: oracle failed: $(tail -1 "$out/$name.istio.err")"; fail=$((fail+1)); continue
  fi
  # The deliberate differences that depend on the two dumps
  # (differential.py's derived classes), beside allowed.txt's.
  { cat "$allowed"; python3 hack/oracle/differential.py derived "$name" "$out/$name.istio.json" "$dir/want.json"; } > "$out/$name.allowed.txt"
  if res=$("$oracle/compare/compare" -s "$name" -d "$out/$name.allowed.txt" "$out/$name.istio.json" "$dir/want.json" 2>&1); then
    pass=$((pass+1))
    if grep -q '^ALLOW' <<<"$res"; then echo "== $name: agrees, with allowed differences"; grep '^ALLOW' <<<"$res" | sed 's/^/   /'; fi
  else
    fail=$((fail+1)); echo "== $name: differs"; sed 's/^/   /' <<<"$res"
  fi
done
echo "scenarios: $pass agree with Istio (allowed differences aside), $fail differ, $skipped skipped; dumps in $out"
