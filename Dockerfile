# schoolbridge daemon image. Multi-stage: dependencies are installed in a build stage (where native
# builds may need python/g++), the runtime stage has production dependencies only and runs as a
# non-root user. TypeScript runs through tsx at runtime, so there is no compile step to carry over.
FROM node:20-bookworm-slim AS deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund

FROM node:20-bookworm-slim
ENV NODE_ENV=production \
    SCHOOLBRIDGE_CONFIG=/etc/schoolbridge/schoolbridge.yaml
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
COPY package.json ./
COPY bin ./bin
COPY src ./src
COPY connectors ./connectors
COPY config ./config
# The store (snapshot, outbox, inbox) and file-connector output live on the volume.
RUN mkdir -p /data /etc/schoolbridge && chown -R node:node /data
VOLUME ["/data"]
USER node
EXPOSE 8080
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s --retries=3 \
  CMD node -e "fetch('http://127.0.0.1:'+(process.env.SCHOOLBRIDGE_PORT||8080)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"
ENTRYPOINT ["node", "/app/bin/schoolbridge.js"]
CMD ["start"]
