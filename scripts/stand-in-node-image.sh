#!/usr/bin/env bash
# Builds a local stand-in for the `node:24-bookworm-slim` base image, for machines that cannot pull images: Debian
# bookworm (debootstrap, minbase), the project's own Node.js 24 binary (node_modules/node, so `npm install` first) and
# npm, and a `node` user (uid 1000) as in the official image. Tags it docker.io/library/node:24-bookworm-slim so that
# `podman build --pull=never` resolves the Dockerfile's FROM to it. Needs root, debootstrap and podman; a few minutes.
set -euo pipefail
cd "$(dirname "$0")/.."
TAG=docker.io/library/node:24-bookworm-slim
MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
NODE_BIN=node_modules/node/bin/node
NPM_DIR=$(dirname "$(dirname "$(readlink -f "$(command -v npm)")")")
[ -x "$NODE_BIN" ] || { echo "missing $NODE_BIN: run npm install first" >&2; exit 1; }
"$NODE_BIN" --version | grep -q '^v24\.' || { echo "$NODE_BIN is not Node 24" >&2; exit 1; }

ROOT=$(mktemp -d /var/tmp/node-bookworm-rootfs.XXXXXX)
trap 'rm -rf "$ROOT"' EXIT
echo "== debootstrap bookworm into $ROOT"
debootstrap --variant=minbase bookworm "$ROOT" "$MIRROR" >/dev/null
echo "== Node $("$NODE_BIN" --version) and npm $(npm --version 2>/dev/null) into /usr/local"
install -m 0755 "$NODE_BIN" "$ROOT/usr/local/bin/node"
mkdir -p "$ROOT/usr/local/lib/node_modules"
cp -a "$NPM_DIR" "$ROOT/usr/local/lib/node_modules/npm"
ln -sf ../lib/node_modules/npm/bin/npm-cli.js "$ROOT/usr/local/bin/npm"
ln -sf ../lib/node_modules/npm/bin/npx-cli.js "$ROOT/usr/local/bin/npx"
chroot "$ROOT" groupadd --gid 1000 node
chroot "$ROOT" useradd --uid 1000 --gid node --shell /bin/bash --create-home node
rm -rf "$ROOT"/var/lib/apt/lists/* "$ROOT"/var/cache/apt/*.bin "$ROOT"/usr/share/doc/* "$ROOT"/usr/share/man/*
echo "== importing as $TAG"
tar -C "$ROOT" -c . | podman import \
  --change 'ENV NODE_VERSION='"$("$NODE_BIN" --version | tr -d v)" \
  --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
  --change 'CMD ["node"]' - "$TAG" >/dev/null
# Where the registry is reached through a TLS-intercepting proxy (as on this project's machines), npm inside the
# build needs the host's CA bundle; the official image would be given it the same way (NODE_EXTRA_CA_CERTS).
if [ -f /etc/ssl/certs/ca-certificates.crt ]; then
  echo "== adding the host's CA bundle (NODE_EXTRA_CA_CERTS)"
  CTX=$(mktemp -d)
  cp /etc/ssl/certs/ca-certificates.crt "$CTX/host-ca.crt"
  printf 'FROM %s\nCOPY host-ca.crt /usr/local/share/host-ca.crt\nENV NODE_EXTRA_CA_CERTS=/usr/local/share/host-ca.crt\n' "$TAG" > "$CTX/Containerfile"
  podman build --isolation=chroot --pull=never -q -t "$TAG" "$CTX" >/dev/null
  rm -rf "$CTX"
fi
podman image ls "$TAG"
