# Every target does its own set-up: a fresh clone needs only `make run` or `make test`.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

# Python caches compiled bytecode unless told not to; the tests start dozens of Python processes
# (xdist workers, `sluice serve`), each of which would otherwise compile the project again (about
# a second of CPU each).
unexport PYTHONDONTWRITEBYTECODE

.PHONY: run test test-fast fuzz lint bench bench-full bench-scale bench-fanout soak errors-doc screenshots setup check-java clean

run: setup
	$(BIN)/sluice serve --demo

# The tests that need no Spark, Chromium, PostgreSQL or long-running processes (markers set from
# the fixtures a test uses, in tests/conftest.py).
FAST := not spark and not browser and not postgres and not slow

# Every test with no JVM, Chromium or long-running process (the PostgreSQL ones too) on every
# core (pytest-xdist; each worker has its own catalogs, PostgreSQL cluster, Redis and temp dirs),
# then the rest in one process: they share one SparkSession, and two JVMs on two cores would
# slow each other past their deadlines. Both parts always run.
PARALLEL := not spark and not browser and not slow

test: setup
	$(BIN)/python -m pytest -n logical -m "$(PARALLEL)"; parallel=$$?; \
	$(BIN)/python -m pytest -m "not ($(PARALLEL))" && exit $$parallel

# A quick check while changing code.
test-fast: setup
	$(BIN)/python -m pytest -n logical -m "$(FAST)"

# The API and socket.io fuzz with ten times the examples `make test` gives them (Schemathesis over
# every operation as every demo user, its stateful phase, Hypothesis over every socket event).
fuzz: setup
	FUZZ_EXAMPLES=50 $(BIN)/python -m pytest -p no:cacheprovider tests/server/scenarios/fuzz/

# Lint, format check and types (configured in pyproject.toml); fix with `ruff check --fix` and
# `ruff format` on the files you change.
lint: setup
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy

bench: setup
	$(BIN)/python -m bench --quick

bench-full: setup
	$(BIN)/python -m bench

# Issue 17's scale goals: deploys, memory, idle CPU and restarts at 10, 100 and 1,000 diagrams
# (about 13 minutes on two cores); other counts with `$(BIN)/python -m bench.scale --diagrams 10,30`.
bench-scale: setup
	$(BIN)/python -m bench.scale

# Issue 37's live-edge goals: idle sockets per transport (connect time, memory per 1,000, REST
# p99), then 10,000 subscribers in 10 audiences at one batch a second and 1,000 at 100 tuples/s
# (docs/benchmarks.md); smaller runs with `$(BIN)/python -m bench.fanout --sockets 1000`.
bench-fanout: setup
	$(BIN)/python -m bench.fanout
	$(BIN)/python -m bench.fanout --only fanout --realtime

soak: setup
	$(BIN)/python -m bench.soak

# docs/errors.md is generated from the error-code registry; tests/boxes/test_codes.py checks it.
errors-doc: setup
	$(BIN)/python -m boxes.codes > docs/errors.md

# The README's pictures (docs/screenshots/), taken by the web tests of the README's walkthrough
# and of the paper's scenario, in the suite's order: the walkthrough's demo server closes before
# the scenario's server runs its q1 on the same SparkSession (running both at once, the two q1s'
# shared executions would ask Spark for one query name twice).
screenshots: setup
	DOCS_SCREENSHOTS=1 $(BIN)/python -m pytest -p no:cacheprovider tests/web/test_walkthrough.py tests/web/test_web_scenario.py

setup: check-java $(STAMP)

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[test,dev]'
	touch $(STAMP)

check-java:
	@command -v java >/dev/null 2>&1 || { echo "Java 17 or 21 is required by Spark. Install it: sudo apt-get install -y openjdk-17-jdk-headless"; exit 1; }
	@command -v javac >/dev/null 2>&1 || { echo "A JDK's javac builds Sluice's Spark source. Install it: sudo apt-get install -y openjdk-17-jdk-headless"; exit 1; }
	@v=$$(java -version 2>&1 | sed -n 's/.*version "\([0-9]*\).*/\1/p' | head -1); \
	 if [ -z "$$v" ] || [ "$$v" -lt 17 ]; then echo "Java $$v found; Spark 4 needs Java 17 or 21. Install it: sudo apt-get install -y openjdk-17-jdk-headless"; exit 1; fi

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache
