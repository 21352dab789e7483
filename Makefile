# Two commands on a fresh machine:  make run  (app with demo data)  ·  make test  (whole suite)
SHELL := /bin/bash
PY_SYS ?= python3
VENV := .venv
PY := $(VENV)/bin/python
PIP := $(VENV)/bin/pip
STAMP := $(VENV)/.installed
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1
export TOKENIZERS_PARALLELISM := false

.PHONY: setup run test bench browser stop clean

setup: $(STAMP)

$(STAMP): pyproject.toml
	test -d $(VENV) || $(PY_SYS) -m venv $(VENV)
	$(PIP) install -q --upgrade pip
	# CPU build of torch first, so sentence-transformers does not pull a CUDA build.
	$(PIP) install -q torch==2.13.0 || $(PIP) install -q torch --index-url https://download.pytorch.org/whl/cpu
	$(PIP) install -q -e '.[test]'
	touch $(STAMP)

# Debian's Chromium for the browser tests (Playwright cannot download browsers here).
browser:
	@if [ ! -x /usr/bin/chromium ]; then \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -q && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -q chromium chromium-driver; \
	fi

run: setup
	$(PY) scripts/run_stack.py

test: setup browser
	$(PY) -m pytest $(PYTEST_ARGS)

bench: setup
	$(PY) -m bench.run_all

stop:
	$(PY) scripts/run_stack.py stop

clean: stop
	rm -rf var
