# make html | make site | make test | make repro-<chapter> | make matrix | make images | make gettext intl
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
SCALE ?= default
PG ?= 17
MAJORS ?= 9.6 10 11 12 13 14 15 16 17 18
# REPRO=cached builds the site from stored results only (no Docker); pages whose
# result is missing or stale show a warning banner. RESULTS=DIR[:DIR...] adds results
# gathered elsewhere (e.g. the artifacts of the CI matrix).
REPRO ?= run
SPHINX := $(VENV)/bin/sphinx-build -c . -W --keep-going -n -q
comma := ,
space := $(empty) $(empty)
PG_LIST := $(subst $(comma),$(space),$(PG))
# CHAPTERS=a,b limits `make results` to those chapters (a CI job runs one).
CHAPTERS ?=
export SCALE RESULTS REPRO
# Where the time goes: each stage's seconds (scripts/stage.sh), reported at the end of
# make html and make site. Work that measures nothing goes aside of measuring runs (scripts/aside.sh):
# it never overlaps a chapter's run on this Docker engine.
export REPRO_STAGES ?= $(CURDIR)/_build/stages.tsv
STAGE := scripts/stage.sh
ASIDE := scripts/aside.sh

.PHONY: help venv system engine image images binaries results matrix html site html-pages stages-start pdf site-check test test-measuring test-aside canary gettext intl \
	check-po archive lint-workflow test-images clean lock

help:
	@echo "make html            run stale chapters on PostgreSQL $(PG), build the site's HTML (_build/html)"
	@echo "make site            the same, and the PDFs the site links (as published)"
	@echo "make test            unit and integration tests, each chapter once, browser test"
	@echo "make canary          this build's runs (make results) beside every chapter's pool: fails beyond chance"
	@echo "make repro-NAME      run one chapter (SCALE=tiny|default|full, PG=17 or PG=13,17, DSN=... SERVER_CPUS=N CLIENT=local; SERVER=local: no Docker)"
	@echo "make matrix          every chapter on every major (MAJORS=\"$(MAJORS)\", SCALE=...)"
	@echo "make images          build or pull the postgres images for MAJORS"
	@echo "make binaries        unpack the relocatable server binaries of MAJORS (default all ten) for SERVER=local,"
	@echo "                     and compile client programs where this machine has none new enough"
	@echo "make archive         keep this build's results in results/ (the stored history; MACHINE=name: a contributed run)"
	@echo "make gettext intl    refresh the English catalogues after editing docs/"
	@echo "make screens         screenshots of the built site and the PDFs' first pages (_build/screens)"
	@echo "make lock            re-resolve pyproject.toml's pins into requirements.txt (hashes)"

$(VENV)/.stamp: requirements.txt
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else \
	  "Python 3.11 or later is needed (pyproject.toml); point PYTHON= at one")'
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install -q --require-hashes -r requirements.txt
	touch $@

# Resolve pyproject.toml's pins into requirements.txt with hashes, in a throwaway venv.
PIP_TOOLS := pip-tools==7.6.2
lock:
	rm -rf _build/lockvenv && $(PYTHON) -m venv _build/lockvenv
	_build/lockvenv/bin/pip install -q $(PIP_TOOLS)
	CUSTOM_COMPILE_COMMAND="make lock" _build/lockvenv/bin/pip-compile -q --generate-hashes --allow-unsafe \
	  --strip-extras --no-emit-index-url --no-emit-find-links \
	  -o requirements.txt pyproject.toml
	rm -rf _build/lockvenv

venv: $(VENV)/.stamp

# SYSTEM=run or site: only what measuring, or a build from stored results, needs (CI jobs).
# Unset, what the goal needs: make html installs neither the PDF's TeX Live nor the test
# browser (most of a fresh machine's install time), every other goal installs all.
SYSTEM ?=
html: SYSTEM_FOR := html
system:
	@$(STAGE) "packages ($(or $(SYSTEM),$(SYSTEM_FOR),all))" scripts/install-system.sh $(or $(SYSTEM),$(SYSTEM_FOR),all)

engine: system
	@scripts/ensure-docker.sh

# Only the images the runs use (python -m repro images): the majors of PG, those some
# chapters run beside them (partitions: 11; semaphores: 9.6 and its control, built on 15),
# for CHAPTERS or every chapter; make images builds MAJORS and the control. Two workers side
# by side, one base per Debian suite (scripts/ensure-images.sh).
NEEDED = $(PY) -m repro images --pg $(subst $(space),$(comma),$(strip $(PG_LIST)))
image: engine venv
	@needed=$$($(NEEDED) $(if $(CHAPTERS),--only $(CHAPTERS))) && scripts/ensure-images.sh $$needed

images: engine
	@scripts/ensure-images.sh --control $(sort $(MAJORS) 9.6 15)

# zonky's server binaries of MAJORS (all ten unless given) for --server local, pinned jars
# fetched by Maven into the images' cache, unpacked where a run finds them (scripts/binaries.py);
# where no client programs here are of the newest major asked or newer, those of 18 compiled
# from Debian's source package (scripts/client-programs.sh)
binaries: venv
	$(PY) scripts/binaries.py $(MAJORS)

results: system
	@$(MAKE) -s image $(if $(SYSTEM_FOR),SYSTEM_FOR=$(SYSTEM_FOR))
	$(PY) -m repro build --scale $(SCALE) --pg $(PG) $(if $(CHAPTERS),--only $(CHAPTERS)) $(if $(WAIT),--wait)

# RUNS=N: N new runs of each chapter on each major, each kept in results/ (the history the
# verdicts pool); without it, only what is missing or stale
matrix: venv images
	$(PY) -m repro build --scale $(SCALE) --pg $(subst $(space),$(comma),$(strip $(MAJORS))) $(if $(WAIT),--wait) \
	  $(if $(CHAPTERS),--only $(CHAPTERS)) $(if $(RUNS),--runs $(RUNS))

stages-start:
	@$(STAGE) --reset

# make html: the HTML (seconds once warm); make site: the HTML and the PDFs it links, as
# published (CI, the workflow). Each prints where its time went.
html: stages-start html-pages
	@echo "site: _build/html/index.html (without its PDFs: make pdf, or make site for both)"
	@$(STAGE) --report

site: stages-start html-pages pdf
	@echo "site: _build/html/index.html, with its PDFs"
	@$(STAGE) --report

# The two languages build side by side (one per core), aside of any measuring run.
html-pages: system $(if $(filter cached,$(REPRO)),venv,results) check-po
	@echo "sphinx-build (ja, en)"; pids=""; for lang in ja en; do \
	  $(STAGE) "sphinx ($$lang)" $(ASIDE) $(SPHINX) -b html -D language=$$lang docs _build/html/$$lang & pids="$$pids $$!"; \
	done; for pid in $$pids; do wait $$pid || exit 1; done
	@cp docs/_root/index.html _build/html/index.html

# The whole report as one PDF per language (Sphinx's LaTeX builder; upLaTeX for Japanese),
# published beside the HTML of its language. The two languages build side by side, and
# latexmk reruns only what changed. scripts/check_pdf.py then reads them back (chapters in
# the contents, fonts, overfull lines) before they are published.
pdf: venv system
	@pids=""; for lang in ja en; do \
	  echo "PDF ($$lang)"; \
	  $(STAGE) "pdf ($$lang)" $(ASIDE) bash -c '$(SPHINX) -b latex -D language='$$lang' docs _build/latex/'$$lang' \
	    && $(MAKE) -s -C _build/latex/'$$lang' all-pdf LATEXMKOPTS="-quiet" > _build/latex/'$$lang'.log 2>&1 \
	    || { tail -30 _build/latex/'$$lang'.log; exit 1; }' & pids="$$pids $$!"; \
	done; \
	for pid in $$pids; do wait $$pid || exit 1; done; \
	$(ASIDE) $(PY) scripts/check_pdf.py || exit 1; \
	for lang in ja en; do \
	  mkdir -p _build/html/$$lang && cp _build/latex/$$lang/repro-report-$$lang.pdf _build/html/$$lang/; \
	done

# Screenshots of the front page, the matrix and a chapter (both languages, 1280 and 390 px) and
# of the PDFs' first pages, into _build/screens/: what to look at before calling a page done
# (after make html; the PDFs' pages after make pdf)
.PHONY: screens
screens: venv
	$(ASIDE) $(PY) scripts/screens.py

site-check: venv system
	SITE_DIR=_build/html $(ASIDE) $(PY) -m pytest -q tests/test_site.py

# The tests that measure run one at a time, alone on the machine; then the rest, on every
# core, aside of any measuring run (one worker per test file: a file's fixtures build once).
# With SITE_DIR=_build/html in the environment, the browser tests check that build instead
# of building their own (CI).
# (CI runs the two halves as steps of their own, the second beside the images' tests.)
test: venv image
	@$(MAKE) --no-print-directory test-measuring
	@$(MAKE) --no-print-directory test-aside

# CI's canary (repro/canary.py): judges stored results only, measures nothing
canary: venv
	$(PY) -m repro canary --pg $(firstword $(PG_LIST))

test-measuring: venv image
	$(PY) scripts/binaries.py 11 9.6  # on local clusters, the servers beside the run's: partitions' 11, semaphores' 9.6
	IMAGE_MAJORS="$(PG_LIST)" $(PY) -m pytest -m measures

test-aside: venv
	IMAGE_MAJORS="$(PG_LIST)" $(ASIDE) $(PY) -m pytest -m "not measures" -n auto --dist loadfile

# the images' own tests on every image present (the official image's interface, features)
test-images: venv
	$(ASIDE) $(PY) -m pytest -q tests/test_images.py

# CLIENT=local beside an existing server (DSN=...): this machine's pgbench and psql, no engine or image
# SERVER=local: clusters of this machine's PostgreSQL binaries (PG_BINDIR_<major>, PG_BINDIR, Debian's,
# make binaries'), no engine
NO_ENGINE = $(or $(and $(DSN),$(filter local,$(CLIENT))),$(filter local,$(SERVER)))
repro-%: venv $(if $(NO_ENGINE),,engine)
	$(if $(NO_ENGINE),,@needed=$$($(NEEDED) --only $*) && scripts/ensure-images.sh $$needed)
	$(PY) -m repro run $* --scale $(SCALE) --pg $(PG) $(if $(DSN),--dsn "$(DSN)") $(if $(SERVER_CPUS),--server-cpus $(SERVER_CPUS)) $(if $(CLIENT),--client $(CLIENT)) $(if $(SERVER),--server $(SERVER)) $(if $(WAIT),--wait)
	$(PY) -m repro check $* --scale $(SCALE) $(if $(DSN),--existing,$(if $(filter local,$(SERVER)),--local,--pg $(PG)))

archive: venv
	$(PY) -m repro archive $(if $(MACHINE),--machine $(MACHINE))

# actionlint from the Go module proxy, into _build/bin (Go: the machine's, or Debian's golang-go)
ACTIONLINT := _build/bin/actionlint
$(ACTIONLINT):
	@command -v go > /dev/null || scripts/install-system.sh golang-go
	GOBIN=$(CURDIR)/_build/bin $(ASIDE) go install github.com/rhysd/actionlint/cmd/actionlint@v1.7.12

lint-workflow: $(ACTIONLINT)
	$(ACTIONLINT) .github/workflows/*.yml

gettext: venv
	$(ASIDE) $(VENV)/bin/sphinx-build -c . -q -b gettext docs _build/gettext

intl: gettext
	$(VENV)/bin/sphinx-intl update -p _build/gettext -l en -d locale --line-width=-1

# The catalogue check reruns only when a page, a catalogue or the check itself changed.
PO_INPUTS := $(shell find docs locale -name '*.md' -o -name '*.po') conf.py scripts/check_po.py
check-po: _build/.po-checked
_build/.po-checked: $(PO_INPUTS) | venv
	@$(ASIDE) $(PY) scripts/check_po.py
	@mkdir -p _build && touch $@

clean:
	rm -rf _build
