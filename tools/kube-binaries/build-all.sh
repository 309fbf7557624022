#!/usr/bin/env bash
# Builds the Kubernetes binaries (build.sh) and Karmada's (build.sh karmada) at the same time: on a
# machine with a cold Go cache both spend most of their time waiting on the module proxy, so running
# them together saves about as long as the shorter one takes. Fails if either fails.
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
bash "$here/build.sh" &
kube=$!
bash "$here/build.sh" karmada &
karmada=$!
wait "$kube"
kube_status=$?
wait "$karmada"
karmada_status=$?
[ "$kube_status" -eq 0 ] && [ "$karmada_status" -eq 0 ]
