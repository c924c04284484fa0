# One image for both processes: `api` and `worker` differ only by command (see docker-compose.yml).
FROM node:24-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json .npmrc ./
COPY apps/api/package.json apps/api/
COPY apps/worker/package.json apps/worker/
COPY libs/domain/package.json libs/domain/index.js libs/domain/
COPY libs/persistence/package.json libs/persistence/index.js libs/persistence/
COPY libs/reactor/package.json libs/reactor/index.js libs/reactor/
COPY libs/queue/package.json libs/queue/index.js libs/queue/
COPY libs/config/package.json libs/config/index.js libs/config/
COPY libs/runtime/package.json libs/runtime/index.js libs/runtime/tracing.js libs/runtime/
RUN npm ci --no-audit --no-fund
COPY . .
# .data: DATA_DIR, where a log signing key is generated when none is configured (a volume in docker-compose.yml).
RUN npm run build && npm prune --omit=dev --no-audit --no-fund && mkdir -p .data

FROM node:24-bookworm-slim
ENV NODE_ENV=production
WORKDIR /app
COPY --from=build --chown=node:node /app /app
USER node
EXPOSE 3000
# The same npm scripts that are tested; --ignore-scripts skips their pre-build (the image is already built).
CMD ["npm", "run", "start:api", "--ignore-scripts"]
