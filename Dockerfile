# metaagent serve in a container: streamable HTTP on port 8000, as a non-root user.
#
#   docker build -t metaagent-studio:0.1.0 .
#   docker run -p 8000:8000 -e METAAGENT_TOKEN -e OPENAI_API_KEY \
#       -v "$PWD/my.agent.yaml:/agents/agent.agent.yaml:ro" metaagent-studio:0.1.0
#
# The image holds the headless runtime only: the studio's Qt packages are an extra
# (`meta-agent-studio[studio]`) it does not install, which keeps the image small.

FROM python:3.11-slim AS build
ENV PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1
WORKDIR /src
COPY pyproject.toml README.md ./
COPY schema_types ./schema_types
COPY mcp_export ./mcp_export
COPY app ./app
RUN python -m venv /opt/metaagent \
    && /opt/metaagent/bin/pip install --no-cache-dir .

FROM python:3.11-slim
RUN groupadd --system --gid 10001 metaagent \
    && useradd --system --uid 10001 --gid 10001 --create-home --home-dir /home/metaagent metaagent \
    && mkdir /data /agents \
    && chown 10001:10001 /data
COPY --from=build /opt/metaagent /opt/metaagent
# METAAGENT_HOME holds the history (when no --store) and the server's data: a volume in
# production (an emptyDir under Kubernetes, whose root file system is read-only).
ENV PATH=/opt/metaagent/bin:$PATH \
    PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    METAAGENT_HOME=/data
USER 10001:10001
WORKDIR /data
VOLUME ["/data"]
EXPOSE 8000
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s --retries=3 \
    CMD ["python", "-c", "import urllib.request; urllib.request.urlopen('http://127.0.0.1:8000/healthz', timeout=4)"]
# A non-loopback address needs a caller check: METAAGENT_TOKEN from the environment, or the
# --oauth-issuer flags (see the README, "From one laptop to a cluster").
ENTRYPOINT ["metaagent"]
CMD ["serve", "/agents/agent.agent.yaml", "--http", "0.0.0.0:8000"]
