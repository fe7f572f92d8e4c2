# Verdict's container image: multi-stage, runs as the unprivileged `node` user, with a health check.
#   docker build -t verdict .
#   docker run -d -p 127.0.0.1:8080:8080 -v verdict-data:/var/lib/verdict verdict
# The embedded default keeps SQLite and secret.key in the volume; for scaled mode pass
# VERDICT_DATABASE_URL, VERDICT_REDIS_URL and VERDICT_SECRET_KEY (docs/deployment.md).
# scripts/check-dockerfile.sh runs these steps without Docker (no engine where it was written).

FROM node:20-bookworm-slim AS build
WORKDIR /app
# Toolchain for better-sqlite3 when no prebuilt binary fits the platform.
RUN apt-get update && apt-get install -y --no-install-recommends python3 make g++ && rm -rf /var/lib/apt/lists/*
COPY package.json package-lock.json tsconfig.json ./
COPY bin ./bin
COPY src ./src
COPY sdk ./sdk
COPY web ./web
# Installs from the lockfile and, through the "prepare" scripts, builds the SDK and the admin UI.
RUN npm install --no-audit --no-fund
# Only what the server runs: no TypeScript compiler, Vite, test tools.
RUN npm prune --omit=dev --no-audit --no-fund

FROM node:20-bookworm-slim
ENV NODE_ENV=production HOST=0.0.0.0 PORT=8080 VERDICT_DATA_DIR=/var/lib/verdict
WORKDIR /app
COPY --from=build /app/package.json ./package.json
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/bin ./bin
COPY --from=build /app/src ./src
COPY --from=build /app/sdk ./sdk
COPY --from=build /app/web/dist ./web/dist
RUN mkdir -p /var/lib/verdict && chown node:node /var/lib/verdict
USER node
VOLUME /var/lib/verdict
EXPOSE 8080
HEALTHCHECK --interval=15s --timeout=3s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 8080) + '/v1/readyz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# SIGTERM stops the server gracefully: in-flight requests finish, buffered events are committed.
STOPSIGNAL SIGTERM
CMD ["node", "bin/verdict.js", "serve"]
