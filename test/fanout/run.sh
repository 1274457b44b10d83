#!/usr/bin/env bash
# Runs the fan-out benchmark: the library's server (cmd/fanout-server)
# and Istio's (hack/fanout-istio), alternating, on one world, and prints
# the table of medians and ratios.
#
#   test/fanout/run.sh SIDECARS ZTUNNELS [RUNS]
#
# Builds what it runs (Istio's first build takes minutes), holds
# /tmp/heavy.lock for the whole run (run nothing else meanwhile), and
# writes the reports to OUT (default a new temporary directory). Istio's
# server runs with PILOT_MAX_REQUESTS_PER_SECOND raised: at its default
# (25 new streams a second on 2 cores) it refuses most of the proxies
# connecting at once, and the benchmark measures pushes, not admission.
# A development tool: CI does not run it.
set -euo pipefail
top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
sidecars=${1:?sidecars}
ztunnels=${2:?ztunnels}
runs=${3:-3}
out=${OUT:-$(mktemp -d)}
bin=$out/bin
mkdir -p "$bin"
exec 9>/tmp/heavy.lock
flock 9
(cd "$top" && go build -o "$bin/" ./test/fanout/cmd/fanout ./test/fanout/cmd/fanout-server)
(cd "$top/hack/fanout-istio" && go build -o "$bin/fanout-istio" .)
"$bin/fanout" world > "$out/world.yaml"

one() { # system run
  local server
  case $1 in
  meshreg) server=("$bin/fanout-server") ;;
  istio) server=(env PILOT_MAX_REQUESTS_PER_SECOND=100000 "$bin/fanout-istio") ;;
  esac
  "${server[@]}" -world "$out/world.yaml" -xds-addr 127.0.0.1:25010 -control-addr 127.0.0.1:25014 &
  local pid=$!
  "$bin/fanout" run -xds-addr 127.0.0.1:25010 -control http://127.0.0.1:25014 \
    -sidecars "$sidecars" -ztunnels "$ztunnels" > "$out/$1-$2.json" 2> "$out/$1-$2.err" || echo "$1 run $2 failed: see $out/$1-$2.err" >&2
  kill "$pid"
  wait "$pid" 2>/dev/null || true
}
for i in $(seq 1 "$runs"); do
  one meshreg "$i"
  one istio "$i"
done
"$bin/fanout" table "$out"/meshreg-*.json -- "$out"/istio-*.json
echo "reports in $out" >&2
