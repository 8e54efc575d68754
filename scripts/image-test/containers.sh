# Sourced by scripts/image-test.sh: starting, waiting for and stopping the server's containers
# (uses its dk, fail, VOLUME, WORK, IMAGE, INGRESS_SECRET, SHUTDOWN_TIMEOUT; sets HTTP, SMTP_PORT, METRICS).

# published NAME PORT: the loopback address:port Docker published the container's PORT on.
published() {
  local out
  out=$(dk port "$1" "$2/tcp")
  out=${out%%$'\n'*}
  [[ "$out" == 127.0.0.1:* ]] || fail "$1: port $2 is not published on 127.0.0.1 ($out)"
  echo "$out"
}

# run_svc NAME [docker run options…]: starts a server container on the volume, ports on loopback.
run_svc() {
  local name=$1
  shift
  CONTAINERS+=("$name")
  CURRENT=$name
  dk run -d --name "$name" -v "$VOLUME:/data" \
    -v "$WORK/master.key:/run/secrets/svc_master_key:ro" -e SVC_MASTER_KEY_FILE=/run/secrets/svc_master_key \
    -e SVC_INGRESS_SECRET="$INGRESS_SECRET" -e SVC_SHUTDOWN_TIMEOUT_SECONDS="$SHUTDOWN_TIMEOUT" \
    -p 127.0.0.1::8080 -p 127.0.0.1::2525 -p 127.0.0.1::9090 --health-interval=2s "$@" "$IMAGE" >/dev/null
  HTTP="http://$(published "$name" 8080)"
  SMTP_PORT=$(published "$name" 2525)
  SMTP_PORT=${SMTP_PORT##*:}
  METRICS="http://$(published "$name" 9090)"
}

running() { [ "$(dk inspect -f '{{.State.Running}}' "$1")" = true ]; }

# wait_ready NAME [--no-health]: /readyz 200 within 120 s (migrations run first), then the
# HEALTHCHECK healthy (containers started here probe every 2 s; compose's keep the image's 30 s,
# already proven above, so they skip that wait).
wait_ready() {
  local name=$1 code=""
  for _ in $(seq 1 240); do
    running "$name" || fail "container $name exited (code $(dk inspect -f '{{.State.ExitCode}}' "$name")) before it was ready"
    code=$(curl -s -o /dev/null -m 3 -w '%{http_code}' "$HTTP/readyz" || true)
    [ "$code" = 200 ] && break
    sleep 0.5
  done
  [ "$code" = 200 ] || fail "$name: GET /readyz did not answer 200 within 120 s (last: $code)"
  [ "${2:-}" = --no-health ] && return 0
  local health=""
  for _ in $(seq 1 60); do
    health=$(dk inspect -f '{{.State.Health.Status}}' "$name")
    [ "$health" = healthy ] && break
    sleep 0.5
  done
  [ "$health" = healthy ] || fail "$name: the HEALTHCHECK says '$health' 30 s after /readyz answered 200"
}

# stop_svc NAME: SIGTERM (docker stop) must end the container with exit code 0 within the shutdown
# timeout; docker would send SIGKILL only 20 s after that.
stop_svc() {
  local name=$1 t0 t1 code
  t0=$(date +%s%N)
  dk stop -t $((SHUTDOWN_TIMEOUT + 20)) "$name" >/dev/null
  t1=$(date +%s%N)
  code=$(dk inspect -f '{{.State.ExitCode}}' "$name")
  local ms=$(((t1 - t0) / 1000000))
  [ "$code" = 0 ] || fail "$name: exit code $code after SIGTERM (0 expected)"
  [ "$ms" -le $((SHUTDOWN_TIMEOUT * 1000)) ] || fail "$name: the stop took $ms ms, over the ${SHUTDOWN_TIMEOUT} s shutdown timeout"
  dk logs "$name" >"$WORK/$name.log" 2>&1
  grep -q '"msg":"shutting down","signal":"SIGTERM"' "$WORK/$name.log" || fail "$name: no 'shutting down' log line for SIGTERM"
  grep -q '"msg":"stopped"' "$WORK/$name.log" || fail "$name: no 'stopped' log line"
  echo "$name: SIGTERM, drained and exited 0 in $ms ms"
}
