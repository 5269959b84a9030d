# minuscule: `make demo` and `make test` set up everything they need from a clean clone.
SHELL := /bin/bash
PY ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
APT_PACKAGES := chromium fonts-dejavu fonts-dejavu-extra fonts-liberation poppler-utils fonts-urw-base35 fonts-crosextra-carlito fonts-crosextra-caladea fonts-linuxlibertine fonts-freefont-ttf
export PIP_DISABLE_PIP_VERSION_CHECK := 1

.PHONY: demo test setup setup-test sysdeps clean

$(BIN)/python:
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip

# torch is pinned to the CPU build that lies on this machine's disk (a plain `torch` pulls CUDA wheels).
.stamp-venv: pyproject.toml | $(BIN)/python
	$(BIN)/pip install -q torch==2.13.0
	$(BIN)/pip install -q -e '.[lite,model,eval,dev]'
	touch $@

# System packages through apt-get, only when something is missing.
.stamp-sysdeps: Makefile
	@missing=""; for p in $(APT_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  echo "installing system packages:$$missing"; \
	  if [ "$$(id -u)" = 0 ]; then SUDO=""; else SUDO="sudo"; fi; \
	  $$SUDO apt-get -o DPkg::Lock::Timeout=900 update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get -o DPkg::Lock::Timeout=900 install -y -qq --no-install-recommends $$missing >/dev/null; \
	fi
	touch $@

# KaTeX (npm) renders formulas for synthetic pages and the math checks.
node_modules/katex/package.json: package.json
	npm install --no-audit --no-fund --silent
	@touch $@

setup: .stamp-venv
setup-test: .stamp-venv .stamp-sysdeps node_modules/katex/package.json

# Converts the bundled samples (a born-digital two-column report and a scanned page) with the CPU engine.
demo: setup
	$(BIN)/minuscule parse examples/ -o out
	@echo; echo "Results are in out/:"; ls -1 out/*.md out/*.json | sed 's/^/  /'; echo; head -n 12 out/report.md

test: setup-test
	$(BIN)/python -m pytest -q

clean:
	rm -rf $(VENV) .stamp-* node_modules out
