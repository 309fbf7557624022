# One image for every service; the service is the first argument (default: webhook):
#   docker build -t karmada-quota . && docker run karmada-quota aggregator
FROM node:24-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm install --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json nest-cli.json ./
COPY apps apps
COPY libs libs
COPY tools tools
RUN npm run build && npm prune --omit=dev --no-audit --no-fund

FROM node:24-bookworm-slim
ENV NODE_ENV=production
WORKDIR /app
COPY --from=build /app/package.json ./
COPY --from=build /app/node_modules node_modules
COPY --from=build /app/dist dist
COPY --from=build /app/libs/api/crds libs/api/crds
USER node
ENTRYPOINT ["sh", "-c", "exec node dist/apps/\"$0\"/src/main.js"]
CMD ["webhook"]
