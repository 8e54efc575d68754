# Sourced by scripts/image-test.sh (uses its BASE, WORK, MIRROR, SECURITY_MIRROR, fail and dk).
# The local stand-in for the official image: Debian bookworm (minbase without documentation, as the
# slim images are) plus node, npm and the C headers under /usr/local and the `node` user (uid
# 1000), with `CMD ["node"]`. The network here may intercept TLS with its own CA: the host's extra
# CAs (NODE_EXTRA_CA_CERTS, as the host's own npm uses them) go into the image with
# NODE_EXTRA_CA_CERTS set, so npm in the build trusts what the host trusts. (The svc image's last
# stage sets its own environment, so that variable does not reach it.)
build_base() {
  local node_bin node_version prefix npm_dir headers arch openssl_arch ca
  node_bin=$(readlink -f "$(command -v node)")
  node_version=$(node -p 'process.versions.node')
  [ "${node_version%%.*}" = 20 ] || fail "this machine's node is $node_version; the local $BASE needs node 20"
  prefix=$(dirname "$(dirname "$node_bin")")
  npm_dir="$(npm root -g)/npm"
  headers="$prefix/include/node"
  [ -f "$npm_dir/bin/npm-cli.js" ] || fail "npm is not at $npm_dir"
  grep -q "define NODE_PATCH_VERSION ${node_version##*.}\$" "$headers/node_version.h" 2>/dev/null ||
    fail "no headers of node $node_version in $headers (native modules are compiled against them)"
  arch=$(dpkg --print-architecture)
  case "$arch" in
    amd64) openssl_arch=linux-x86_64 ;;
    arm64) openssl_arch=linux-aarch64 ;;
    *) fail "unsupported architecture $arch" ;;
  esac
  ca=${NODE_EXTRA_CA_CERTS:-}
  [ -z "$ca" ] && [ "$(npm config get cafile)" != null ] && ca=$(npm config get cafile)

  cat >"$WORK/base-hook.sh" <<HOOK
#!/bin/sh
set -eu
root="\$1"
install -D -m 0755 "$node_bin" "\$root/usr/local/bin/node"
ln -s node "\$root/usr/local/bin/nodejs"
mkdir -p "\$root/usr/local/lib/node_modules" "\$root/usr/local/include"
cp -a "$npm_dir" "\$root/usr/local/lib/node_modules/npm"
ln -s ../lib/node_modules/npm/bin/npm-cli.js "\$root/usr/local/bin/npm"
ln -s ../lib/node_modules/npm/bin/npx-cli.js "\$root/usr/local/bin/npx"
cp -a "$headers" "\$root/usr/local/include/node"
find "\$root/usr/local/include/node/openssl/archs" -mindepth 1 -maxdepth 1 ! -name "$openssl_arch" -exec rm -rf {} +
if [ -n "$ca" ]; then install -D -m 0644 "$ca" "\$root/usr/local/share/ca-certificates/build-network-extra-ca.pem"; fi
chroot "\$root" groupadd --gid 1000 node
chroot "\$root" useradd --uid 1000 --gid node --shell /bin/bash --create-home node
chroot "\$root" /usr/local/bin/node --version >/dev/null
HOOK
  chmod +x "$WORK/base-hook.sh"

  # Debian's python3 for mmdebstrap's helpers, whatever else PATH holds.
  if ! env PATH=/usr/sbin:/usr/bin:/sbin:/bin mmdebstrap --variant=minbase --format=tar --quiet \
    --hook-dir=/usr/share/mmdebstrap/hooks/merged-usr --dpkgopt=force-unsafe-io \
    --dpkgopt='path-exclude=/usr/share/man/*' --dpkgopt='path-exclude=/usr/share/doc/*' \
    --dpkgopt='path-include=/usr/share/doc/*/copyright' --dpkgopt='path-exclude=/usr/share/info/*' \
    --dpkgopt='path-exclude=/usr/share/locale/*' --dpkgopt='path-include=/usr/share/locale/locale.alias' \
    --customize-hook="$WORK/base-hook.sh" \
    bookworm "$WORK/rootfs.tar" \
    "deb $MIRROR bookworm main" "deb $MIRROR bookworm-updates main" "deb $SECURITY_MIRROR bookworm-security main" \
    2>"$WORK/mmdebstrap.log"; then
    tail -30 "$WORK/mmdebstrap.log" >&2
    fail "mmdebstrap could not make the bookworm root file system"
  fi
  local changes=(--change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin'
    --change "ENV NODE_VERSION=$node_version" --change 'CMD ["node"]'
    --change 'LABEL svc.image-test.local-base="bookworm (mmdebstrap) with the test machine'"'"'s node"')
  [ -n "$ca" ] && changes+=(--change 'ENV NODE_EXTRA_CA_CERTS=/usr/local/share/ca-certificates/build-network-extra-ca.pem')
  dk import "${changes[@]}" "$WORK/rootfs.tar" "$BASE" >/dev/null
  rm -f "$WORK/rootfs.tar"
}
