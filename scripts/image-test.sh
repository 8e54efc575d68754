#!/usr/bin/env bash
# Builds the svc image from the Dockerfile and smoke-tests it, on a machine that reaches Debian's
# mirrors and the npm registry but no container registry (CI). Run as root on Debian bookworm:
#
#   scripts/image-test.sh
#
# 1. Installs what it needs (docker.io, mmdebstrap, curl, jq) and starts dockerd unless one runs.
# 2. Without node:20-bookworm-slim it makes a local one: a bookworm root file system (mmdebstrap)
#    with this machine's own node 20, npm and headers laid out as the official image has them.
# 3. Builds the image and checks it: non-root user, labels, no secret, no build tools, production
#    dependencies only (`npm ls --omit=dev` lists exactly what node_modules holds), no .ts files.
# 4. Runs it on a fresh volume: /readyz and the HEALTHCHECK, `svc bootstrap` through docker exec,
#    sign-in with the printed link over HTTP, a mail to the SMTP ingress seen over the API, and a
#    SIGTERM stop that exits 0 within the shutdown timeout; then a new container (under --init) on
#    the same volume keeps the data, `svc migrate up` finds nothing to apply, and a third container
#    serves /metrics on all interfaces only because SVC_METRICS_ADDR asks for it.
#    With SVC_IMAGE_TEST_DATABASE_URL (postgres://…, a role that may create databases), one more
#    container runs on a fresh database of that Postgres (host network, loopback only), its URL
#    read from a file through SVC_DATABASE_URL_FILE.
# 5. Removes its containers, volumes and database, stops the dockerd it started, prints
#    `image_size: N MB`.
#
# Only 127.0.0.1 is used: published ports bind to loopback, on ports Docker picks.
set -euo pipefail
cd "$(dirname "$0")/.."

T0=$(date +%s)
step() { printf '== [%4ss] %s\n' "$(($(date +%s) - T0))" "$*"; }
fail() {
  printf 'image-test: FAIL: %s\n' "$*" >&2
  exit 1
}

[ "$(id -u)" -eq 0 ] || fail "run as root: it installs packages and starts dockerd"

BASE=node:20-bookworm-slim
IMAGE=${SVC_IMAGE_TEST_TAG:-svc:image-test}
MAX_MB=${SVC_IMAGE_MAX_MB:-250}
SHUTDOWN_TIMEOUT=10
MIRROR=${SVC_IMAGE_TEST_MIRROR:-http://deb.debian.org/debian}
SECURITY_MIRROR=${SVC_IMAGE_TEST_SECURITY_MIRROR:-http://deb.debian.org/debian-security}
RUN_ID="svc-image-test-$$"
VOLUME="$RUN_ID-data"
PG_VOLUME="$RUN_ID-pg-data"
PG_URL_ADMIN=${SVC_IMAGE_TEST_DATABASE_URL:-}
PG_DB=""
WORK=$(mktemp -d /tmp/svc-image-test.XXXXXX)
DOCKERD_LOG=/tmp/svc-image-test-dockerd.log
DOCKERD_PID=""
CONTAINERS=()
COMPOSE_PROJECTS=()
COMPOSE=()
CURRENT=""
# Debian's docker client, the same version as its daemon (an unrelated docker client may come first
# on PATH).
DOCKER=/usr/bin/docker
dk() { "$DOCKER" "$@"; }

cleanup() {
  local rc=$?
  set +e
  if [ "$rc" -ne 0 ] && [ -n "$CURRENT" ]; then
    echo "--- last log lines of container $CURRENT:" >&2
    dk logs --tail 40 "$CURRENT" >&2 2>&1
  fi
  for c in "${CONTAINERS[@]}"; do dk rm -f "$c" >/dev/null 2>&1; done
  for p in "${COMPOSE_PROJECTS[@]}"; do
    local files=()
    for f in ${p#*:}; do files+=(-f "$WORK/compose/$f"); done
    (cd "$WORK/compose" && "${COMPOSE[@]}" -p "${p%%:*}" "${files[@]}" down -v >/dev/null 2>&1)
  done
  for v in "$VOLUME" "$PG_VOLUME"; do
    if [ -x "$DOCKER" ] && dk volume inspect "$v" >/dev/null 2>&1; then dk volume rm -f "$v" >/dev/null; fi
  done
  if [ -n "$PG_DB" ]; then psql "$PG_URL_ADMIN" -qc "drop database if exists $PG_DB with (force)" >/dev/null 2>&1; fi
  rm -rf "$WORK"
  if [ -n "$DOCKERD_PID" ]; then
    step "stopping the dockerd this script started (pid $DOCKERD_PID)"
    kill -TERM "$DOCKERD_PID" 2>/dev/null
    for _ in $(seq 1 60); do kill -0 "$DOCKERD_PID" 2>/dev/null || break; sleep 0.5; done
    if kill -0 "$DOCKERD_PID" 2>/dev/null; then
      echo "image-test: dockerd did not stop within 30 s; killing it" >&2
      kill -KILL "$DOCKERD_PID" 2>/dev/null
      rc=1
    fi
    # Its containerd and shims go with it; say so if one stayed.
    if pgrep -f '^containerd --config /var/run/docker/containerd' >/dev/null || pgrep -f 'containerd-shim.*moby' >/dev/null; then
      echo "image-test: containerd processes of dockerd are still running" >&2
      rc=1
    fi
  fi
  if [ "$rc" -ne 0 ]; then echo "image-test: failed after $(($(date +%s) - T0)) s" >&2; fi
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# ---------------------------------------------------------------------------------------------
step "packages"
need=()
command -v dockerd >/dev/null || need+=(docker.io)
[ -x /usr/bin/docker ] || need+=(docker.io)
command -v mmdebstrap >/dev/null || need+=(mmdebstrap)
command -v curl >/dev/null || need+=(curl)
command -v jq >/dev/null || need+=(jq)
if [ "${#need[@]}" -gt 0 ]; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${need[@]}" ca-certificates >/dev/null
fi
command -v node >/dev/null || fail "node (20) is needed: the local base image is made with this machine's node"

step "dockerd"
if dk info >/dev/null 2>&1; then
  echo "using the Docker daemon that already runs (not stopped at the end)"
else
  # Started by hand with its defaults (there is no init system to ask in CI); stopped by cleanup.
  dockerd >"$DOCKERD_LOG" 2>&1 &
  DOCKERD_PID=$!
  for _ in $(seq 1 60); do
    dk info >/dev/null 2>&1 && break
    kill -0 "$DOCKERD_PID" 2>/dev/null || {
      tail -20 "$DOCKERD_LOG" >&2
      DOCKERD_PID=""
      fail "dockerd exited at start (log above, $DOCKERD_LOG)"
    }
    sleep 0.5
  done
  dk info >/dev/null 2>&1 || {
    tail -20 "$DOCKERD_LOG" >&2
    fail "dockerd did not answer within 30 s"
  }
fi

# ---------------------------------------------------------------------------------------------
# shellcheck source=scripts/image-test/base-image.sh
. scripts/image-test/base-image.sh
if dk image inspect "$BASE" >/dev/null 2>&1; then
  step "base image $BASE is present"
else
  step "base image $BASE: making it from bookworm and this machine's node (mmdebstrap)"
  build_base
fi

# ---------------------------------------------------------------------------------------------
VERSION=$(node -p 'require("./package.json").version')
grep -q "image: \${SVC_IMAGE:-svc:$VERSION}" compose.yaml && grep -q "SVC_VERSION: $VERSION " compose.yaml ||
  fail "compose.yaml does not build and name version $VERSION (package.json's): update its image and SVC_VERSION"
REVISION=$(git rev-parse HEAD 2>/dev/null || true)
step "docker build $IMAGE (version $VERSION)"
if ! DOCKER_BUILDKIT=1 timeout 1500 "$DOCKER" build --progress=plain \
  --build-arg "SVC_VERSION=$VERSION" --build-arg "SVC_REVISION=$REVISION" -t "$IMAGE" . >"$WORK/build.log" 2>&1; then
  tail -40 "$WORK/build.log" >&2
  fail "docker build failed or took over 25 minutes (last lines above)"
fi

# ---------------------------------------------------------------------------------------------
step "image checks"
inspect() { dk image inspect -f "$1" "$IMAGE"; }
[ "$(inspect '{{.Config.User}}')" = "svc:svc" ] || fail "the image's user is '$(inspect '{{.Config.User}}')', not svc:svc"
uid=$(dk run --rm --entrypoint id "$IMAGE" -u)
[ "$uid" != 0 ] || fail "the container runs as root"
[ "$(inspect '{{index .Config.Labels "org.opencontainers.image.version"}}')" = "$VERSION" ] ||
  fail "org.opencontainers.image.version is not $VERSION"
[ "$(inspect '{{index .Config.Labels "org.opencontainers.image.revision"}}')" = "$REVISION" ] ||
  fail "org.opencontainers.image.revision is not $REVISION"
[ "$(inspect '{{json .Config.Volumes}}')" = '{"/data":{}}' ] || fail "the volume is not /data"
ENV_JSON=$(inspect '{{json .Config.Env}}')
grep -q '"SVC_DATA_DIR=/data"' <<<"$ENV_JSON" || fail "SVC_DATA_DIR is not /data: $ENV_JSON"
for port in 8080/tcp 2525/tcp 9090/tcp; do
  grep -q "\"$port\"" <<<"$(inspect '{{json .Config.ExposedPorts}}')" || fail "port $port is not exposed"
done
# No secret: none in the configuration or the build history, no key or env file in the file system.
if grep -Eiq 'KEY|SECRET|PASSWORD|TOKEN' <<<"$ENV_JSON"; then
  fail "the image's environment names a secret: $ENV_JSON"
fi
if grep -Eiq 'MASTER_KEY=|SECRET=|PASSWORD=' <<<"$(dk history --no-trunc --format '{{.CreatedBy}}' "$IMAGE")"; then
  fail "the build history holds a secret"
fi
found=$(dk run --rm --user 0 --entrypoint sh "$IMAGE" -c \
  'find / -xdev \( -name master.key -o -name "*.env" -o -name .env -o -name .npmrc -o -name "*.pem" -path "*/private/*" -o -name id_rsa -o -name "*.key" \) -print 2>/dev/null; ls -A /data')
[ -z "$found" ] || fail "the image holds files that may be secrets (or /data is not empty): $found"
# No build tools and no npm in the runtime image.
tools=$(dk run --rm --entrypoint sh "$IMAGE" -c 'for t in npm npx corepack yarn gcc g++ cc make python3; do command -v $t; done; true')
[ -z "$tools" ] || fail "the image holds build tools: $tools"
# Production dependencies only: what `npm ls --omit=dev` lists (the host's npm, mounted read-only,
# reads the image's /app) is exactly the set of packages in /app/node_modules.
npm_dir="$(npm root -g)/npm"
dk run --rm -v "$npm_dir:/opt/npm:ro" -e npm_config_cache=/tmp/npm-cache -e npm_config_update_notifier=false \
  --entrypoint node -w /app "$IMAGE" /opt/npm/bin/npm-cli.js ls --omit=dev --all --parseable >"$WORK/npm-ls" 2>"$WORK/npm-ls.err" ||
  fail "npm ls --omit=dev fails in the image: $(head -c 2000 "$WORK/npm-ls.err")"
grep '/node_modules/' "$WORK/npm-ls" | sort -u >"$WORK/npm-ls.sorted"
dk run --rm --entrypoint node -w /app "$IMAGE" -e '
  const fs = require("fs"), path = require("path"), out = [];
  const walk = (dir) => {
    if (!fs.existsSync(dir)) return;
    for (const name of fs.readdirSync(dir)) {
      if (name.startsWith(".")) continue;
      const p = path.join(dir, name);
      if (name.startsWith("@")) { for (const n of fs.readdirSync(p)) visit(path.join(p, n)); } else visit(p);
    }
  };
  const visit = (p) => { if (fs.existsSync(path.join(p, "package.json"))) { out.push(p); walk(path.join(p, "node_modules")); } };
  walk("/app/node_modules");
  console.log(out.sort().join("\n"));' | sort -u >"$WORK/node-modules.sorted"
if ! diff -u "$WORK/npm-ls.sorted" "$WORK/node-modules.sorted" >"$WORK/npm-diff"; then
  head -40 "$WORK/npm-diff" >&2
  fail "node_modules is not what npm ls --omit=dev lists (diff above: - npm ls, + node_modules)"
fi
[ -s "$WORK/node-modules.sorted" ] || fail "no packages found in /app/node_modules"
ts=$(dk run --rm --entrypoint sh "$IMAGE" -c 'find /app \( -name "*.ts" -o -name "*.tsx" \) -print | head -5; find /app/dist \( -name "*.test.*" -o -name test -o -name bench \) -print | head -5')
[ -z "$ts" ] || fail "the image holds TypeScript or test files: $ts"
echo "non-root (uid $uid), labels, no secret, no build tools, $(wc -l <"$WORK/node-modules.sorted") production packages = npm ls --omit=dev, no .ts files"

# ---------------------------------------------------------------------------------------------
# Runtime: the master key comes from a file mounted as a secret, readable only by the svc user.
head -c 32 /dev/urandom | base64 >"$WORK/master.key"
chown "$uid:$uid" "$WORK/master.key"
chmod 0400 "$WORK/master.key"
INGRESS_SECRET=$(head -c 24 /dev/urandom | base64 | tr -d '/+=')
dk volume create "$VOLUME" >/dev/null

# shellcheck source=scripts/image-test/containers.sh
. scripts/image-test/containers.sh

api() { curl -sS -m 10 -H "authorization: Bearer $SESSION" "$@"; }

# sign_in LINK: opens the printed sign-in link's page and exchanges its token for a session (SESSION).
sign_in() {
  local link=$1 link_path code
  link_path=${link#*://*/}
  link_path=/${link_path%%#*}
  code=$(curl -s -o "$WORK/link.html" -w '%{http_code}' -m 10 "$HTTP$link_path")
  if [ "$code" != 200 ] || ! grep -qi '<html' "$WORK/link.html"; then fail "GET $link_path answered $code, not the panel page"; fi
  jq -n --arg token "${link#*#}" '{token: $token}' >"$WORK/link.json"
  curl -sS -m 10 -o "$WORK/session.json" -w '%{http_code}' -H 'content-type: application/json' \
    --data-binary @"$WORK/link.json" "$HTTP/v1/auth/link" >"$WORK/session.code"
  [ "$(cat "$WORK/session.code")" = 200 ] || fail "POST /v1/auth/link answered $(cat "$WORK/session.code"): $(cat "$WORK/session.json")"
  SESSION=$(jq -r .token "$WORK/session.json")
  [ "$(api "$HTTP/v1/me" | jq -r '.email // .person.email')" = owner@example.com ] || fail "GET /v1/me does not name the owner"
}

# bootstrap_link FILE: the sign-in link svc bootstrap printed (to stderr, saved in FILE).
bootstrap_link() {
  grep -Eo 'https?://[^ ]+/sign-in/link#svc_link_[A-Za-z0-9_-]+' "$1" | head -n 1 || true
}

step "container 1: fresh volume"
run_svc "$RUN_ID-1"
wait_ready "$RUN_ID-1"
[ "$(dk exec "$RUN_ID-1" id -u)" = "$uid" ] || fail "docker exec does not run as the image's user"
echo "/readyz 200 and healthy at $HTTP"

step "svc bootstrap through docker exec"
dk exec "$RUN_ID-1" svc bootstrap --email owner@example.com --workspace Acme >"$WORK/bootstrap.out" 2>"$WORK/bootstrap.err" ||
  fail "svc bootstrap failed: $(cat "$WORK/bootstrap.err")"
WORKSPACE=$(tr -d '[:space:]' <"$WORK/bootstrap.out")
[ -n "$WORKSPACE" ] || fail "svc bootstrap printed no workspace id"
LINK=$(bootstrap_link "$WORK/bootstrap.err")
[ -n "$LINK" ] || fail "svc bootstrap printed no sign-in link: $(cat "$WORK/bootstrap.err")"
echo "workspace $WORKSPACE; link ${LINK%%#*}#…"

step "sign in with the link over HTTP"
sign_in "$LINK"
echo "signed in as owner@example.com"

step "a mail to the SMTP ingress, seen over the API"
INBOX=$(api "$HTTP/v1/inboxes" | jq -r '.data[0].id // empty')
if [ -z "$INBOX" ]; then
  INBOX=$(api -H 'content-type: application/json' -d '{"name":"Support"}' "$HTTP/v1/inboxes" | jq -r '.id // empty')
fi
[ -n "$INBOX" ] || fail "no inbox to receive mail"
channel=$(api -H 'content-type: application/json' \
  -d "$(jq -n --arg inbox "$INBOX" '{kind: "email", inbox_id: $inbox, name: "Support", address: "support@acme.example"}')" \
  "$HTTP/v1/channels")
[ "$(jq -r '.id // empty' <<<"$channel")" != "" ] || fail "POST /v1/channels: $channel"
SUBJECT="Image smoke test $RUN_ID"
printf 'From: Customer <customer@example.net>\r\nTo: support@acme.example\r\nSubject: %s\r\nMessage-ID: <%s@example.net>\r\nDate: %s\r\n\r\nHello from the image test.\r\n' \
  "$SUBJECT" "$RUN_ID" "$(date -R)" >"$WORK/mail.eml"
curl -sS -m 30 "smtp://127.0.0.1:$SMTP_PORT" --mail-from customer@example.net --mail-rcpt support@acme.example \
  --upload-file "$WORK/mail.eml" || fail "the SMTP ingress did not take the mail"
seen=""
for _ in $(seq 1 60); do
  seen=$(api "$HTTP/v1/conversations" | jq -r --arg s "$SUBJECT" '.data[] | select(.subject == $s) | .id' || true)
  [ -n "$seen" ] && break
  sleep 0.5
done
[ -n "$seen" ] || fail "the mail did not appear in GET /v1/conversations within 30 s"
CONVERSATION=$seen
echo "conversation $CONVERSATION"

step "metrics stay inside the container unless asked"
code=$(curl -s -o /dev/null -m 3 -w '%{http_code}' "$METRICS/metrics" || true)
[ "$code" != 200 ] || fail "/metrics answered on the published port without SVC_METRICS_ADDR"
dk exec "$RUN_ID-1" node -e 'fetch("http://127.0.0.1:9090/metrics").then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))' ||
  fail "/metrics does not answer on the container's loopback"

step "stop container 1 (SIGTERM)"
stop_svc "$RUN_ID-1"

step "container 2 (under docker run --init): same volume, data kept; svc backup"
run_svc "$RUN_ID-2" --init
wait_ready "$RUN_ID-2"
[ "$(api "$HTTP/v1/conversations/$CONVERSATION" | jq -r .subject)" = "$SUBJECT" ] ||
  fail "the conversation (or the session) is gone in a new container on the same volume"
dk exec "$RUN_ID-2" svc migrate status >"$WORK/migrate-status" 2>&1 || fail "svc migrate status: $(cat "$WORK/migrate-status")"
# The README's backup: svc backup into the volume while the server runs, restore while it is stopped.
dk exec "$RUN_ID-2" svc backup --out /data/backups/image-test >"$WORK/backup" 2>&1 || fail "svc backup: $(cat "$WORK/backup")"
dk exec "$RUN_ID-2" test -s /data/backups/image-test/manifest.json || fail "svc backup wrote no manifest.json"
stop_svc "$RUN_ID-2"
CONTAINERS+=("$RUN_ID-restore")
dk run --name "$RUN_ID-restore" -v "$VOLUME:/data" -v "$WORK/master.key:/run/secrets/svc_master_key:ro" \
  -e SVC_MASTER_KEY_FILE=/run/secrets/svc_master_key "$IMAGE" restore --from /data/backups/image-test >"$WORK/restore" 2>&1 ||
  fail "svc restore: $(cat "$WORK/restore")"

step "migrations again: svc migrate up on the restored volume, then container 3 with metrics asked for"
CONTAINERS+=("$RUN_ID-migrate")
dk run --name "$RUN_ID-migrate" -v "$VOLUME:/data" -v "$WORK/master.key:/run/secrets/svc_master_key:ro" \
  -e SVC_MASTER_KEY_FILE=/run/secrets/svc_master_key "$IMAGE" migrate up >"$WORK/migrate-up" 2>&1 ||
  fail "svc migrate up failed: $(cat "$WORK/migrate-up")"
grep -q 'nothing to apply' "$WORK/migrate-up" || fail "svc migrate up applied migrations a second time: $(cat "$WORK/migrate-up")"
run_svc "$RUN_ID-3" -e SVC_METRICS_ADDR=0.0.0.0:9090
wait_ready "$RUN_ID-3"
[ "$(api "$HTTP/v1/conversations/$CONVERSATION" | jq -r .subject)" = "$SUBJECT" ] || fail "the conversation is gone in container 3"
curl -sS -m 5 -o "$WORK/metrics" "$METRICS/metrics" || fail "/metrics is not published with SVC_METRICS_ADDR=0.0.0.0:9090"
grep -q '^svc_' "$WORK/metrics" || fail "/metrics answered without svc_ metrics"
stop_svc "$RUN_ID-3"
CURRENT=""

# ---------------------------------------------------------------------------------------------
# The compose files as shipped (copied beside a master.key and a .env, as the README says), with
# the image built above and ports published on loopback only.
free_port() { node -e 'const s = require("net").createServer().listen(0, "127.0.0.1", () => { console.log(s.address().port); s.close(); })'; }

# compose PROJECT FILE…  -- ARGS…: docker compose (the plugin) or Debian's docker-compose.
compose() {
  local project=$1 files=()
  shift
  while [ "$1" != -- ]; do files+=(-f "$WORK/compose/$1"); shift; done
  shift
  (cd "$WORK/compose" && "${COMPOSE[@]}" -p "$project" "${files[@]}" "$@")
}

# compose_run PROJECT LABEL FILE…: up on fresh volumes, ready, bootstrap and sign in, stop (exit 0),
# up again with the data kept, then down with its volumes.
compose_run() {
  local project=$1 label=$2 id
  shift 2
  COMPOSE_PROJECTS+=("$project:$*")
  compose "$project" "$@" -- up -d --no-build >"$WORK/compose-up.log" 2>&1 || fail "$label: compose up: $(tail -20 "$WORK/compose-up.log")"
  id=$(compose "$project" "$@" -- ps -q svc)
  [ -n "$id" ] || fail "$label: compose started no svc container"
  CURRENT=$id
  wait_ready "$id" --no-health
  compose "$project" "$@" -- exec -T svc svc bootstrap --email owner@example.com --workspace Acme \
    >"$WORK/compose-bootstrap.out" 2>"$WORK/compose-bootstrap.err" || fail "$label: svc bootstrap: $(cat "$WORK/compose-bootstrap.err")"
  sign_in "$(bootstrap_link "$WORK/compose-bootstrap.err")"
  stop_svc "$id"
  compose "$project" "$@" -- up -d --no-build >"$WORK/compose-up.log" 2>&1 || fail "$label: compose up again: $(tail -20 "$WORK/compose-up.log")"
  wait_ready "$id" --no-health
  [ "$(api "$HTTP/v1/me" | jq -r '.email // .person.email')" = owner@example.com ] || fail "$label: the session is gone after a restart"
  dk logs "$id" 2>&1 | grep -o '"msg":"listening".*' | tail -n 1 >"$WORK/compose-listening"
  compose "$project" "$@" -- down -v >/dev/null 2>&1 || fail "$label: compose down failed"
  CURRENT=""
}

step "compose.yaml (SQLite) and compose.postgres.yaml"
if "$DOCKER" compose version >/dev/null 2>&1; then COMPOSE=("$DOCKER" compose); else
  command -v docker-compose >/dev/null || {
    export DEBIAN_FRONTEND=noninteractive
    apt-get install -y -qq --no-install-recommends docker-compose >/dev/null
  }
  COMPOSE=(docker-compose)
fi
mkdir -p "$WORK/compose"
cp compose.yaml compose.postgres.yaml "$WORK/compose/"
cp -p "$WORK/master.key" "$WORK/compose/master.key"
HTTP_PORT=$(free_port)
SMTP_PUBLISH_PORT=$(free_port)
cat >"$WORK/compose/.env" <<ENV
SVC_IMAGE=$IMAGE
SVC_PUBLIC_URL=http://127.0.0.1:$HTTP_PORT
SVC_HTTP_PUBLISH=127.0.0.1:$HTTP_PORT
SVC_SMTP_PUBLISH=127.0.0.1:$SMTP_PUBLISH_PORT
SVC_INGRESS_SECRET=$INGRESS_SECRET
SVC_POSTGRES_PASSWORD=$(head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n')
ENV
HTTP="http://127.0.0.1:$HTTP_PORT"
compose_run "$RUN_ID-compose" compose.yaml compose.yaml
echo "compose.yaml: ready, bootstrap, sign-in, stop (exit 0) and restart with the data kept"

# Postgres: the official image is not reachable here, so a stand-in built from bookworm's
# postgresql package (scripts/image-test/postgres.Dockerfile) takes its place.
if ! dk image inspect postgres:17-bookworm >/dev/null 2>&1; then
  dk image inspect svc-image-test/postgres:15 >/dev/null 2>&1 ||
    dk build -q -f scripts/image-test/postgres.Dockerfile -t svc-image-test/postgres:15 scripts/image-test >"$WORK/pg-image.log" 2>&1 ||
    fail "could not build the Postgres stand-in: $(tail -20 "$WORK/pg-image.log")"
  echo "SVC_POSTGRES_IMAGE=svc-image-test/postgres:15" >>"$WORK/compose/.env"
fi
compose_run "$RUN_ID-compose-pg" compose.postgres.yaml compose.yaml compose.postgres.yaml
grep -q '"database":"postgres"' "$WORK/compose-listening" || fail "compose.postgres.yaml: svc does not run on Postgres: $(cat "$WORK/compose-listening")"
echo "compose.yaml + compose.postgres.yaml: svc on Postgres, ready, bootstrap, sign-in, restart with the data kept"

if [ -n "$PG_URL_ADMIN" ]; then
  step "Postgres: a container on a fresh database of this machine's Postgres"
  command -v psql >/dev/null || fail "psql is needed for the Postgres check"
  PG_DB="svc_image_test_$$"
  psql "$PG_URL_ADMIN" -qc "create database $PG_DB" >/dev/null || fail "could not create database $PG_DB"
  node -e 'const u = new URL(process.argv[1]); u.pathname = "/" + process.argv[2]; console.log(u.href)' \
    "$PG_URL_ADMIN" "$PG_DB" >"$WORK/database.url"
  chown "$uid:$uid" "$WORK/database.url"
  chmod 0400 "$WORK/database.url"
  name="$RUN_ID-pg"
  CONTAINERS+=("$name")
  CURRENT=$name
  # Host network to reach Postgres on 127.0.0.1; the server listens on a loopback port it picks.
  dk run -d --name "$name" --network host -v "$PG_VOLUME:/data" \
    -v "$WORK/master.key:/run/secrets/svc_master_key:ro" -e SVC_MASTER_KEY_FILE=/run/secrets/svc_master_key \
    -v "$WORK/database.url:/run/secrets/svc_database_url:ro" -e SVC_DATABASE_URL_FILE=/run/secrets/svc_database_url \
    -e SVC_HTTP_ADDR=127.0.0.1:0 -e SVC_METRICS_ADDR=off -e SVC_SHUTDOWN_TIMEOUT_SECONDS="$SHUTDOWN_TIMEOUT" \
    "$IMAGE" >/dev/null
  listening=""
  for _ in $(seq 1 240); do
    running "$name" || fail "container $name exited (code $(dk inspect -f '{{.State.ExitCode}}' "$name")) before it listened"
    dk logs "$name" >"$WORK/pg.log" 2>&1
    listening=$(grep -o '"msg":"listening".*' "$WORK/pg.log" || true)
    [ -n "$listening" ] && break
    sleep 0.5
  done
  [ -n "$listening" ] || fail "$name: no 'listening' log line within 120 s"
  grep -q '"database":"postgres"' <<<"$listening" || fail "$name does not run on Postgres: $listening"
  HTTP="http://$(sed -n 's/.*"http":"\(127\.0\.0\.1:[0-9]*\)".*/\1/p' <<<"$listening")"
  code=$(curl -s -o /dev/null -m 5 -w '%{http_code}' "$HTTP/readyz" || true)
  [ "$code" = 200 ] || fail "$name: GET /readyz answered $code"
  dk exec "$name" svc bootstrap --email owner@example.com --workspace Acme >/dev/null 2>"$WORK/pg-bootstrap.err" ||
    fail "svc bootstrap on Postgres: $(cat "$WORK/pg-bootstrap.err")"
  stop_svc "$name"
  CONTAINERS+=("$name-migrate")
  dk run --name "$name-migrate" --network host -v "$PG_VOLUME:/data" \
    -v "$WORK/master.key:/run/secrets/svc_master_key:ro" -e SVC_MASTER_KEY_FILE=/run/secrets/svc_master_key \
    -v "$WORK/database.url:/run/secrets/svc_database_url:ro" -e SVC_DATABASE_URL_FILE=/run/secrets/svc_database_url \
    "$IMAGE" migrate up >"$WORK/pg-migrate-up" 2>&1 || fail "svc migrate up on Postgres: $(cat "$WORK/pg-migrate-up")"
  grep -q 'nothing to apply' "$WORK/pg-migrate-up" || fail "svc migrate up applied migrations a second time on Postgres"
  CURRENT=""
fi

owner=$(dk run --rm -v "$VOLUME:/data" --entrypoint stat "$IMAGE" -c '%u' /data/svc.db)
[ "$owner" = "$uid" ] || fail "the database in the volume is owned by uid $owner, not $uid"

SIZE_MB=$(($(dk image inspect -f '{{.Size}}' "$IMAGE") / 1000000))
echo "image_size: $SIZE_MB MB"
[ "$SIZE_MB" -le "$MAX_MB" ] || fail "the image is $SIZE_MB MB, over the $MAX_MB MB goal"
step "passed"
echo "image_test_seconds: $(($(date +%s) - T0))"
