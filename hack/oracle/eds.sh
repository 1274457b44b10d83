#!/usr/bin/env bash
# Compares what examples/xds-server sends each proxy with what Istio's own
# xDS server sends it (the oracle, see ../shared/oracle/istio-xds and
# xds-fetch from the repository's parent), over the EDS scenarios in
# testdata/eds: each holds args (the flags both servers take, one a line)
# and proxies.yaml (the sidecars asking), optionally oracle-args (flags
# for istio-xds alone), and want.json, the golden that
# `go test ./examples/xds-server` holds the server to.
#
#   hack/oracle/eds.sh [SCENARIO-GLOB]
#
# For each scenario: istio-xds prints Istio's EDS for the proxies;
# examples/xds-server is started on the scenario and xds-fetch asks it as
# each proxy; hack/oracle/eds_compare.py compares the two, allowing the
# deliberate differences of hack/oracle/eds-allowed.txt (each with its
# reason, as docs/DIFFERENCES.md states them),
# and checks that the server sent exactly the scenario's want.json.
# Prints one block per scenario with differences and a summary line.
#
# ISTIO_XDS and XDS_FETCH are the oracle's binaries (default
# /tmp/istio-xds and /tmp/xds-fetch, built as their READMEs say). Outputs
# go to OUT (default a new temporary directory). A development tool: CI
# and `make test` do not run it.
set -uo pipefail
top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$top"
istio=${ISTIO_XDS:-/tmp/istio-xds}
fetch=${XDS_FETCH:-/tmp/xds-fetch}
glob=${1:-*}
allowed=$top/hack/oracle/eds-allowed.txt
out=${OUT:-$(mktemp -d)}; mkdir -p "$out"
for b in "$istio" "$fetch"; do
  [ -x "$b" ] || { echo "eds.sh: no oracle binary at $b (see ../shared/oracle/istio-xds/README.md)" >&2; exit 2; }
done
go build -o "$out/xds-server" ./examples/xds-server || exit 2

# A free loopback port.
port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

pass=0 fail=0
for dir in testdata/eds/$glob/; do
  name=$(basename "$dir")
  mapfile -t args < <(grep -v '^#' "$dir/args" | grep -v '^$')
  oargs=()
  [ -f "$dir/oracle-args" ] && mapfile -t oargs < <(grep -v '^#' "$dir/oracle-args" | grep -v '^$')
  if ! "$istio" "${args[@]}" "${oargs[@]}" -proxies "$dir/proxies.yaml" > "$out/$name.istio.json" 2> "$out/$name.istio.err"; then
    echo "== $name: istio-xds failed: $(tail -1 "$out/$name.istio.err")"; fail=$((fail+1)); continue
  fi
  xport=$(port) dport=$(port)
  # The two are picked apart: the second may be the first again.
  while [ "$dport" = "$xport" ]; do dport=$(port); done
  "$out/xds-server" "${args[@]}" -xds-addr "127.0.0.1:$xport" -debug-addr "127.0.0.1:$dport" 2> "$out/$name.server.err" &
  server=$!
  for _ in $(seq 100); do
    curl -sf "http://127.0.0.1:$dport/readyz" >/dev/null 2>&1 && break
    sleep 0.1
  done
  "$fetch" -addr "127.0.0.1:$xport" -proxies "$dir/proxies.yaml" > "$out/$name.meshreg.json" 2> "$out/$name.fetch.err"
  status=$?
  kill "$server"; wait "$server" 2>/dev/null
  if [ $status -ne 0 ]; then
    echo "== $name: xds-fetch failed: $(tail -1 "$out/$name.fetch.err")"; fail=$((fail+1)); continue
  fi
  ok=1
  res=$(python3 hack/oracle/eds_compare.py -s "$name" -d "$allowed" "$out/$name.istio.json" "$out/$name.meshreg.json") || ok=0
  golden=""
  if [ ! -f "$dir/want.json" ]; then
    golden="no want.json"; ok=0
  elif ! gres=$(python3 hack/oracle/eds_compare.py "$dir/want.json" "$out/$name.meshreg.json"); then
    golden=$(grep '^DIFF' <<<"$gres" | sed 's/^/want.json: /'); ok=0
  fi
  if [ $ok -eq 1 ]; then
    pass=$((pass+1))
    if grep -q '^ALLOW' <<<"$res"; then echo "== $name: agrees, with allowed differences"; grep '^ALLOW' <<<"$res" | sed 's/^/   /'; fi
  else
    fail=$((fail+1)); echo "== $name: differs"
    grep '^DIFF' <<<"$res" | sed 's/^/   /'
    [ -n "$golden" ] && sed 's/^/   /' <<<"$golden"
  fi
done
echo "eds scenarios: $pass agree with Istio (allowed differences aside), $fail differ; outputs in $out"
[ $fail -eq 0 ]
