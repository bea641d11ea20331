# The worker (and the emulator, for trying it out) in a small runtime image.
# Build:  docker build -t push-worker --build-arg COMMIT="$(git rev-parse HEAD)" .
#         (COMMIT is what `worker --version` and push_build_info{commit} report, and the
#         org.opencontainers.image.revision label: the build context has no .git to read it from;
#         --build-arg SOURCE=<your repository's URL> fills the org.opencontainers.image.source label)
# Without a registry: scripts/release.sh, then scripts/image.sh builds the same worker into an OCI archive.
# Stage 1 builds with Swift's Debian 12 (bookworm) image; stage 2 is debian:bookworm-slim with only the
# shared libraries the binaries load (Swift's runtime and Foundation are linked in statically).
ARG SWIFT_VERSION=6.3
FROM swift:${SWIFT_VERSION}-bookworm AS build
RUN apt-get update \
 && apt-get install -y --no-install-recommends libhiredis-dev libnghttp2-dev libjemalloc-dev libcurl4-openssl-dev libssl-dev libicu-dev pkg-config \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src
# Dependencies first, so a source change does not fetch them again.
COPY Package.swift ./
RUN swift package resolve
COPY Sources ./Sources
COPY Plugins ./Plugins
COPY Tests ./Tests
COPY Benchmarks ./Benchmarks
COPY Fuzz ./Fuzz
# The commit, as scripts/release.sh writes it into the tree it builds (BuildInfo.commit).
ARG COMMIT=unknown
RUN printf '// Written by the Dockerfile (ARG COMMIT); never edited by hand.\nlet buildCommit = "%s"\n' "$COMMIT" > Sources/worker/BuildCommit.swift
RUN swift build -c release --static-swift-stdlib --product worker \
 && swift build -c release --static-swift-stdlib --product push-emulator \
 && mkdir -p /out && cp "$(swift build -c release --show-bin-path)/worker" "$(swift build -c release --show-bin-path)/push-emulator" /out/

FROM debian:bookworm-slim
# hiredis, libcurl (with nghttp2 for HTTP/2), OpenSSL, ICU (the word filter's variant data), the C++ runtime Swift's static stdlib still needs,
# the CA bundle that APNs' and Google's certificates chain to, and the openssl tool (compose's setup makes the demo key with it:
# nothing is fetched when the stack starts).
RUN apt-get update \
 && apt-get install -y --no-install-recommends libhiredis0.14 libnghttp2-14 libjemalloc2 libcurl4 libssl3 libicu72 libstdc++6 ca-certificates openssl \
 && rm -rf /var/lib/apt/lists/* \
 && useradd --system --uid 10001 --no-create-home push
COPY --from=build /out/worker /out/push-emulator /usr/local/bin/
COPY config/worker.example.yaml /etc/push/worker.example.yaml
# The image's configuration: metrics and health on every address of the container (the worker's default,
# 127.0.0.1, is reachable from inside only). A configuration mounted at /etc/push/worker.yaml replaces it, and
# its metrics.listen decides: the image sets no METRICS_LISTEN, which as an environment variable would win over
# any file. `docker run -e METRICS_LISTEN=...` still overrides both, for the worker and the HEALTHCHECK alike.
COPY deploy/image-worker.yaml /etc/push/worker.yaml
USER push
EXPOSE 9464
# `worker health` asks the worker's own /healthz on metrics.listen, read from the same file the worker runs
# with: no curl in the image.
HEALTHCHECK --interval=15s --timeout=5s --start-period=30s --retries=3 CMD ["/usr/local/bin/worker", "health", "--config", "/etc/push/worker.yaml"]
# OCI labels, last so that another VERSION rebuilds no layer. VERSION is what `worker --version` prints
# (Sources/PushCore/Metrics/BuildInfo.swift; scripts/check-deploy.py checks that they agree); SOURCE, where the
# source is, is yours to give.
ARG VERSION=0.7.0
ARG COMMIT=unknown
ARG SOURCE=""
LABEL org.opencontainers.image.title="push-worker" \
      org.opencontainers.image.description="Redis lists to APNs and FCM over HTTP/2: the push pipeline's worker, and its APNs/FCM emulator" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${COMMIT}" \
      org.opencontainers.image.licenses="Apache-2.0" \
      org.opencontainers.image.source="${SOURCE}"
ENTRYPOINT ["/usr/local/bin/worker"]
CMD ["run", "--config", "/etc/push/worker.yaml"]
