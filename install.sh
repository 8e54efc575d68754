#!/usr/bin/env bash
# Installs or upgrades svc on a Debian/Ubuntu host:
#   code under /opt/svc, data under /var/lib/svc, settings in /etc/svc/svc.env (0600, with a
#   generated SVC_MASTER_KEY), the `svc` command in /usr/local/bin, and the systemd unit enabled
#   and started. Re-running it upgrades in place and keeps the data, the settings and the key.
#
#   sudo ./install.sh [--prefix DIR] [--no-systemd] [--user NAME]
#
# --prefix DIR   install below DIR instead of / (for tests and packaging)
# --no-systemd   do not install, enable or restart the systemd unit
# --user NAME    the system user the server runs as (default svc)
set -euo pipefail

usage() {
  cat <<'USAGE'
Usage: sudo ./install.sh [--prefix DIR] [--no-systemd] [--user NAME]

Installs or upgrades svc on a Debian/Ubuntu host: the code in /opt/svc, the data in /var/lib/svc,
the settings in /etc/svc/svc.env (mode 0600, with a generated SVC_MASTER_KEY), the `svc` command
in /usr/local/bin, and the systemd unit, enabled and started. Run it again to upgrade in place:
the data, the settings and the key are kept.

Options:
  --prefix DIR   install below DIR instead of / (for tests and packaging)
  --no-systemd   do not install, enable or restart the systemd unit
  --user NAME    the system user the server runs as (default svc)
  -h, --help     show this text
USAGE
}

PREFIX=""
SYSTEMD=1
SVC_USER="svc"
while [ $# -gt 0 ]; do
  case "$1" in
    --prefix) PREFIX="${2:?--prefix needs a directory}"; shift 2 ;;
    --prefix=*) PREFIX="${1#--prefix=}"; shift ;;
    --no-systemd) SYSTEMD=0; shift ;;
    --user) SVC_USER="${2:?--user needs a name}"; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    *) echo "install.sh: unknown option $1 (see ./install.sh --help)" >&2; exit 2 ;;
  esac
done
PREFIX="${PREFIX%/}"
SRC="$(cd "$(dirname "$0")" && pwd)"
CODE="$PREFIX/opt/svc"
DATA="$PREFIX/var/lib/svc"
ETC="$PREFIX/etc/svc"
ENV_FILE="$ETC/svc.env"
BIN="$PREFIX/usr/local/bin/svc"
UNIT="$PREFIX/etc/systemd/system/svc.service"

say() { printf 'install.sh: %s\n' "$*" >&2; }
die() { say "$*"; exit 1; }

NODE="$(command -v node || true)"
[ -n "$NODE" ] || die "Node.js 20 or newer is needed (https://nodejs.org or your distribution's nodejs package)"
NODE_MAJOR="$("$NODE" -p 'process.versions.node.split(".")[0]')"
[ "$NODE_MAJOR" -ge 20 ] || die "Node.js $("$NODE" -v) is too old; 20 or newer is needed"
command -v npm >/dev/null || die "npm is needed next to node"

IS_ROOT=0
[ "$(id -u)" -eq 0 ] && IS_ROOT=1
if [ "$IS_ROOT" -eq 1 ] && ! id -u "$SVC_USER" >/dev/null 2>&1; then
  say "creating system user $SVC_USER"
  useradd --system --home-dir "$DATA" --no-create-home --shell /usr/sbin/nologin "$SVC_USER"
fi

# Build the new release beside the old one, then swap, so a failed build leaves the old one running.
mkdir -p "$(dirname "$CODE")"
STAGE="$CODE.new"
rm -rf "$STAGE"
mkdir -p "$STAGE"
say "building in $STAGE"
cp -R "$SRC/package.json" "$SRC/package-lock.json" "$SRC/tsconfig.json" "$SRC/README.md" "$SRC/src" "$SRC/migrations" "$SRC/systemd" "$SRC/scripts" "$SRC/ui" "$STAGE/"
rm -rf "$STAGE/ui/generated"
mkdir -p "$STAGE/test" "$STAGE/bench"
(
  cd "$STAGE"
  # tsconfig also covers test/ and bench/; an install builds only the server.
  "$NODE" -e 'const f="tsconfig.json";const c=JSON.parse(require("fs").readFileSync(f,"utf8"));c.include=["src","migrations"];require("fs").writeFileSync(f,JSON.stringify(c,null,2))'
  # A checkout whose node_modules already matches the lock file (npm ls passes) is reused: no
  # second download and native build. Otherwise a clean npm ci.
  if [ -d "$SRC/node_modules" ] && (cd "$SRC" && npm ls --all >/dev/null 2>&1); then
    # Its contents, even when node_modules is a link: the prune below must never touch the checkout's.
    mkdir node_modules && cp -R "$SRC/node_modules/." node_modules/
  else
    npm ci --no-audit --no-fund --loglevel=error
  fi
  npm run build --silent
  npm prune --omit=dev --no-audit --no-fund --loglevel=error
)
if [ -d "$CODE" ]; then
  rm -rf "$CODE.old"
  mv "$CODE" "$CODE.old"
fi
mv "$STAGE" "$CODE"
rm -rf "$CODE.old"

mkdir -p "$DATA" "$ETC"
chmod 0750 "$DATA"
if [ ! -f "$ENV_FILE" ]; then
  say "writing $ENV_FILE with a new master key (back it up apart from the data)"
  KEY="$("$NODE" -e 'process.stdout.write(require("crypto").randomBytes(32).toString("base64"))')"
  (umask 077 && cat > "$ENV_FILE") <<ENV
# svc settings; see README.md for every SVC_* setting.
# The master key protects stored secrets. Keep a copy apart from the data; a backup is useless without it.
SVC_MASTER_KEY=$KEY
SVC_DATA_DIR=$DATA
SVC_HTTP_ADDR=0.0.0.0:8080
SVC_METRICS_ADDR=127.0.0.1:9090
# SVC_DATABASE_URL=postgres://svc:password@127.0.0.1/svc
# SVC_SMTP_HOST=smtp.example.com
# SVC_INGRESS_SECRET=
ENV
else
  say "keeping $ENV_FILE"
fi
chmod 0600 "$ENV_FILE"
if [ "$IS_ROOT" -eq 1 ]; then
  chown -R "$SVC_USER:$(id -gn "$SVC_USER")" "$DATA"
  chown root:root "$ENV_FILE"
fi

# The operator command: reads the same settings as the server and runs as the server's user.
mkdir -p "$(dirname "$BIN")"
cat > "$BIN" <<WRAP
#!/bin/sh
# svc operator command (installed by install.sh)
set -a
[ -r "$ENV_FILE" ] && . "$ENV_FILE"
set +a
if [ "\$(id -u)" -eq 0 ] && id -u "$SVC_USER" >/dev/null 2>&1; then
  exec runuser -u "$SVC_USER" -- "$NODE" "$CODE/dist/src/main.js" "\$@"
fi
exec "$NODE" "$CODE/dist/src/main.js" "\$@"
WRAP
chmod 0755 "$BIN"

if [ "$SYSTEMD" -eq 1 ]; then
  mkdir -p "$(dirname "$UNIT")"
  sed -e "s#^ExecStart=/usr/bin/node #ExecStart=$NODE #" -e "s#/opt/svc#$CODE#g" -e "s#/var/lib/svc#$DATA#g" -e "s#/etc/svc/svc.env#$ENV_FILE#g" -e "s#^User=svc#User=$SVC_USER#" -e "s#^Group=svc#Group=$(id -gn "$SVC_USER" 2>/dev/null || echo "$SVC_USER")#" "$CODE/systemd/svc.service" > "$UNIT"
  if [ -z "$PREFIX" ]; then
    systemctl daemon-reload
    systemctl enable svc.service >/dev/null
    if systemctl is-active --quiet svc.service; then
      say "restarting svc (migrations run before it serves)"
      systemctl restart svc.service
    else
      systemctl start svc.service
    fi
    say "svc is running; check: curl -s http://127.0.0.1:8080/readyz"
  fi
else
  say "not touching systemd (--no-systemd); start with: $BIN serve"
fi
say "installed $("$NODE" -p "require('$CODE/package.json').version") in $CODE"
