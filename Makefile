# make html | make test | make repro-<chapter> | make images | make gettext intl
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
SCALE ?= default
PG ?= 17
MAJORS := 13 15 17 18
# REPRO=cached builds the site from stored results only (no Docker); pages whose
# result is missing or stale show a warning banner.
REPRO ?= run
SPHINX := $(VENV)/bin/sphinx-build -c . -W --keep-going -n -q
export SCALE

.PHONY: help venv system engine image images results html site-check test gettext intl check-po clean

help:
	@echo "make html            run stale chapters, build the site in Japanese and English (_build/html)"
	@echo "make test            unit and integration tests, each chapter at tiny scale, browser test"
	@echo "make repro-NAME      run one chapter (SCALE=tiny|default|full, PG=major, DSN=...)"
	@echo "make images          build or pull postgres images for majors $(MAJORS)"
	@echo "make gettext intl    refresh the English catalogues after editing docs/"

$(VENV)/.stamp: requirements.txt
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install -q -r requirements.txt
	touch $@

venv: $(VENV)/.stamp

system:
	@scripts/install-system.sh

engine: system
	@scripts/ensure-docker.sh

image: engine
	@images/ensure.sh $(PG)

images: engine
	@for m in $(MAJORS); do images/ensure.sh $$m || exit 1; done

results: venv image
	$(PY) -m repro build --scale $(SCALE) --pg $(PG)

html: venv system $(if $(filter cached,$(REPRO)),,results) check-po
	@for lang in ja en; do \
	  echo "sphinx-build ($$lang)"; \
	  $(SPHINX) -b html -D language=$$lang docs _build/html/$$lang || exit 1; \
	done
	@cp docs/_root/index.html _build/html/index.html
	@echo "site: _build/html/index.html"

site-check: venv system
	SITE_DIR=_build/html $(PY) -m pytest -q tests/test_site.py

test: venv image
	$(PY) -m pytest

repro-%: venv image
	$(PY) -m repro run $* --scale $(SCALE) --pg $(PG) $(if $(DSN),--dsn "$(DSN)")
	$(PY) -m repro check $*

gettext: venv
	$(VENV)/bin/sphinx-build -c . -q -b gettext docs _build/gettext

intl: gettext
	$(VENV)/bin/sphinx-intl update -p _build/gettext -l en -d locale --line-width=-1

check-po: venv
	@$(PY) scripts/check_po.py

clean:
	rm -rf _build
