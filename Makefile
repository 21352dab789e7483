# Two commands on a fresh machine:  make run  (app with demo data)  ·  make test  (whole suite)
# make test-fast: the pure cores alone (tests/unit: no database, no Redis, no browser), in seconds.
SHELL := /bin/bash
PY_SYS ?= python3
VENV := .venv
PY := $(VENV)/bin/python
PIP := $(VENV)/bin/pip
STAMP := $(VENV)/.installed
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1
export TOKENIZERS_PARALLELISM := false

.PHONY: setup run test test-fast lint bench browser ocr office stop clean

setup: $(STAMP)

$(STAMP): pyproject.toml
	test -d $(VENV) || $(PY_SYS) -m venv $(VENV)
	$(PIP) install -q --upgrade pip
	# CPU build of torch first, so sentence-transformers does not pull a CUDA build.
	$(PIP) install -q torch==2.13.0 || $(PIP) install -q torch --index-url https://download.pytorch.org/whl/cpu
	$(PIP) install -q -e '.[test]'
	touch $(STAMP)

# Debian's Chromium for the browser tests (Playwright cannot download browsers here), and the DejaVu font
# the page-box tests draw a ligature with.
browser:
	@if [ ! -x /usr/bin/chromium ] || [ ! -f /usr/share/fonts/truetype/dejavu/DejaVuSans.ttf ]; then \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -q && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -q \
	    chromium chromium-driver fonts-dejavu-core; \
	fi

# Debian's Tesseract and its English data: the worker OCRs the pages of a scan that have no text layer
# (ingest.ocr, Tesseract in process through tesserocr, reading this data); other languages
# (OCR_LANGUAGES) need their tesseract-ocr-<lang> package.
ocr:
	@if ! tesseract --list-langs 2>/dev/null | grep -qx eng; then \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -q && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -q \
	    tesseract-ocr tesseract-ocr-eng; \
	fi

# Debian's LibreOffice, headless (no desktop): DOCX, PPTX, XLSX, EPUB and HTML originals are laid out as
# PDF pages (ingest.office_pdf) for the page view; without it their pages stay estimated, as text.
office:
	@if ! command -v soffice >/dev/null 2>&1; then \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -q && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -q \
	    libreoffice-writer-nogui libreoffice-calc-nogui libreoffice-impress-nogui; \
	fi

run: setup ocr office
	$(PY) scripts/run_stack.py

# The style and the types first (ruff owns the layout and the lint rules, mypy with django-stubs the
# types), then the whole suite; --durations prints the slowest tests at the end of the run.
test: setup browser ocr office lint
	$(PY) -m pytest --durations=15 $(PYTEST_ARGS)

lint: setup
	$(PY) -m ruff format --check .
	$(PY) -m ruff check .
	$(PY) -m mypy

# Starts no service: a test here that reaches the database or Redis fails (tests/unit/conftest.py). The URLs
# are emptied so that holds even with an external DATABASE_URL / REDIS_URL in the environment.
test-fast: setup browser ocr
	DATABASE_URL= REDIS_URL= $(PY) -m pytest tests/unit --durations=5 $(PYTEST_ARGS)

bench: setup ocr office
	$(PY) -m bench.run_all

stop:
	$(PY) scripts/run_stack.py stop

clean: stop
	rm -rf var
