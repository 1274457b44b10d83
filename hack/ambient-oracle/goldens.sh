#!/usr/bin/env bash
# Runs Istio's ambient index (the oracle in this directory, see README.md)
# over every scenario in testdata/addresses and compares its answer with
# the scenario's want.json (meshreg's index, which address.TestScenarios
# holds the package to), and after each of the scenario's steps
# (steps/<name>/cluster-*.yaml, applied through the running index: the
# oracle's -step) with the step's want.json, allowing the deliberate
# differences listed in allowed.txt, each with its reason
# (docs/DIFFERENCES.md states them).
#
#   hack/ambient-oracle/goldens.sh [SCENARIO-GLOB]
#
# AMBIENT_ORACLE is the oracle's binary (default /tmp/ambient-oracle,
# built as README.md says). The clusters are the scenario's
# cluster-*.yaml in name order, the first the config cluster, as the test
# reads them; options.json's trustDomain becomes -trust-domain, its
# multiNetwork -multi-network, its meshConfig (a file of the scenario's)
# -mesh-config. Prints one block per scenario with
# differences and a summary line. A development tool: CI does not run it.
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "$here/../.." && pwd)
cd "$top"
oracle=${AMBIENT_ORACLE:-/tmp/ambient-oracle}
glob=${1:-*}
out=${OUT:-$(mktemp -d)}; mkdir -p "$out"
[ -x "$oracle" ] || { echo "goldens.sh: no oracle binary at $oracle (see $here/README.md)" >&2; exit 2; }

pass=0 fail=0
for dir in testdata/addresses/$glob/; do
  name=$(basename "$dir")
  args=()
  for f in "$dir"/cluster-*.yaml; do
    id=$(basename "$f" .yaml); id=${id#cluster-}
    args+=(-cluster "$id=$f")
  done
  if [ -f "$dir/options.json" ]; then
    read -r -a extra < <(python3 - "$dir/options.json" <<'PY'
import json, os, sys
o = json.load(open(sys.argv[1]))
args = []
if o.get("trustDomain"):
    args += ["-trust-domain", o["trustDomain"]]
if o.get("multiNetwork"):
    args += ["-multi-network"]
if o.get("meshConfig"):
    args += ["-mesh-config", os.path.join(os.path.dirname(sys.argv[1]), o["meshConfig"])]
print(" ".join(args))
PY
)
    args+=("${extra[@]}")
  fi
  # The scenario's first state, then each step's (steps/*, in order).
  states=("$name")
  wants=("$dir/want.json")
  for step in "$dir"/steps/*/; do
    [ -d "$step" ] || continue
    s=$(basename "$step")
    args+=(-step "$step=$out/$name.$s.istio.json")
    states+=("$name.$s")
    wants+=("$step/want.json")
  done
  if ! "$oracle" "${args[@]}" -o "$out/$name.istio.json" 2>"$out/$name.err"; then
    echo "== $name: the oracle failed:"; sed 's/^/   /' "$out/$name.err"; fail=$((fail+${#states[@]})); continue
  fi
  for i in "${!states[@]}"; do
    st=${states[$i]}
    if python3 "$here/compare.py" --allowed "$here/allowed.txt" --scenario "$name" "$out/$st.istio.json" "${wants[$i]}" >"$out/$st.diff"; then
      pass=$((pass+1))
    else
      echo "== $st (Istio's index is WANT, meshreg's GOT):"; sed 's/^/   /' "$out/$st.diff"; fail=$((fail+1))
    fi
  done
done
echo "goldens.sh: $pass states (scenarios and their steps) agree with Istio's ambient index, $fail differ (outputs in $out)"
[ "$fail" -eq 0 ]
