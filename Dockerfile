# The svc image: the server and its operator commands, running as a non-root user, data in /data.
#
#   docker build --build-arg SVC_VERSION=0.1.0 -t svc:0.1.0 .
#
# SVC_VERSION must be the version in package.json (the build refuses another); it becomes the
# image's org.opencontainers.image.version label. See README.md, "Run with Docker", and compose.yaml.
# scripts/image-test.sh builds and smoke-tests this file in CI.
#
# Three stages: `build` compiles with the dev dependencies and keeps the production ones; `runtime`
# adds tini, the svc user and the app to the Node image and drops what only builds need (npm,
# corepack, yarn, the C headers); the last stage copies that file system into one layer, so what
# `runtime` removes does not stay in the image (about 100 MB less).

ARG NODE_IMAGE=node:20-bookworm-slim

FROM ${NODE_IMAGE} AS build
# better-sqlite3 is compiled against this Node's own headers (/usr/local/include/node): the build
# downloads no prebuilt binary from GitHub and no headers from nodejs.org, only npm packages.
RUN apt-get update \
  && apt-get install -y --no-install-recommends python3 make g++ \
  && rm -rf /var/lib/apt/lists/*
ENV npm_config_nodedir=/usr/local \
    npm_config_build_from_source=true \
    npm_config_update_notifier=false
WORKDIR /src
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund --loglevel=error
COPY tsconfig.json ./
COPY scripts/build-ui.mjs scripts/
COPY migrations migrations
COPY src src
COPY ui ui
ARG SVC_VERSION
# tsconfig.json also covers test/ and bench/, which the image does not hold: compile the server only.
RUN version="$(node -p 'require("./package.json").version')" \
  && if [ "$SVC_VERSION" != "$version" ]; then \
       echo "build with --build-arg SVC_VERSION=$version (the version in package.json; got '${SVC_VERSION}')" >&2; exit 1; \
     fi \
  && node -e 'const fs=require("fs");const c=JSON.parse(fs.readFileSync("tsconfig.json","utf8"));c.include=["src","migrations"];fs.writeFileSync("tsconfig.json",JSON.stringify(c))' \
  && npm run build --silent
# /app: package.json (the version the server reports), the compiled server, migrations and UI, and
# the production dependencies: the top-level packages `npm ls --omit=dev` lists, copied with what
# they nest (the same tree `npm prune --omit=dev` leaves, without deleting hundreds of packages
# from a lower layer, which is slow on overlay file systems), less what only compilers and editors
# read (type declarations, source maps, TypeScript sources, better-sqlite3's C sources and objects).
RUN npm ls --omit=dev --all --parseable >/tmp/production-packages \
  && mkdir -p /app/dist /app/node_modules \
  && cp package.json package-lock.json /app/ \
  && cp -R dist/src dist/migrations dist/ui /app/dist/ \
  && sed -n 's#^/src/node_modules/\(@[^/]*/[^/]*\|[^@/][^/]*\)$#\1#p' /tmp/production-packages | sort -u >/tmp/top-level \
  && test -s /tmp/top-level \
  && while read -r pkg; do \
       mkdir -p "/app/node_modules/$(dirname "$pkg")" && cp -R "node_modules/$pkg" "/app/node_modules/$pkg" || exit 1; \
     done </tmp/top-level \
  && cd /app \
  && find dist node_modules -type f \( -name '*.map' -o -name '*.d.ts' -o -name '*.d.cts' -o -name '*.d.mts' \
       -o -name '*.ts' -o -name '*.cts' -o -name '*.mts' -o -name '*.tsx' \) -delete \
  && rm -f dist/.tsbuildinfo \
  && cd node_modules/better-sqlite3 \
  && find build -mindepth 1 -maxdepth 1 ! -name Release -exec rm -rf {} + \
  && find build/Release -mindepth 1 -maxdepth 1 ! -name better_sqlite3.node -exec rm -rf {} + \
  && rm -rf deps src \
  && node -e 'require("/app/node_modules/better-sqlite3")(":memory:").prepare("select 1").get()'

FROM ${NODE_IMAGE} AS runtime
# tini is PID 1: it passes SIGTERM on to the server (which drains, as `svc serve` does) and reaps
# zombies; -s keeps that working under `docker run --init` too.
RUN apt-get update \
  && apt-get install -y --no-install-recommends tini \
  && apt-get clean \
  && rm -rf /var/lib/apt/lists/* /var/cache/apt/*.bin \
  && rm -rf /usr/local/lib/node_modules /usr/local/include /usr/local/share/doc /usr/local/share/man \
       /usr/local/bin/npm /usr/local/bin/npx /usr/local/bin/corepack /usr/local/bin/yarn /usr/local/bin/yarnpkg \
       /opt/yarn-* /usr/local/bin/docker-entrypoint.sh \
  && groupadd --system --gid 10001 svc \
  && useradd --system --uid 10001 --gid svc --home-dir /data --no-create-home --shell /usr/sbin/nologin svc \
  && mkdir -p /data \
  && chown svc:svc /data \
  && chmod 0750 /data
COPY --from=build /app /app
COPY docker/svc /usr/local/bin/svc
COPY docker/healthcheck.mjs /app/docker/healthcheck.mjs
RUN chmod 0755 /usr/local/bin/svc && svc --version

FROM scratch
COPY --from=runtime / /
ARG SVC_VERSION
ARG SVC_REVISION=
LABEL org.opencontainers.image.title="svc" \
      org.opencontainers.image.description="Self-hosted customer conversation server" \
      org.opencontainers.image.version="${SVC_VERSION}" \
      org.opencontainers.image.revision="${SVC_REVISION}" \
      org.opencontainers.image.licenses="AGPL-3.0-only" \
      org.opencontainers.image.base.name="docker.io/library/node:20-bookworm-slim"
ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    NODE_ENV=production \
    SVC_DATA_DIR=/data \
    SVC_HTTP_ADDR=0.0.0.0:8080 \
    SVC_SMTP_ADDR=0.0.0.0:2525
# 8080: API, panel and widget; 2525: SMTP ingress (with SVC_INGRESS_SECRET); 9090: /metrics, which
# listens on the container's loopback only unless SVC_METRICS_ADDR=0.0.0.0:9090 asks for it.
EXPOSE 8080 2525 9090
VOLUME /data
WORKDIR /app
USER svc:svc
HEALTHCHECK --interval=30s --timeout=5s --start-period=60s --retries=3 CMD ["node", "/app/docker/healthcheck.mjs"]
STOPSIGNAL SIGTERM
ENTRYPOINT ["tini", "-s", "--", "svc"]
CMD ["serve"]
