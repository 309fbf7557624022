#!/usr/bin/env bash
# Makes the base images the Dockerfile and docker-compose.yml build on, in podman's local storage,
# for machines that reach no container registry (CI, the development machines): a Debian bookworm
# minbase from the apt mirror, then on it Node (this repo's `node` devDependency binary and the npm
# that runs this script) in place of node:24-bookworm-slim, and Debian's redis-server in place of
# redis:7-alpine. An image already there is kept, so only the first run is slow (minutes).
# Prints NODE_IMAGE=<name> and REDIS_IMAGE=<name> on stdout; progress goes to stderr.
#   Needs: podman (runtime runc, see docs/development/sandbox.md), debootstrap; run as root.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
node_bin="$repo/node_modules/node/bin/node"
[[ -x $node_bin ]] || { echo "no $node_bin: run npm install first" >&2; exit 1; }
node_version=$("$node_bin" --version)
node_version=${node_version#v}
# The npm of this machine (its package directory), copied beside node as the node images ship it.
npm_dir=$(dirname "$(dirname "$(readlink -f "$(command -v npm)")")")

prefix=localhost/karmada-quota-base
debian_image=$prefix/debian:bookworm
node_image=$prefix/node:$node_version-bookworm-slim
redis_image=$prefix/redis:bookworm
progress() { echo "[image bases] $*" >&2; }

# The mirror apt uses here (debootstrap fetches the same packages), unless DEBIAN_MIRROR names one.
mirror=${DEBIAN_MIRROR:-$(sed -n 's/^URIs: *\([^ ]*\).*/\1/p' /etc/apt/sources.list.d/debian.sources 2>/dev/null | head -n1)}
mirror=${mirror:-http://deb.debian.org/debian}

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

if ! podman image exists "$debian_image"; then
  progress "making $debian_image with debootstrap from $mirror (about 2 minutes)"
  debootstrap --variant=minbase bookworm "$work/rootfs" "$mirror" >"$work/debootstrap.log" 2>&1 ||
    { tail -n 20 "$work/debootstrap.log" >&2; exit 1; }
  rm -rf "$work"/rootfs/var/cache/apt/archives/*.deb "$work"/rootfs/var/lib/apt/lists/*
  tar -C "$work/rootfs" -c . | podman import -q --change 'CMD ["bash"]' - "$debian_image" >/dev/null
  rm -rf "$work/rootfs"
fi

if ! podman image exists "$node_image"; then
  progress "making $node_image (node $node_version, npm from $npm_dir)"
  mkdir "$work/node"
  cp "$node_bin" "$work/node/node"
  cp -a "$npm_dir" "$work/node/npm"
  # A machine whose HTTPS egress goes through a proxy of its own CA needs Node in the image to
  # trust it too, or npm ci cannot reach the registry: the CA bundle this machine's Node or npm uses.
  ca_file=${NODE_EXTRA_CA_CERTS:-$(npm config get cafile 2>/dev/null || true)}
  extra_ca=
  if [[ -f $ca_file ]]; then
    cp "$ca_file" "$work/node/extra-ca.pem"
    extra_ca=$'COPY extra-ca.pem /usr/local/share/extra-ca.pem\nENV NODE_EXTRA_CA_CERTS=/usr/local/share/extra-ca.pem'
  fi
  # uid/gid 1000 "node", as in the official node images (the Dockerfile runs as 1000:1000).
  cat >"$work/node/Containerfile" <<CONTAINERFILE
FROM $debian_image
COPY node /usr/local/bin/node
COPY npm /usr/local/lib/node_modules/npm
$extra_ca
RUN ln -s ../lib/node_modules/npm/bin/npm-cli.js /usr/local/bin/npm \
 && ln -s ../lib/node_modules/npm/bin/npx-cli.js /usr/local/bin/npx \
 && groupadd --gid 1000 node && useradd --uid 1000 --gid node --create-home --shell /bin/bash node \
 && node --version && npm --version
CMD ["node"]
CONTAINERFILE
  podman build --pull=never -q -t "$node_image" "$work/node" >/dev/null
fi

if ! podman image exists "$redis_image"; then
  progress "making $redis_image (Debian's redis-server)"
  mkdir "$work/redis"
  cat >"$work/redis/Containerfile" <<CONTAINERFILE
FROM $debian_image
RUN apt-get update -q && apt-get install -y -q --no-install-recommends redis-server \
 && rm -rf /var/lib/apt/lists/*
CMD ["redis-server"]
CONTAINERFILE
  podman build --pull=never -q -t "$redis_image" "$work/redis" >/dev/null
fi

echo "NODE_IMAGE=$node_image"
echo "REDIS_IMAGE=$redis_image"
