# Two commands set everything up on a fresh machine: `make demo` and `make test`.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
NODE_DIR := conformance
CONFORMANCE_STAMP := $(NODE_DIR)/node_modules/.installed

.PHONY: install demo test test-fast docs lint typecheck generate check bench bench-deps conformance-deps peers-deps services clean

# Both distributions of this repository, editable: the runtime (runtime/) and the generator (.).
$(STAMP): pyproject.toml runtime/pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e ./runtime -e '.[dev]'
	touch $(STAMP)

install: $(STAMP)

# Node 22 and the pinned official conformance harness, from the npm registry, into conformance/node_modules.
$(CONFORMANCE_STAMP): $(NODE_DIR)/package.json $(NODE_DIR)/package-lock.json
	cd $(NODE_DIR) && npm ci --no-audit --no-fund
	touch $(CONFORMANCE_STAMP)

conformance-deps: $(CONFORMANCE_STAMP)

# The legacy-only official SDK (1.x) as a test peer, in a venv of its own (the dev venv has 2.x).
SDK1_VENV := tests/peers/.venv-sdk1
SDK1_STAMP := $(SDK1_VENV)/.installed
$(SDK1_STAMP): tests/peers/requirements-sdk1.txt
	$(PYTHON) -m venv $(SDK1_VENV)
	$(SDK1_VENV)/bin/python -m pip install --quiet -r tests/peers/requirements-sdk1.txt
	touch $(SDK1_STAMP)

# FastMCP with fastmcp-tasks (an independent implementation of the tasks extension) as a test peer,
# in a venv of its own (it pins its own mcp; never imported by mcpgen).
FASTMCP_VENV := tests/peers/.venv-fastmcp
FASTMCP_STAMP := $(FASTMCP_VENV)/.installed
$(FASTMCP_STAMP): tests/peers/requirements-fastmcp.txt
	$(PYTHON) -m venv $(FASTMCP_VENV)
	$(FASTMCP_VENV)/bin/python -m pip install --quiet -r tests/peers/requirements-fastmcp.txt
	touch $(FASTMCP_STAMP)

# The model providers' Python SDKs (openai, anthropic, google-genai) as test peers, in a venv of their
# own: tests check lowered tool specs against the SDKs' own request types (never imported by mcpgen),
# and run examples/agent_loop.py, a user's program that imports an SDK and a generated client (so the
# runtime is installed here too, editable: its requirements file names it).
PROVIDERS_VENV := tests/peers/.venv-providers
PROVIDERS_STAMP := $(PROVIDERS_VENV)/.installed
$(PROVIDERS_STAMP): tests/peers/requirements-providers.txt runtime/pyproject.toml
	$(PYTHON) -m venv $(PROVIDERS_VENV)
	$(PROVIDERS_VENV)/bin/python -m pip install --quiet -r tests/peers/requirements-providers.txt
	touch $(PROVIDERS_STAMP)

# A real authorization server (the certified oidc-provider from npm) for the OAuth tests, run on
# the harness's Node 22.
OIDC_DIR := tests/peers/oidc
OIDC_STAMP := $(OIDC_DIR)/node_modules/.installed
$(OIDC_STAMP): $(OIDC_DIR)/package.json $(OIDC_DIR)/package-lock.json
	cd $(OIDC_DIR) && npm ci --no-audit --no-fund
	touch $(OIDC_STAMP)

# httptools (the parser of `mcpgen-runtime[fast]`) for the server's hostile-client tests, outside the venv.
FAST_SITE := tests/peers/.site-fast
FAST_STAMP := $(FAST_SITE)/.installed
$(FAST_STAMP): tests/peers/requirements-fast.txt $(STAMP)
	$(PY) -m pip install --quiet --upgrade --target $(FAST_SITE) -r tests/peers/requirements-fast.txt
	touch $(FAST_STAMP)

# Older black releases, each in a directory of its own, for tests/codegen/test_formatter_versions.py:
# the generator's bytes are the same under every black it allows (the oldest and newest of each year).
BLACK_VERSIONS := 24.1.0 24.10.0 25.1.0 25.12.0 26.1.0
BLACK_DIR := tests/peers/.black
BLACK_STAMP := $(BLACK_DIR)/.installed
$(BLACK_STAMP): $(STAMP)
	for v in $(BLACK_VERSIONS); do $(PY) -m pip install --quiet --no-deps --target $(BLACK_DIR)/$$v "black==$$v" || exit 1; done
	touch $(BLACK_STAMP)

peers-deps: $(SDK1_STAMP) $(FASTMCP_STAMP) $(PROVIDERS_STAMP) $(OIDC_STAMP) $(FAST_STAMP) $(BLACK_STAMP)

# redis-server and nginx for the cluster tests: installed from Debian packages when missing and
# when root (CI); elsewhere a note, and the cluster tests skip naming the missing binary.
services:
	@sh scripts/services.sh

demo: $(STAMP)
	$(PY) scripts/demo.py

# The static loop (well under a minute once installed): lint, format, types, import contracts, the
# blocking twins and the checked-in bindings.
check: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(PY) scripts/sync_twins.py --check
	$(VENV)/bin/lint-imports
	$(VENV)/bin/mypy
	$(VENV)/bin/mcpgen generate --check
	$(VENV)/bin/actionlint

# The loop while working (about 3 minutes on 2 cores): the fast tier, the unit tests of both
# distributions: no process, peer, network stack or wheel (tests/tiers.py; docs/how-to/develop.md, Test tiers).
test-fast: $(STAMP)
	$(PY) -m pytest --tier=fast -n 2

# The documentation site (mkdocs.yml, docs/) into site/: --strict fails on a broken link or anchor and
# on any other warning. Needs no network.
docs: $(STAMP)
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs build --strict

# Every test. Most peer tests wait on I/O, so more workers than cores (a module's peer tests on one
# worker: --dist loadgroup); then the `serial` tests (latency bounds, the cluster) alone, in one process.
TEST_WORKERS ?= 4
test: check docs $(CONFORMANCE_STAMP) $(SDK1_STAMP) $(FASTMCP_STAMP) $(PROVIDERS_STAMP) $(OIDC_STAMP) $(FAST_STAMP) $(BLACK_STAMP) services
	$(PY) -m pytest -n $(TEST_WORKERS) --dist loadgroup -m "not serial"
	$(PY) -m pytest -m serial

generate: $(STAMP)
	$(VENV)/bin/mcpgen generate

# Benchmark peers (FastMCP into the venv; uvloop, httptools, py-spy, pyinstrument into bench/.venv-peers;
# datamodel-code-generator, compared with mcpgen's models, into a venv of its own: bench/.venv-dcg),
# then every benchmark; writes bench/RESULTS.md. Not part of `make test` (its smoke test is).
BENCH_STAMP := $(VENV)/.bench-installed
$(BENCH_STAMP): $(STAMP) bench/requirements.txt bench/requirements-extras.txt bench/requirements-dcg.txt
	$(PY) -m pip install --quiet -r bench/requirements.txt
	$(PY) -m pip install --quiet --upgrade --target bench/.venv-peers/site -r bench/requirements-extras.txt
	$(PYTHON) -m venv bench/.venv-dcg
	bench/.venv-dcg/bin/python -m pip install --quiet -r bench/requirements-dcg.txt
	touch $(BENCH_STAMP)

bench-deps: $(BENCH_STAMP)

bench: $(BENCH_STAMP)
	$(PY) -m bench $(BENCH_ARGS)

clean:
	rm -rf $(VENV) $(SDK1_VENV) $(FAST_SITE) $(BLACK_DIR) $(NODE_DIR)/node_modules $(OIDC_DIR)/node_modules .pytest_cache .mypy_cache .ruff_cache
