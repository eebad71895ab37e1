# The ClawBench agent sandbox: mitmproxy + the interception addon, a fail-closed egress firewall,
# users `proxy` (runs mitmdump) and `agent` (runs the agent, no capabilities).
#
# Build it with `clawbench-sandbox build` (it sends only the files this needs as the context and
# fills in the build args). Works on python:3.12-slim and on a bare Debian (debootstrap
# minbase, no Python: python3 + python3-venv come from apt). The classic builder is enough: no
# BuildKit features are used (the Docker SDK cannot drive BuildKit).
#
# The CA bundle for the build's own downloads (build-ca.pem, empty unless --ca-bundle is given)
# is copied into the `build` stage only: pip uses it through PIP_CERT there, and the final image
# takes nothing from that stage but the venv, so the bundle is in no layer of the final image
# and never in the agent's trust store. apt uses the base image's sources as they are (Debian's
# are plain HTTP with signed indexes, which a TLS-inspecting proxy does not touch).

ARG BASE_IMAGE=python:3.12-slim

FROM ${BASE_IMAGE} AS system
ARG WITH_CHROMIUM=0
ARG EXTRA_PACKAGES=""
ENV LANG=C.UTF-8
RUN set -eu; \
    pkgs="iptables ca-certificates libnss3-tools curl util-linux openssl"; \
    if ! python3 -c 'import ensurepip, venv' 2>/dev/null; then pkgs="$pkgs python3 python3-venv"; fi; \
    if [ "$WITH_CHROMIUM" = 1 ]; then pkgs="$pkgs chromium fonts-liberation"; fi; \
    apt-get update -qq; \
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
        $pkgs $EXTRA_PACKAGES >/dev/null; \
    rm -rf /var/lib/apt/lists/* /var/cache/apt/archives/*.deb; \
    id proxy >/dev/null 2>&1 || useradd --system --no-create-home --shell /usr/sbin/nologin proxy; \
    useradd --create-home --uid 1000 --user-group --shell /bin/sh agent; \
    mkdir -p /clawbench /my-info; \
    chmod 0755 /clawbench /my-info

FROM system AS build
COPY build-ca.pem constraints.txt /tmp/build/
RUN set -eu; \
    if [ -s /tmp/build/build-ca.pem ]; then export PIP_CERT=/tmp/build/build-ca.pem; fi; \
    python3 -m venv /opt/clawbench/venv; \
    /opt/clawbench/venv/bin/pip install -q --no-cache-dir --disable-pip-version-check \
        -c /tmp/build/constraints.txt "mitmproxy>=12,<13" "pydantic>=2.7,<3" "setuptools>=69"
COPY src/ /tmp/build/src/
RUN /opt/clawbench/venv/bin/pip install -q --no-cache-dir --disable-pip-version-check \
        --no-deps --no-build-isolation /tmp/build/src \
    && /opt/clawbench/venv/bin/python -c "import proxy_addon.clawbench, sandbox.container.entrypoint"

FROM system
COPY --from=build /opt/clawbench /opt/clawbench
ENTRYPOINT ["/opt/clawbench/venv/bin/python", "-m", "sandbox.container.entrypoint"]
