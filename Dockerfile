# clmgit's image: the product distribution only (no sandbox, no tests), run as a non-root user,
# `clmgit` as the entrypoint. The controller and the registry server use it alike
# (deploy/overlays/controller, deploy/overlays/registry; docs/how-to/running-the-controller.md).
#
# The base is pinned by digest; to move it on, take the digest of the index that
#   docker buildx imagetools inspect python:3.12-slim
# prints, and rebuild.
ARG PYTHON_IMAGE=python:3.12-slim@sha256:78387bc3881b8273120a12ebe6c1ab22b018ccc2c9adf565ae1ac9b536e184ea

FROM ${PYTHON_IMAGE} AS build
WORKDIR /src
# Only what the wheel is built from: clmgit's own distribution, never sandbox/ or tests/.
COPY pyproject.toml README.md ./
COPY clmgit ./clmgit
RUN pip wheel --no-cache-dir --wheel-dir /wheels .

FROM ${PYTHON_IMAGE}
# git: GitPython runs it for every read of the config repository. The digest above pins the
# Debian release; git follows that release's security updates.
# hadolint ignore=DL3008
RUN apt-get update \
    && apt-get install -y --no-install-recommends git ca-certificates \
    && rm -rf /var/lib/apt/lists/* \
    && useradd --uid 10001 --user-group --no-create-home --home-dir /tmp \
       --shell /usr/sbin/nologin clmgit
COPY --from=build /wheels /wheels
RUN pip install --no-cache-dir --no-compile /wheels/*.whl \
    && rm -rf /wheels \
    && python -m compileall -q "$(python -c 'import clmgit, os; print(os.path.dirname(clmgit.__file__))')"
# A read-only root file system: the cache (config repo mirrors, compiled templates) and HOME are
# volumes the manifests mount (emptyDir).
ENV CLMGIT_CACHE_DIR=/var/cache/clmgit \
    HOME=/tmp \
    PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1
USER 10001:10001
EXPOSE 9090
ENTRYPOINT ["clmgit"]
CMD ["--help"]
