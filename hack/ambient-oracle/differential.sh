#!/usr/bin/env bash
# Differential testing of meshreg's address index against Istio's ambient
# index (the oracle in this directory) over random worlds: the
# reliability tier's generator writes N worlds as manifests
# (test/reliability/cmd/worlds), and for each world's clusters
# (cluster-a.yaml, the config cluster, then the others; both indexes hold
# the config cluster's alone, Istio's multi-network switch being off)
# the oracle and `registry-dump -o addresses` print the index; compare.py
# checks the two, allowing the differences of allowed.txt (scenario name
# world-<seed>).
#
#   hack/ambient-oracle/differential.sh [N] [SEED]
#
# STEPS=K gives each world K steps: the manifests of K other worlds,
# applied one after the other through both running indexes, the indexes
# compared after each (a change sequence over random worlds).
#
# MULTI=1 runs both with Istio's multi-network switch
# (AMBIENT_ENABLE_MULTI_NETWORK: -multi-network), every cluster in the
# index, with the mesh config hack/ambient-oracle/testdata/global.yaml
# (Services labelled istio.io/global=true are global).
#
# N worlds (default 50) from seed SEED (default 1). AMBIENT_ORACLE is the
# oracle's binary (default /tmp/ambient-oracle). Prints the differences
# of each world that differs and a summary line; exit status 1 when one
# does. A development tool: CI does not run it.
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "$here/../.." && pwd)
cd "$top"
oracle=${AMBIENT_ORACLE:-/tmp/ambient-oracle}
n=${1:-50} seed=${2:-1}
multi=()
if [ "${MULTI:-}" = 1 ]; then
  multi=(-multi-network -mesh-config "$here/testdata/global.yaml")
fi
out=${OUT:-$(mktemp -d)}
[ -x "$oracle" ] || { echo "differential.sh: no oracle binary at $oracle (see $here/README.md)" >&2; exit 2; }
steps=${STEPS:-0}
# World seed+i is the i-th world's first state; with STEPS=K, worlds
# seed+i+n, seed+i+2n, ... are its K steps: each brings every cluster to
# that world's manifests through the running indexes (the oracle's and
# registry-dump's -step), and both are compared after each.
go run ./test/reliability/cmd/worlds -n "$((n * (steps + 1)))" -seed "$seed" -o "$out/worlds" || exit 2
# worlds.py keeps out of the worlds the deliberate differences compare.py
# cannot tell from a bug (its doc says which and why), and with MULTI
# gives their clusters networks, gateways and global Services.
python3 "$here/worlds.py" $([ "${MULTI:-}" = 1 ] && echo --multi) "$out/worlds" || exit 2
go build -o "$out/registry-dump" ./examples/registry-dump || exit 2

pass=0 fail=0
for ((i = 0; i < n; i++)); do
  dir="$out/worlds/world-$((seed + i))"
  name=$(basename "$dir")
  [ "${MULTI:-}" = 1 ] && name="multi-$name"
  args=()
  for f in "$dir"/cluster-*.yaml; do
    id=$(basename "$f" .yaml); id=${id#cluster-}
    args+=(-cluster "$id=$f")
  done
  istio=() meshreg=() states=("$name")
  for ((j = 1; j <= steps; j++)); do
    st="$name.step$j"
    states+=("$st")
    stepdir="$out/worlds/world-$((seed + i + j * n))"
    istio+=(-step "$stepdir=$out/$st.istio.json")
    meshreg+=(-step "$stepdir=$out/$st.meshreg.json")
  done
  if ! "$oracle" "${args[@]}" "${multi[@]}" "${istio[@]}" -o "$out/$name.istio.json" 2>"$out/$name.istio.err"; then
    echo "== $name: the oracle failed:"; sed 's/^/   /' "$out/$name.istio.err"; fail=$((fail+${#states[@]})); continue
  fi
  if ! "$out/registry-dump" -o addresses "${args[@]}" "${multi[@]}" "${meshreg[@]}" >"$out/$name.meshreg.json" 2>"$out/$name.meshreg.err"; then
    echo "== $name: registry-dump failed:"; sed 's/^/   /' "$out/$name.meshreg.err"; fail=$((fail+${#states[@]})); continue
  fi
  for st in "${states[@]}"; do
    if python3 "$here/compare.py" --allowed "$here/allowed.txt" --scenario "$name" "$out/$st.istio.json" "$out/$st.meshreg.json" >"$out/$st.diff"; then
      pass=$((pass+1))
    else
      echo "== $st (Istio's index is WANT, meshreg's GOT):"; sed 's/^/   /' "$out/$st.diff"; fail=$((fail+1))
    fi
  done
done
echo "differential.sh: $pass states agree with Istio's ambient index, $fail differ (outputs in $out)"
[ "$fail" -eq 0 ]
