# All set-up lives here, so a fresh Debian machine (Python 3.11, root) needs only
# `make run` or `make test`.
PYTHON ?= python3.11
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
# Tesseract (second opinion for printed numbers) and the fonts the renderer draws with.
APT_PACKAGES := tesseract-ocr tesseract-ocr-eng fonts-dejavu-core fonts-dejavu-extra

.PHONY: run test lint typecheck unit system-deps clean

$(PY):
	$(PYTHON) -m venv $(VENV)

$(STAMP): $(PY) pyproject.toml
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test]'
	touch $(STAMP)

# System packages the reader and the renderer use; installed once, skipped when present.
system-deps:
	@if ! dpkg -s $(APT_PACKAGES) >/dev/null 2>&1; then \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $(APT_PACKAGES); \
	fi

run: system-deps $(STAMP)
	$(VENV)/bin/companion demo

lint: $(STAMP)
	$(VENV)/bin/ruff check companion tests
	$(VENV)/bin/mypy companion/games

unit: $(STAMP)
	$(PY) -m pytest

test: system-deps $(STAMP) lint unit

clean:
	rm -rf $(VENV)
