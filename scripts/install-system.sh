#!/usr/bin/env bash
# Debian packages the project needs. As root on Debian (or Ubuntu): installs what is
# missing. Elsewhere: names what is missing and fails, so nothing half-works silently.
# Usage: install-system.sh [all|run|html|site|PACKAGE...]: `run` what measuring needs,
# `html` that and the HTML pages' tools (`make html`: no PDF, no browser), `site` what a
# build from stored results needs (a CI job's share), packages by name otherwise (e.g.
# golang-go for `make lint-workflow`).
#   docker.io    the Docker engine (scripts/ensure-docker.sh starts it), unless one is
#                installed already (a CI runner's)
#   mmdebstrap   offline PostgreSQL images (images/build.sh)
#   maven unzip xz-utils  the same, for zonky's server binaries (a .txz in a jar that
#                Maven's own client fetches by its coordinates)
#   gcc make libc6-dev bison flex dpkg-dev  the client programs that zonky does not pack,
#                compiled from Debian's source package (make binaries, scripts/client-programs.sh)
#   gettext      msgfmt, to check the English catalogue
#   plantuml graphviz  diagrams on the pages (sphinxcontrib-plantuml; without Graphviz,
#                PlantUML draws its error message instead of a deployment diagram)
#   fonts-noto-cjk  Japanese labels in the charts, the PDF's Japanese font
#   chromium     the browser test of the built site
#   texlive-* latexmk  the PDF of the report (Japanese through upLaTeX)
#   poppler-utils  reads the PDFs back: their check (scripts/check_pdf.py), page images
#   stress-ng    keeps a core busy for the verdict-stability benchmark under load
#   mecab-ipadic the IPA dictionary's word lists: the fulltext chapter's Japanese records
#   postgresql   a server the project does not start, for the test of runs against an
#                existing server (tests/existing_server.py starts a cluster of its own), and
#                its pgbench and psql, which such runs use with no Docker (--client local)
#   strace       eic's trace on local clusters (--server local), which make test runs
set -euo pipefail
engine=(docker.io)
command -v dockerd > /dev/null && ! dpkg-query -W docker.io > /dev/null 2>&1 && engine=()
run=("${engine[@]}" mmdebstrap maven unzip xz-utils mecab-ipadic gcc make libc6-dev bison flex dpkg-dev)
pages=(gettext plantuml graphviz fonts-noto-cjk)
pdf=(texlive-lang-japanese texlive-latex-recommended texlive-latex-extra texlive-plain-generic
     texlive-fonts-recommended tex-gyre latexmk poppler-utils)
case "${1:-all}" in
  all) packages=("${run[@]}" "${pages[@]}" "${pdf[@]}" chromium stress-ng postgresql strace) ;;
  run) packages=("${run[@]}") ;;
  html) packages=("${run[@]}" "${pages[@]}") ;;
  site) packages=("${pages[@]}" "${pdf[@]}") ;;
  *) packages=("$@") ;;
esac
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" = 0 ] && [ -f /etc/debian_version ]; then
  echo "installing Debian packages: ${missing[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" > /dev/null
  exit 0
fi
echo "error: missing packages: ${missing[*]} (install them, e.g. sudo apt-get install ${missing[*]})" >&2
exit 1
