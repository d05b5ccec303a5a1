#!/usr/bin/env bash
# Names that XML cannot hold (U+FFFE, U+FFFF, controls) or that Graphviz
# would decode ("&#xFFFF;") still give XML a parser accepts: the SVG of
# `dump --svg`, the DOT drawn by Graphviz's own dot, the SVG inside the HTML
# report's data, and the JUnit of `check`. Parsed with python3's
# xml.dom.minidom (expat).
#   hostile_names_xml.sh GRAPHSCOPE ROOT WORK_DIR
set -uo pipefail
gs=$1 root=$2 work=$3
rm -rf "$work"; mkdir -p "$work"; cd "$work" || exit 1
g=$root/tests/data/derived/hostile_names.json
status=0
fail() { echo "FAIL $*"; status=1; }
parses() {  # parses NAME FILE: FILE is well-formed XML
  python3 -c 'import sys, xml.dom.minidom; xml.dom.minidom.parse(sys.argv[1])' "$2" 2> "$1.why" ||
    fail "$1: not XML: $(tail -n 1 "$1.why")"
}

"$gs" dump "$g" --svg -o dump.svg || fail "dump --svg: exit $?"
parses dump_svg dump.svg
if command -v dot > /dev/null; then
  "$gs" dump "$g" --dot | dot -Tsvg > dot.svg || fail "dot refused graphscope's DOT"
  parses dot_svg dot.svg
fi
"$gs" report "$g" -o report.html || fail "report: exit $?"
python3 - report.html > report.svg << 'PY' || fail "report: $(cat report.why 2> /dev/null)"
import json, sys
page = open(sys.argv[1], "rb").read()
text = page.decode("utf-8")  # strict: invalid UTF-8 fails here
bad = [c for c in text if 0x7f <= ord(c) <= 0x9f or ord(c) in (0xfffe, 0xffff) or (ord(c) < 0x20 and c not in "\t\n\r")]
if bad:
    open("report.why", "w").write("the page holds U+%04X raw" % ord(bad[0]))
    sys.exit(1)
open_tag = '<script type="application/json" id="gs-data">'
a = text.index(open_tag) + len(open_tag)
data = json.loads(text[a:text.index("</script>", a)])
sys.stdout.write(data["graphs"][0]["svg"])
PY
parses report_svg report.svg
"$gs" check "$g" --rules "$root/tests/data/derived/hostile_names.rules" --junit check.xml > /dev/null
[ $? -eq 1 ] || fail "check: expected exit 1 (the rules fail)"
parses junit check.xml
[ $status -eq 0 ] && echo "every XML output of hostile names parses"
exit $status
