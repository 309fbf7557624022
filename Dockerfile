# One image for every service; the service is the first argument (default: webhook):
#   docker build -t karmada-quota . && docker run karmada-quota aggregator
# Services: webhook, aggregator, reconciler, console. Configuration is by environment (README).

FROM node:24-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
# npm install, not npm ci: registry mirrors that serve no macOS/Windows builds of optional packages
# leave those out of the lock file, and npm ci then refuses it.
RUN npm install --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY apps apps
COPY libs libs
# tsconfig.build.json compiles tools/ too; the services never import it, so only apps and libs
# are built here and tools/ stays out of the image.
RUN npm run build && npm prune --omit=dev --no-audit --no-fund

FROM node:24-bookworm-slim
ENV NODE_ENV=production
WORKDIR /app
COPY --from=build /app/package.json ./
COPY --from=build /app/node_modules node_modules
COPY --from=build /app/dist/apps dist/apps
COPY --from=build /app/dist/libs dist/libs
COPY --from=build /app/libs/api/crds libs/api/crds
# uid 1000 is the image's "node" user; numeric, so Kubernetes' runAsNonRoot can verify it.
USER 1000:1000
ENTRYPOINT ["sh", "-c", "case \"$0\" in webhook|aggregator|reconciler|console) exec node dist/apps/\"$0\"/src/main.js ;; *) echo \"unknown service '$0': use webhook, aggregator, reconciler or console\" >&2; exit 2 ;; esac"]
CMD ["webhook"]
