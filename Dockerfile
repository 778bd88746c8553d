# The project's image for kind mode: the reference agent (entrypoint `attestorm agent`) and the
# generator pods (`attestorm kind generator`), as bundled JavaScript on plain node (no tsx), and the
# native load worker (client native), compiled in the build stage: the final image has no compiler.
# Build: docker build -t attestorm:dev .   Load: kind load docker-image attestorm:dev --name <cluster>
# BASE: the Node 20 image every stage starts from; `attestorm cluster up` builds with a locally made
# one (no registry there). The default is the public image users pull.
ARG BASE=node:20-bookworm-slim

FROM ${BASE} AS build
# gcc and the C library's static archive, for the native worker (Debian's packages; a layer of its own,
# so a change to the sources does not fetch them again).
RUN apt-get update && apt-get install -y --no-install-recommends gcc libc6-dev && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json ./
COPY src ./src
COPY proto ./proto
# ESM bundles of the CLI and of the agent's own entry (the agent's process loads nothing else);
# packages stay external and load from the production node_modules. They live two levels below
# /app so the sources' project-root lookups (../../) still find /app.
RUN npx esbuild src/cli/main.ts src/cli/agent-main.ts --bundle --platform=node --format=esm \
      --target=node20 --packages=external --outdir=dist/cli --out-extension:.js=.mjs
# The native worker with the runner's own flags (src/load/native/build.ts), linked statically, into
# dist/native under the name a run looks for first; the build fails rather than ship an image without it.
RUN npx tsx src/cli/prebuild-native.ts

FROM ${BASE} AS deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund

FROM ${BASE}
WORKDIR /app
ENV NODE_ENV=production
COPY package.json ./
COPY --from=deps /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
# Generator pods bundle their worker entries from the sources on first start (src/load/worker),
# and the agent loads the Workload API proto at run time.
COPY src ./src
COPY proto ./proto
RUN mkdir -p node_modules/.cache/attestorm && chown -R node:node node_modules/.cache && chmod -R g+w node_modules/.cache
# Group-writable: bystander pods with `uid: own` run as uid 1001 in group node and bundle their workers too.
# uid 1000: the agent DaemonSet's init container hands the hostPath socket directory to this user.
USER node
ENTRYPOINT ["node", "/app/dist/cli/agent-main.mjs", "agent"]
