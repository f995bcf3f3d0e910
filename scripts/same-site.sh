#!/usr/bin/env bash
# Show that a refactor left the site as it was: build both languages from the stored results
# only (REPRO=cached, no build results) at REV and at AFTER (a revision, or the working tree),
# and compare the built pages. Sphinx's pickles (.doctrees) and the search index's record of
# the extension's code version differ by construction; everything else must be the same
# byte for byte.
# Usage: scripts/same-site.sh REV [AFTER]   (exit 0: no difference; the builds go aside of
# any measuring run: scripts/aside.sh)
set -euo pipefail
rev="${1:?usage: scripts/same-site.sh REV [AFTER]}"
root=$(cd "$(dirname "$0")/.." && pwd)
py="$root/.venv/bin/python"
work=$(mktemp -d)
trap 'for t in base after; do git -C "$root" worktree remove --force "$work/$t" > /dev/null 2>&1 || true; done
      rm -rf "$work"' EXIT
git -C "$root" worktree add -q --detach "$work/base" "$rev"
tree="$root"
if [ -n "${2:-}" ]; then
  git -C "$root" worktree add -q --detach "$work/after" "$2"
  tree="$work/after"
fi
mkdir -p "$work/empty"

build() {  # TREE OUT
  for lang in ja en; do
    (cd "$1" && REPRO=cached REPRO_RESULTS="$work/empty" PYTHONPATH="$1" \
      "$py" -m sphinx -c . -W --keep-going -n -q -b html -D "language=$lang" docs "$2/$lang")
  done
}
export -f build
export work py
"$root/scripts/aside.sh" bash -c "build '$work/base' '$work/before' & build '$tree' '$work/built' & wait"
strip() { sed -E 's/"repro\.site\.sphinxext":[0-9]+/"repro.site.sphinxext":0/' "$1"; }
status=0
while IFS= read -r file; do
  rel=${file#"$work/before/"}
  if [[ $rel == */searchindex.js ]]; then
    cmp -s <(strip "$file") <(strip "$work/built/$rel") || { echo "differs: $rel"; status=1; }
  else
    cmp -s "$file" "$work/built/$rel" || { echo "differs: $rel"; status=1; }
  fi
done < <(find "$work/before" -type f -not -path '*/.doctrees/*')
extra=$(cd "$work/built" && find . -type f -not -path '*/.doctrees/*' | while read -r f; do
  [ -e "$work/before/$f" ] || echo "$f"; done)
[ -z "$extra" ] || { echo "only after: $extra"; status=1; }
[ $status = 0 ] && echo "the site is the same at $rev and at ${2:-the working tree}"
exit $status
