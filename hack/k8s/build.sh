#!/usr/bin/env bash
# Builds the servers of the integration tier (kube-apiserver,
# kube-controller-manager, etcd) from the Go module proxy into a
# versioned cache directory outside the repository, and prints that
# directory on the last line of its output. Work already done is skipped,
# so a second run takes a second.
#
#   hack/k8s/build.sh            build what is missing, print the directory
#   MESHREG_K8S_DIR=... build.sh build into another directory
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
version=1.37.2
cache="${XDG_CACHE_HOME:-$HOME/.cache}"
dir="${MESHREG_K8S_DIR:-$cache/meshreg/k8s-$version}"
mkdir -p "$dir"

build() { # name package
  local name=$1 pkg=$2
  if [[ -x "$dir/$name" ]]; then
    echo "k8s: $name present in $dir" >&2
    return
  fi
  echo "k8s: building $name ($pkg); a cold build takes minutes on 2 cores" >&2
  local start=$SECONDS
  (cd "$here" && go build -trimpath -o "$dir/$name.tmp" "$pkg")
  mv "$dir/$name.tmp" "$dir/$name"
  echo "k8s: built $name in $((SECONDS - start))s" >&2
}

build etcd go.etcd.io/etcd/server/v3
build kube-apiserver k8s.io/kubernetes/cmd/kube-apiserver
build kube-controller-manager k8s.io/kubernetes/cmd/kube-controller-manager
echo "$dir"
