# One image for every service; the service is the argument (default: webhook):
#   docker build -t karmada-quota . && docker run karmada-quota aggregator
# Services: webhook, aggregator, reconciler, console. Configuration is by environment (docs/reference/settings.md).

# The base, pinned by digest: node:24-bookworm-slim as of Node 24.18.0 (every platform's index).
# Without a registry, build on a local base instead: --build-arg NODE_IMAGE=<name> (see
# docs/development/sandbox.md, `npm run image:bases`).
ARG NODE_IMAGE=node:24.18.0-bookworm-slim@sha256:6f7b03f7c2c8e2e784dcf9295400527b9b1270fd37b7e9a7285cf83b6951452d

FROM ${NODE_IMAGE} AS build
WORKDIR /app
COPY package.json package-lock.json ./
# No install scripts: the only one allowed (the `node` devDependency fetching a second Node
# binary) is for development machines; the base has Node.
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY apps apps
COPY libs libs
# tsconfig.build.json compiles tools/ too; the services never import it, so only apps and libs
# are built here and tools/ stays out of the image.
RUN npm run build && npm prune --omit=dev --ignore-scripts --no-audit --no-fund

FROM ${NODE_IMAGE}
ENV NODE_ENV=production
WORKDIR /app
COPY --from=build /app/package.json ./
COPY --from=build /app/node_modules node_modules
COPY --from=build /app/dist/apps dist/apps
COPY --from=build /app/dist/libs dist/libs
COPY --from=build /app/libs/api/proto libs/api/proto
# uid 1000 is the image's "node" user; numeric, so Kubernetes' runAsNonRoot can verify it.
USER 1000:1000
# Node itself is PID 1 (no shell): apps/main.ts runs the named service or says which names exist.
ENTRYPOINT ["node", "dist/apps/main.js"]
CMD ["webhook"]
