#!/usr/bin/env bash
# Make the images of MAJORS available (images/ensure.sh) and, with --control, the semaphores
# chapter's control (images/semaphores/ensure.sh), by two workers side by side: one builds
# 15 and then the control, which builds on 15's image and is mostly a compile (CPU); the
# other builds the other majors, which are mostly downloads and unpacking. Offline images
# build on one base per Debian suite (images/base.sh), which the first image of its suite
# makes: the other worker takes first one major of each suite it has not seen, so the
# bases are made side by side, then the rest. A worker that is done takes the next major
# nobody has taken, so neither waits while the other has a queue. Each build is a stage
# (scripts/stage.sh) and goes aside of any measuring run (scripts/aside.sh); each base and
# image prints its own time. With every image present, each only says so. Here and not in
# images/: every file there is in the recipe.
# Usage: scripts/ensure-images.sh [--control] MAJOR...
set -uo pipefail
cd "$(dirname "$0")/.."
control=0
if [ "${1:-}" = --control ]; then control=1; shift; fi
[ $# -gt 0 ] || [ $control = 1 ] || { echo "usage: scripts/ensure-images.sh [--control] MAJOR..." >&2; exit 2; }

one() { scripts/stage.sh "image $1" scripts/aside.sh images/ensure.sh "$1"; }

. images/lib.sh
first=0; rest=(); later=(); seen=" "
for m in "$@"; do [ "$m" != 15 ] || { first=1; seen=" $(base_suite 15) "; }; done
for m in "$@"; do  # one major of each suite first, then the others
  [ "$m" != 15 ] || continue
  suite=$(base_suite "$m" || echo "$m")
  case "$seen" in
    *" $suite "*) later+=("$m") ;;
    *) rest+=("$m"); seen+="$suite " ;;
  esac
done
rest+=(${later[@]+"${later[@]}"})

taken=$(mktemp -d)
trap 'rm -rf "$taken"' EXIT
queue() {  # build each major of the rest that no worker has taken yet (mkdir: atomic)
  local m
  for m in "${rest[@]}"; do
    mkdir "$taken/$m" 2> /dev/null || continue
    one "$m" || return 1
  done
}

{ { [ $first = 0 ] || one 15; } \
  && { [ $control = 0 ] || scripts/stage.sh "image semaphores control" scripts/aside.sh images/semaphores/ensure.sh; } \
  && queue
} & chain=$!
status=0
queue || status=1
wait $chain || status=1
exit $status
