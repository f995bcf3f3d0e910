#!/usr/bin/env bash
# Debian packages the project needs. As root on Debian: installs what is missing.
# Elsewhere: names what is missing and fails, so nothing half-works silently.
#   docker.io    the Docker engine (scripts/ensure-docker.sh starts it)
#   mmdebstrap   offline PostgreSQL images (images/build.sh)
#   gettext      msgfmt, to check the English catalogue
#   plantuml     diagrams on the pages (sphinxcontrib-plantuml)
#   fonts-noto-cjk  Japanese labels in the charts
#   chromium     the browser test of the built site
set -euo pipefail
packages=(docker.io mmdebstrap gettext plantuml fonts-noto-cjk chromium)
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
