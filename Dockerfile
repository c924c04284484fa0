# One image for both processes: `api` (the default command) and `worker` differ only by command (docker-compose.yml).
# The base image is pinned by digest, so a release is rebuilt from the same bytes (scripts/release.sh,
# docs/operations/releases.md): node:24-bookworm-slim as published with Node.js 24.18.0. The digest was read from public
# build records, not from the registry (no machine of this project reaches it): check it with
# `docker buildx imagetools inspect node:24-bookworm-slim` before relying on it, and update it here to move the base.
# A locally built stand-in (scripts/stand-in-node-image.sh) is used with --build-arg NODE_IMAGE=node:24-bookworm-slim.
ARG NODE_IMAGE=node:24-bookworm-slim@sha256:6f7b03f7c2c8e2e784dcf9295400527b9b1270fd37b7e9a7285cf83b6951452d
FROM ${NODE_IMAGE} AS build
WORKDIR /app
# Dependencies first, from the lock exactly (npm ci), so a source change does not reinstall them.
COPY package.json package-lock.json .npmrc ./
COPY scripts/ scripts/
COPY apps/api/package.json apps/api/
COPY apps/worker/package.json apps/worker/
# The console's build tools (it is bundled into dist/console; none of them is left in the image).
COPY apps/console/package.json apps/console/
COPY libs/domain/package.json libs/domain/index.js libs/domain/
COPY libs/persistence/package.json libs/persistence/index.js libs/persistence/
COPY libs/reactor/package.json libs/reactor/index.js libs/reactor/
COPY libs/jobs/package.json libs/jobs/index.js libs/jobs/
COPY libs/config/package.json libs/config/index.js libs/config/
COPY libs/runtime/package.json libs/runtime/index.js libs/runtime/tracing.js libs/runtime/
# The client package: `gatehouse apply`, `diff` and `export` call the API through it.
COPY libs/client/package.json libs/client/index.js libs/client/
RUN npm ci --no-audit --no-fund
COPY . .
# Then the production dependencies only. `--omit=optional` too: npm keeps an optional peer dependency of a production
# package when it is installed for development (typescript, an optional peer of @nestjs/swagger for its compile-time
# plugin; babel-plugin-macros, of typeorm's dedent), and nothing here needs an optional package at run time
# (msgpackr-extract only speeds up msgpackr; pg-cloudflare is for Cloudflare Workers). container.test.ts checks it.
# .data: DATA_DIR, where a log signing key is generated when none is configured (a volume in docker-compose.yml).
# Last, the bundled packages' V8 code caches again, by the image's own Node (`node` here is the base image's; the build
# ran the project's own Node, and V8 takes a code cache only from its own version: libs/reactor/src/module-code-cache.ts).
RUN npm run build && npm prune --omit=dev --omit=optional --no-audit --no-fund && mkdir -p .data \
    && node scripts/build-sandbox-modules.js --code-cache-only

FROM ${NODE_IMAGE}
# tini is PID 1: it hands SIGTERM to node and reaps whatever exits. util-linux (already in the base) for `prlimit`,
# which caps each transform sandbox process's address space (libs/reactor/src/sandbox-process.ts).
RUN apt-get update && apt-get install -y --no-install-recommends tini util-linux && rm -rf /var/lib/apt/lists/* /var/cache/apt/*.bin
ARG NODE_IMAGE
ARG GATEHOUSE_VERSION=unknown
LABEL org.opencontainers.image.title="Gatehouse" org.opencontainers.image.version="${GATEHOUSE_VERSION}" \
      org.opencontainers.image.licenses="Apache-2.0" org.opencontainers.image.base.name="${NODE_IMAGE}"
# Prometheus scrapes the metrics listener (when METRICS_PORT is set) from another container or pod: every interface of
# the container (whose network is the boundary; the service alone defaults to loopback).
ENV NODE_ENV=production DATA_DIR=/data METRICS_HOST=0.0.0.0
WORKDIR /app
# Production dependencies and compiled code only (no sources, tests, benchmarks), owned by root: the runtime user
# reads them and cannot change them. Workspace packages are symlinks into libs/ and apps/, hence their package.json.
COPY --from=build /app/package.json ./
COPY --from=build /app/node_modules node_modules/
COPY --from=build /app/dist dist/
COPY --from=build /app/bin bin/
COPY --from=build /app/apps/api/package.json apps/api/
COPY --from=build /app/apps/worker/package.json apps/worker/
COPY --from=build /app/libs/domain/package.json /app/libs/domain/index.js libs/domain/
COPY --from=build /app/libs/persistence/package.json /app/libs/persistence/index.js libs/persistence/
COPY --from=build /app/libs/reactor/package.json /app/libs/reactor/index.js libs/reactor/
COPY --from=build /app/libs/jobs/package.json /app/libs/jobs/index.js libs/jobs/
COPY --from=build /app/libs/config/package.json /app/libs/config/index.js libs/config/
COPY --from=build /app/libs/runtime/package.json /app/libs/runtime/index.js /app/libs/runtime/tracing.js libs/runtime/
COPY --from=build /app/libs/client/package.json /app/libs/client/index.js libs/client/
# `gatehouse` on the PATH (docker compose exec api gatehouse tenant list); /data for the embedded database only.
RUN ln -s /app/bin/gatehouse.js /usr/local/bin/gatehouse && mkdir -m 700 /data && chown node:node /data
USER node
# 3000: the API and the data plane (/proxy); 3001: the web console, an origin of its own (docs/security.md).
EXPOSE 3000 3001
HEALTHCHECK --interval=10s --timeout=3s --start-period=60s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.PORT||3000)+'/health/ready').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
ENTRYPOINT ["/usr/bin/tini", "--"]
# node itself, not npm: SIGTERM reaches it and it drains (apps/api/test/platform/container.test.ts runs exactly this).
CMD ["node", "--no-node-snapshot", "--enable-source-maps", "dist/apps/api/src/main.js", "--api-only"]
