#!/usr/bin/env bash
# ctest's entry to the browser test: Debian's python3 (where python3-selenium
# lives), whatever python3 comes first on the PATH.
#   tests/browser/run.sh GRAPHSCOPE DATA_DIR OUT_DIR
set -euo pipefail
py=/usr/bin/python3
if [ ! -x "$py" ]; then
  echo "report_browser: /usr/bin/python3 is not installed"
  [ -n "${GRAPHSCOPE_REQUIRE_BROWSER:-}" ] && exit 1
  exit 77
fi
exec "$py" "$(dirname "$0")/report_browser.py" --graphscope "$1" --data "$2" --out "$3"
