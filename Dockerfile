# Sluice server image: slim Python, a Java 17 JDK for Spark (its javac builds Sluice's Spark
# source, server/runtime/jar.py), and the project.
FROM python:3.11-slim-bookworm

RUN apt-get update \
 && apt-get install -y --no-install-recommends openjdk-17-jdk-headless \
 && rm -rf /var/lib/apt/lists/*

WORKDIR /app
COPY pyproject.toml README.md ./
COPY boxes ./boxes
COPY catalog ./catalog
COPY server ./server
COPY web ./web
# Editable, so the server finds web/ beside its package, as it does in a checkout.
RUN pip install --no-cache-dir -e . \
 && python -c "from server.runtime.jar import source_jar; source_jar()"

ENV SLUICE_DATA_DIR=/data
VOLUME /data
EXPOSE 8080
CMD ["sluice", "serve", "--host", "0.0.0.0", "--port", "8080"]
