#!/usr/bin/env bash
# Builds etcd, kube-apiserver, kube-controller-manager, kubectl, helm and an in-memory OCI registry
# (go-containerregistry's cmd/registry, for the release test) from the Go module proxy into a cache
# keyed by version, outside the work tree. Idempotent: a version already in the cache is kept, so
# only a new machine pays the cold build (minutes on 2 cores; the registry alone about 1.5).
#
# Usage: tools/kube-binaries/build.sh          prints the cache directory of each component
#        tools/kube-binaries/build.sh karmada  builds Karmada's controller-manager, scheduler,
#                                              scheduler-estimator and webhook instead (npm run karmada:binaries) and prints
#                                              their cache directory, then the directory of Karmada's
#                                              CRD bases in the Go module cache (installed from there)
# Env:   KARMADA_QUOTA_BIN_CACHE             cache root (default ${XDG_CACHE_HOME:-$HOME/.cache}/karmada-quota/bin)
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cache="${KARMADA_QUOTA_BIN_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/karmada-quota/bin}"

module_version() { # module dir, module path -> version required by that wrapper's go.mod
  (cd "$here/$1" && go list -m -f '{{.Version}}' "$2")
}

build() { # wrapper dir, version, output dir, then "binary=package" pairs
  local dir="$1" version="$2" out="$3"; shift 3
  local missing=()
  for pair in "$@"; do [ -x "$out/${pair%%=*}" ] || missing+=("$pair"); done
  if [ ${#missing[@]} -eq 0 ]; then echo "$out"; return; fi
  mkdir -p "$out"
  for pair in "${missing[@]}"; do
    local bin="${pair%%=*}" pkg="${pair#*=}"
    echo "building $bin $version (first run on this machine: this takes minutes)..." >&2
    local ldflags="" tags=""
    case "$pkg" in
      k8s.io/kubernetes/*)
        ldflags="-X k8s.io/component-base/version.gitVersion=$version -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=$(echo "$version" | cut -d. -f2) -X k8s.io/component-base/version.gitTreeState=clean" ;;
      github.com/karmada-io/karmada/*)
        ldflags="-X github.com/karmada-io/karmada/pkg/version.gitVersion=$version"
        # As Karmada's own hack/build.sh builds its releases: without this tag k8s.io/api v0.35 types
        # are no protobuf messages, and karmada-scheduler panics at its first scheduler-estimator call.
        tags="kubernetes_protomessage_one_more_release" ;;
      helm.sh/helm/*)
        ldflags="-X helm.sh/helm/v4/internal/version.version=$version -X helm.sh/helm/v4/internal/version.gitTreeState=clean" ;;
    esac
    # Build to a temp name of this process and rename, so neither an interrupted build nor one racing
    # it (parallel test workers on a cold cache) ever leaves a broken binary cached.
    (cd "$here/$dir" && CGO_ENABLED=0 go build -trimpath -tags "$tags" -ldflags "$ldflags" -o "$out/.$bin.partial.$$" "$pkg")
    mv -f "$out/.$bin.partial.$$" "$out/$bin"
  done
  echo "$out"
}

if [ "${1:-}" = karmada ]; then
  karmada_version="$(module_version karmada github.com/karmada-io/karmada)"
  # Under release-tags/: built with Karmada's release build tags (binaries cached before are rebuilt).
  build karmada "$karmada_version" "$cache/release-tags/karmada-$karmada_version" \
    "karmada-controller-manager=github.com/karmada-io/karmada/cmd/controller-manager" \
    "karmada-scheduler=github.com/karmada-io/karmada/cmd/scheduler" \
    "karmada-scheduler-estimator=github.com/karmada-io/karmada/cmd/scheduler-estimator" \
    "karmada-webhook=github.com/karmada-io/karmada/cmd/webhook"
  # The CRDs ship in the module: downloaded again if the module cache was cleaned since the build.
  (cd "$here/karmada" && go mod download github.com/karmada-io/karmada >&2 &&
    echo "$(go list -m -f '{{.Dir}}' github.com/karmada-io/karmada)/charts/karmada/_crds/bases")
  exit 0
fi

etcd_version="$(module_version etcd go.etcd.io/etcd/server/v3)"
kube_version="$(module_version kubernetes k8s.io/kubernetes)"
helm_version="$(module_version helm helm.sh/helm/v4)"
registry_version="$(module_version registry github.com/google/go-containerregistry)"
build etcd "$etcd_version" "$cache/etcd-$etcd_version" "etcd=go.etcd.io/etcd/server/v3"
build kubernetes "$kube_version" "$cache/kubernetes-$kube_version" \
  "kube-apiserver=k8s.io/kubernetes/cmd/kube-apiserver" \
  "kube-controller-manager=k8s.io/kubernetes/cmd/kube-controller-manager" \
  "kubectl=k8s.io/kubernetes/cmd/kubectl"
build helm "$helm_version" "$cache/helm-$helm_version" "helm=helm.sh/helm/v4/cmd/helm"
build registry "$registry_version" "$cache/registry-$registry_version" \
  "registry=github.com/google/go-containerregistry/cmd/registry"
