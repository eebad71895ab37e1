# The ClawBench agent sandbox: mitmproxy + the interception addon, a fail-closed egress firewall,
# users `proxy` (runs mitmdump) and `agent` (runs the agent, no capabilities; uid and gid
# 1500000000, which no host account has: a process escaping as it owns nothing on the host).
#
# Build it with `clawbench-sandbox build` (it sends only the files this needs as the context and
# fills in the build args). Works on python:3.12-slim and on a bare Debian (debootstrap
# minbase, no Python: python3 + python3-venv come from apt). The classic builder is enough: no
# BuildKit features are used (the Docker SDK cannot drive BuildKit).
#
# The CA bundle for the build's own downloads (build-ca.pem, empty unless --ca-bundle is given)
# never reaches the final image. apt trusts it in the `packages` stage (Acquire::https::CaInfo,
# for https sources behind a TLS-inspecting proxy; Debian's default sources are plain HTTP with
# signed indexes and do not need it); that stage deletes it in the same RUN and `system` takes
# the stage's finished file tree, not its layers, so the COPY that brought the bundle in is in
# no layer of the final image. pip trusts it (PIP_CERT) in the `build` stage, whose venv alone
# goes on. The bundle is never in the agent's trust store.

ARG BASE_IMAGE=python:3.12-slim

FROM ${BASE_IMAGE} AS packages
ARG WITH_CHROMIUM=0
ARG EXTRA_PACKAGES=""
COPY build-ca.pem /tmp/build/
RUN set -eu; \
    apt_ca=""; \
    if [ -s /tmp/build/build-ca.pem ]; then apt_ca="-o Acquire::https::CaInfo=/tmp/build/build-ca.pem"; fi; \
    pkgs="iptables ca-certificates libnss3-tools curl util-linux openssl"; \
    if ! python3 -c 'import ensurepip, venv' 2>/dev/null; then pkgs="$pkgs python3 python3-venv"; fi; \
    if [ "$WITH_CHROMIUM" = 1 ]; then pkgs="$pkgs chromium fonts-liberation"; fi; \
    apt-get $apt_ca update -qq; \
    DEBIAN_FRONTEND=noninteractive apt-get $apt_ca install -y -qq --no-install-recommends \
        $pkgs $EXTRA_PACKAGES >/dev/null; \
    rm -rf /tmp/build /var/lib/apt/lists/* /var/cache/apt/archives/*.deb; \
    id proxy >/dev/null 2>&1 || useradd --system --no-create-home --shell /usr/sbin/nologin proxy; \
    groupadd --gid 1500000000 agent; \
    useradd --create-home --no-log-init --uid 1500000000 --gid agent --shell /bin/sh agent; \
    mkdir -p /clawbench /my-info; \
    chmod 0755 /clawbench /my-info

# One layer holding packages' files as they ended (owners, modes and setuid bits kept). The base
# image's settings do not carry over: PATH covers /usr/local/bin (python:3.12-slim's python3).
FROM scratch AS system
COPY --from=packages / /
ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8

FROM system AS build
COPY build-ca.pem constraints.txt /tmp/build/
RUN set -eu; \
    if [ -s /tmp/build/build-ca.pem ]; then export PIP_CERT=/tmp/build/build-ca.pem; fi; \
    python3 -m venv /opt/clawbench/venv; \
    /opt/clawbench/venv/bin/pip install -q --no-cache-dir --disable-pip-version-check \
        -c /tmp/build/constraints.txt "mitmproxy>=12,<13" "pydantic>=2.7,<3" "setuptools>=69"; \
    /opt/clawbench/venv/bin/pip install -q --no-cache-dir --disable-pip-version-check \
        -c /tmp/build/constraints.txt "uvloop>=0.19" \
        || echo "uvloop did not install: the proxy runs on asyncio's own event loop"
COPY src/ /tmp/build/src/
RUN /opt/clawbench/venv/bin/pip install -q --no-cache-dir --disable-pip-version-check \
        --no-deps --no-build-isolation /tmp/build/src \
    && /opt/clawbench/venv/bin/python -c "import proxy_addon.clawbench, sandbox.container.entrypoint"

FROM system
COPY --from=build /opt/clawbench /opt/clawbench
ENTRYPOINT ["/opt/clawbench/venv/bin/python", "-m", "sandbox.container.entrypoint"]
