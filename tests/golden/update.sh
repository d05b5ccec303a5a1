#!/usr/bin/env bash
# Rewrites the expected output of golden cases from the current build: run it
# after an intended change of output, then read the diff before committing.
#   tests/golden/update.sh [BUILD_DIR] [CASE...]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/build}; shift || true
gs=$build/apps/graphscope
cases=("$@"); [ ${#cases[@]} -gt 0 ] || cases=("$root"/tests/golden/*.case)
for c in "${cases[@]}"; do
  header=$(sed '/^--- stdout$/,$d' "$c")
  args=$(printf '%s\n' "$header" | sed -n 's/^args: *//p')
  has_err=$(grep -c '^--- stderr$' "$c" || true)
  set +e
  # shellcheck disable=SC2086
  out=$(cd "$root" && "$gs" $args 2>/tmp/golden_err; echo "rc=$?")
  set -e
  rc=${out##*rc=}; out=${out%rc=*}
  {
    printf '%s\n' "$header" | sed "s/^exit: .*/exit: $rc/"
    printf -- '--- stdout\n%s' "$out"
    if [ "$has_err" != 0 ]; then printf -- '--- stderr\n'; cat /tmp/golden_err; fi
  } > "$c.new"
  mv "$c.new" "$c"
  echo "updated $(basename "$c") (exit $rc)"
done
