#!/usr/bin/env bash
# man_agrees.sh GRAPHSCOPE MANPAGE
#
# Keeps `graphscope --help` and man/graphscope.1 in agreement:
#   - every subcommand `graphscope --help` lists has a ".SS NAME" section
#     under ".SH OPTIONS" in the man page, and every such section (but
#     "common", the options of graphscope itself) names a subcommand;
#   - every option (long --xxx and short -x) that `graphscope SUB --help`
#     lists is documented, as a tag of a ".TP" paragraph, in SUB's section
#     (or in "common", for -h/--help);
#   - every option the man page documents in SUB's section exists in
#     `graphscope SUB --help`, and every option in "common" exists in
#     `graphscope --help`.
# Options are declared whether or not graphscope was built with CUDA, so the
# test means the same on every build. Exit 0 when all agree, 1 naming each
# disagreement, 2 on a bad invocation.
set -u -o pipefail

if [ $# -ne 2 ]; then
  echo "usage: $0 GRAPHSCOPE MANPAGE" >&2
  exit 2
fi
gs=$1
man=$2
if [ ! -x "$gs" ]; then
  echo "$0: $gs is not an executable" >&2
  exit 2
fi
if [ ! -r "$man" ]; then
  echo "$0: cannot read $man" >&2
  exit 2
fi

# The names of a section of CLI11's help: the lines after a heading such as
# "Options:" ("OPTIONS:" in newer CLI11) up to the next heading, a blank line
# or a footer.
#
# help_options TEXT: the options of the "Options:" section, one a line. An
# option line starts with two spaces and a dash; its first column holds the
# names, "-o,--output" (or "-o,     --output" in newer CLI11), before the
# type and the description (which may mention other options: not taken).
# Option groups ("[Option Group: Live]") list their options the same way,
# indented further.
help_options() {
  awk '
    /^[A-Za-z][A-Za-z ]*:$/ { section = tolower($0); next }
    /^\[Option Group: / { section = "options:"; next }  # a group of options: listed indented below
    /^$/ { section = ""; next }
    section == "options:" && /^ +-/ {
      n = split($0, tok, /[ \t]+/)
      for (i = 2; i <= n; i++) {  # tok[1] is the empty string before the indent
        t = tok[i]
        if (t !~ /^--?[A-Za-z0-9][A-Za-z0-9_-]*(,--?[A-Za-z0-9][A-Za-z0-9_-]*)*,?$/) break
        more = (t ~ /,$/)
        m = split(t, names, ",")
        for (j = 1; j <= m; j++) if (names[j] != "") print names[j]
        if (!more) break
      }
    }
  ' <<<"$1" | sort -u
}

# help_subcommands TEXT: the subcommand names of the "Subcommands:" section.
help_subcommands() {
  awk '
    /^[A-Za-z][A-Za-z ]*:$/ { section = tolower($0); next }
    /^$/ { section = ""; next }
    section == "subcommands:" && /^  [A-Za-z]/ { print $1 }
  ' <<<"$1" | sort -u
}

# man_sections: every ".SS NAME" under ".SH OPTIONS".
man_sections() {
  awk '
    /^\.SH/ { in_options = ($2 == "OPTIONS"); next }
    in_options && /^\.SS/ { name = $0; sub(/^\.SS[ \t]+/, "", name); gsub(/"/, "", name); print name }
  ' "$man" | sort -u
}

# man_options SECTION: the options in the tags of the .TP (and .TQ)
# paragraphs of ".SS SECTION" under ".SH OPTIONS", troff escapes removed.
man_options() {
  awk -v want="$1" '
    /^\.SH/ { in_options = ($2 == "OPTIONS"); here = 0; tag = 0; next }
    !in_options { next }
    /^\.SS/ { name = $0; sub(/^\.SS[ \t]+/, "", name); gsub(/"/, "", name); here = (name == want); tag = 0; next }
    !here { next }
    /^\.(TP|TQ)([ \t]|$)/ { tag = 1; next }
    /^\.\\"/ { next }  # a comment line
    tag {
      tag = 0
      line = $0
      gsub(/\\f(\[[^]]*\]|\([A-Za-z0-9][A-Za-z0-9]|[A-Za-z0-9])/, "", line)  # font changes
      gsub(/\\-/, "-", line)
      gsub(/\\[&c]/, "", line)
      gsub(/\\\(em|\\\(en/, " ", line)
      sub(/^\.[A-Z]+[ \t]*/, "", line)  # the font macro of the tag
      gsub(/"/, " ", line)
      gsub(/,/, " ", line)
      n = split(line, tok, /[ \t]+/)
      for (i = 1; i <= n; i++)
        if (tok[i] ~ /^--[A-Za-z0-9][A-Za-z0-9_-]*$/ || tok[i] ~ /^-[A-Za-z0-9]$/) print tok[i]
    }
  ' "$man" | sort -u
}

# in_list WORD LIST: WORD is a line of LIST.
in_list() { grep -qxF -- "$1" <<<"$2"; }

failures=0
fail() {
  echo "FAIL: $*"
  failures=$((failures + 1))
}

top_help=$("$gs" --help 2>&1) || { echo "$0: $gs --help failed:" >&2; echo "$top_help" >&2; exit 1; }
subcommands=$(help_subcommands "$top_help")
sections=$(man_sections)
common=$(man_options common)
top_options=$(help_options "$top_help")

if [ -z "$subcommands" ]; then
  echo "$0: no subcommand found in $gs --help" >&2
  exit 1
fi
if [ -z "$top_options" ]; then
  echo "$0: no option found in $gs --help" >&2
  exit 1
fi

# graphscope's own options: in "common", and "common" only those.
for opt in $top_options; do
  in_list "$opt" "$common" || fail "graphscope --help lists $opt, the man page's OPTIONS/common does not"
done
for opt in $common; do
  in_list "$opt" "$top_options" || fail "the man page's OPTIONS/common documents $opt, graphscope --help does not list it"
done

for sec in $sections; do
  [ "$sec" = common ] && continue
  in_list "$sec" "$subcommands" || fail "the man page has OPTIONS/$sec, but graphscope has no subcommand $sec"
done

checked=0
for sub in $subcommands; do
  if ! in_list "$sub" "$sections"; then
    fail "graphscope has subcommand $sub, the man page has no OPTIONS/$sub section (.SS $sub)"
  fi
  sub_help=$("$gs" "$sub" --help 2>&1) || { fail "graphscope $sub --help failed: $sub_help"; continue; }
  sub_options=$(help_options "$sub_help")
  if [ -z "$sub_options" ]; then
    fail "no option found in graphscope $sub --help"
    continue
  fi
  documented=$(man_options "$sub")
  for opt in $sub_options; do
    checked=$((checked + 1))
    in_list "$opt" "$documented" && continue
    in_list "$opt" "$common" && continue
    fail "graphscope $sub --help lists $opt, the man page's OPTIONS/$sub does not document it"
  done
  for opt in $documented; do
    in_list "$opt" "$sub_options" ||
      fail "the man page's OPTIONS/$sub documents $opt, graphscope $sub --help does not list it"
  done
done

if [ "$failures" -ne 0 ]; then
  echo "$failures disagreement(s) between $gs --help and $man"
  exit 1
fi
echo "ok: $(wc -w <<<"$subcommands") subcommands, $checked options of their --help, all in $man and back"
exit 0
