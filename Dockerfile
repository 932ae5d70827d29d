# syntax=docker/dockerfile:1
#
# scrollback as an MCP server in a container, for linux/amd64 and
# linux/arm64:
#
#   docker build -t scrollback .                           # from source
#   docker buildx build --platform linux/amd64,linux/arm64 -t scrollback .
#   docker run -i --rm -v scrollback:/data scrollback mcp  # MCP on stdio
#
# GoReleaser (dockers_v2 in .goreleaser.yaml) builds the same image from the
# release binaries instead: it passes SCROLLBACK_BINARY=prebuilt, and its
# build context holds linux/amd64/scrollback and linux/arm64/scrollback.
#
# The image is busybox: a shell and the usual commands, because run_command
# runs its commands inside the container, with /bin/sh. Nothing else is in
# it but the CA certificates (for `scrollback proxy --url https://...`). It
# runs as an unprivileged user (uid 10001) in /work, and keeps its database
# on the volume /data (SCROLLBACK_DB=/data/scrollback.db).

ARG SCROLLBACK_BINARY=source
ARG GO_VERSION=1.26
ARG BUSYBOX_VERSION=1.37-musl

# The binary, from source: cross-compiled on the build machine's platform.
FROM --platform=$BUILDPLATFORM golang:${GO_VERSION}-bookworm AS source
ARG TARGETOS TARGETARCH TARGETPLATFORM VERSION=dev
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 GOOS=$TARGETOS GOARCH=$TARGETARCH go build -tags grpcnotrace -trimpath \
	-ldflags "-s -w -X github.com/scrollback-dev/scrollback/internal/cli.version=$VERSION" \
	-o /out/scrollback ./cmd/scrollback

# The binary, from a GoReleaser build context.
FROM scratch AS prebuilt
ARG TARGETPLATFORM
COPY ${TARGETPLATFORM}/scrollback /out/scrollback

FROM ${SCROLLBACK_BINARY} AS binary

# The user, its directories and the CA certificates, made on the build
# machine's platform so that the image needs no RUN (and no emulator) for
# the other one.
FROM --platform=$BUILDPLATFORM alpine:3.22 AS certs
FROM --platform=$BUILDPLATFORM busybox:${BUSYBOX_VERSION} AS users
RUN adduser -D -H -u 10001 -h /home/scrollback scrollback \
	&& mkdir -p /data /work /home/scrollback \
	&& chown 10001:10001 /data /work /home/scrollback

FROM busybox:${BUSYBOX_VERSION}
LABEL org.opencontainers.image.title="scrollback" \
	org.opencontainers.image.description="Bounded previews of large tool output; the whole copy kept to page, grep and query with jq (MCP server, proxy and CLI)" \
	org.opencontainers.image.source="https://github.com/scrollback-dev/scrollback" \
	io.modelcontextprotocol.server.name="io.github.scrollback-dev/scrollback"
COPY --from=users /etc/passwd /etc/group /etc/
COPY --from=users --chown=10001:10001 /data /data
COPY --from=users --chown=10001:10001 /work /work
COPY --from=users --chown=10001:10001 /home/scrollback /home/scrollback
COPY --from=certs /etc/ssl/certs/ca-certificates.crt /etc/ssl/certs/ca-certificates.crt
COPY --from=binary /out/scrollback /usr/local/bin/scrollback
ENV SCROLLBACK_DB=/data/scrollback.db HOME=/home/scrollback
USER 10001:10001
WORKDIR /work
VOLUME /data
ENTRYPOINT ["scrollback"]
CMD ["mcp"]
