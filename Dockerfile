# The schoolbridge daemon image (README, "Docker"). `docker run -p 8080:8080 -v sb:/data IMAGE` runs
# the embedded default (a simulated school, files under /data/out); a config mounted at
# /app/config/schoolbridge.yaml runs production. State and output live on the /data volume, the only
# path the daemon writes; /app belongs to root and stays as built.
#
# Dependencies are installed in a build stage, where better-sqlite3 may compile its addon (python3,
# make and g++ for node-gyp when no prebuilt binary fits). TypeScript runs as it is (README, "Why no
# build step"): the bundles src/load-typescript.mjs loads it from are made once the sources are in.
FROM node:24-bookworm-slim AS deps
# Package versions are not pinned: Debian's security updates replace them within a release.
# hadolint ignore=DL3008
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 make g++ \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund

FROM node:24-bookworm-slim
# tini is PID 1: it passes SIGTERM and SIGINT on to the daemon and reaps orphaned processes.
# hadolint ignore=DL3008
RUN apt-get update \
 && apt-get install -y --no-install-recommends tini \
 && rm -rf /var/lib/apt/lists/*
# The configs in config/ read these: the embedded default keeps its store and files under /data and
# listens on every interface of the container (the host decides what reaches it with -p). Should the
# bundles ever be stale, the tsx loader runs the sources, keeping what it compiles in memory rather
# than in /tmp, so /data is the only path written (the image runs with --read-only too).
ENV SCHOOLBRIDGE_DATA_DIR=/data \
    SCHOOLBRIDGE_HOST=0.0.0.0 \
    TSX_DISABLE_CACHE=1
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
COPY package.json ./
COPY bin ./bin
COPY src ./src
COPY connectors ./connectors
COPY sandbox ./sandbox
COPY config ./config
COPY tsconfig.json ./
RUN node src/load-typescript.mjs --prepare \
 && mkdir /data && chown node:node /data
VOLUME ["/data"]
USER node
EXPOSE 8080
# Healthy while the daemon can work: /healthz fails when the upstream refuses the credentials, not
# while the upstream or the store is only away, which the daemon rides out by itself (README, "Docker").
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
  CMD ["node", "/app/bin/healthcheck.js"]
# Node.js with the options `npm start` gives it (package.json; README, "Sizing a big school").
ENTRYPOINT ["/usr/bin/tini", "--", "node", "--max-semi-space-size=32", "--initial-old-space-size=128", "--no-memory-reducer", "/app/bin/schoolbridge.js"]
CMD ["start"]
