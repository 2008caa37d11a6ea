# Engram's image: the sources run through tsx (a runtime dependency), as `npm start` does.
FROM node:24-bookworm-slim

WORKDIR /app
# better-sqlite3 builds from source when no prebuilt binary fits.
RUN apt-get update && apt-get install -y --no-install-recommends python3 make g++ && rm -rf /var/lib/apt/lists/*
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund
COPY bin ./bin
COPY src ./src
COPY machines ./machines
COPY tsconfig.json ./

ENV ENGRAM_HOST=0.0.0.0 \
    ENGRAM_PORT=8420 \
    ENGRAM_DATA_DIR=/data \
    NODE_ENV=production
RUN mkdir -p /data && chown node:node /data
VOLUME /data
USER node
EXPOSE 8420
CMD ["node", "bin/engram.js", "serve"]
