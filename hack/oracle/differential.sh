#!/usr/bin/env bash
# Differential testing of meshreg against Istio's registry (the oracle, see
# ../shared/oracle/README.md from the repository's parent) over random
# worlds: the reliability tier's generator writes N worlds as manifests
# (test/reliability/cmd/worlds), Istio's registry (istio-dump) and
# meshreg's (examples/registry-dump) read each, and the compare tool checks
# the two dumps, allowing the deliberate differences listed in
# hack/oracle/allowed.txt (scenario name world-<seed>) and those that
# differential.py derives from each world (see its doc: differences that
# depend on the world's objects, which no glob names).
#
#   hack/oracle/differential.sh [-n N] [-seed S] [-j J] [-o OUT] [-w WORLDS] [-recompare | -report]
#
#   -n N      worlds to generate (default 50), seeds S .. S+N-1
#   -seed S   the first seed (default 1)
#   -j J      worlds run in parallel (default 2)
#   -o OUT    output directory (default: a new temporary directory); it
#             gets OUT/world-<seed>/ holding the world's manifests (when
#             generated here), istio.json, meshreg.json, the deviations
#             the world was compared with (allowed.txt), compare.txt and
#             the *.err of both programs
#   -w WORLDS read the worlds from WORLDS/world-*/cluster-{a,b}.yaml
#             instead of generating them (-n and -seed are then ignored)
#   -recompare  keep the dumps of an earlier run's OUT: compare them again
#             (after a change of the allowed differences) and summarise
#   -report   run nothing: print the summary of an earlier run's OUT again
#
# ISTIO_DUMP is the oracle's binary (default /tmp/istio-dump, built as its
# README says); ORACLE the oracle's directory (default ../shared/oracle).
# Prints one line per world that differs (or fails to run), then a summary:
# worlds run, how many agree and differ, and a histogram of the differing
# checks with names generalised (service/*/endpoint/*/health: ...), each
# with the number of worlds it appears in and a few of them, and one of the
# allowed differences by reason. Exit status 1 when a world differs. A development tool: CI and `make test` do not run
# it.
set -uo pipefail
top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$top"
istio=${ISTIO_DUMP:-/tmp/istio-dump}
oracle=${ORACLE:-$top/../shared/oracle}
allowed=$top/hack/oracle/allowed.txt
helper=$top/hack/oracle/differential.py

n=50 seed=1 jobs=2 out="" worlds="" report="" recompare=""
usage() { echo "usage: differential.sh [-n N] [-seed S] [-j J] [-o OUT] [-w WORLDS] [-recompare | -report]" >&2; exit 2; }
while [ $# -gt 0 ]; do
  case $1 in
    -n) n=${2:?}; shift 2 ;;
    -seed) seed=${2:?}; shift 2 ;;
    -j) jobs=${2:?}; shift 2 ;;
    -o) out=${2:?}; shift 2 ;;
    -w) worlds=${2:?}; shift 2 ;;
    -report) report=1; shift ;;
    -recompare) recompare=1; shift ;;
    *) usage ;;
  esac
done
[[ $n =~ ^[0-9]+$ && $seed =~ ^[0-9]+$ && $jobs =~ ^[1-9][0-9]*$ ]] || usage
if [ -n "$report$recompare" ]; then
  [ -n "$out" ] || usage
  worlds=${worlds:-$out}
fi
if [ -z "$report" ]; then
  [ -x "$istio" ] || { echo "differential.sh: no oracle binary at $istio (see $oracle/README.md)" >&2; exit 2; }
fi
out=${out:-$(mktemp -d)}; mkdir -p "$out"; out=$(cd "$out" && pwd)
bin=$(mktemp -d); trap 'rm -rf "$bin"' EXIT

[ -n "$report" ] || go build -o "$bin/rd" ./examples/registry-dump || exit 2
if [ -z "$worlds" ]; then
  go build -o "$bin/worlds" ./test/reliability/cmd/worlds || exit 2
  "$bin/worlds" -n "$n" -seed "$seed" -o "$out" || exit 2
  worlds=$out
fi
worlds=$(cd "$worlds" && pwd)
names=$(cd "$worlds" && ls -d world-*/ 2>/dev/null | tr -d / | sort -t- -k2 -n)
total=$(wc -w <<<"$names")
[ "$total" -gt 0 ] || { echo "differential.sh: no world-*/ in $worlds" >&2; exit 2; }

# one_world NAME: runs both registries over one world and leaves its
# status (agree, differ or error) in OUT/NAME/status.
one_world() {
  local name=$1 in=$worlds/$1 dir=$out/$1
  mkdir -p "$dir"
  local args=(-cluster "a=$in/cluster-a.yaml" -cluster "b=$in/cluster-b.yaml")
  if [ -z "$recompare" ] || [ ! -s "$dir/istio.json" ] || [ ! -s "$dir/meshreg.json" ]; then
    if ! "$istio" "${args[@]}" > "$dir/istio.json" 2> "$dir/istio.err"; then
      echo "error istio-dump: $(tail -1 "$dir/istio.err")" > "$dir/status"
    elif ! "$bin/rd" -o json "${args[@]}" > "$dir/meshreg.json" 2> "$dir/meshreg.err"; then
      echo "error registry-dump: $(tail -1 "$dir/meshreg.err")" > "$dir/status"
    fi
  fi
  if [ ! -f "$dir/status" ]; then
    { cat "$allowed"; python3 "$helper" allow "$in" "$dir/istio.json" "$name"; } > "$dir/allowed.txt"
    "$oracle/compare/compare" -s "$name" -d "$dir/allowed.txt" "$dir/istio.json" "$dir/meshreg.json" > "$dir/compare.txt" 2>&1
    case $? in
      0) echo agree > "$dir/status" ;;
      1) echo differ > "$dir/status" ;;
      *) echo "error compare: $(tail -1 "$dir/compare.txt")" > "$dir/status" ;;
    esac
  fi
  local done
  done=$(cd "$out" && ls -d world-*/status 2>/dev/null | wc -l)
  if [ $((done % 50)) -eq 0 ]; then echo "differential.sh: $done worlds done" >&2; fi
}
export -f one_world
export istio oracle allowed helper out worlds bin recompare

if [ -z "$report" ]; then
  rm -f "$out"/world-*/status
  tr ' ' '\n' <<<"$names" | xargs -P "$jobs" -I{} bash -c 'one_world "$1"' _ {}
fi

python3 "$helper" report "$out" "$worlds" "$total" $names
