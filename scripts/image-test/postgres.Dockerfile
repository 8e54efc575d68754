# Test only: a stand-in for the official postgres image, made from Debian bookworm's own postgresql
# package, for machines that reach no container registry (scripts/image-test.sh). It honours what
# compose.postgres.yaml uses of the official image: POSTGRES_USER, POSTGRES_PASSWORD, POSTGRES_DB,
# the data in /var/lib/postgresql/data, pg_isready on the PATH, port 5432.
FROM node:20-bookworm-slim
RUN apt-get update -qq \
  && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends postgresql-15 >/dev/null \
  && rm -rf /var/lib/apt/lists/* /var/lib/postgresql/15 /etc/postgresql/15/main \
  && mkdir -p /var/lib/postgresql/data /run/postgresql \
  && chown -R postgres:postgres /var/lib/postgresql /run/postgresql
ENV PATH=/usr/lib/postgresql/15/bin:$PATH PGDATA=/var/lib/postgresql/data
COPY postgres-entrypoint.sh /usr/local/bin/postgres-entrypoint.sh
USER postgres
VOLUME /var/lib/postgresql/data
EXPOSE 5432
STOPSIGNAL SIGINT
ENTRYPOINT ["/usr/local/bin/postgres-entrypoint.sh"]
