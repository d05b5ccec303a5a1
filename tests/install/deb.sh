#!/usr/bin/env bash
# The Debian package, made and used as a user would:
#   deb.sh BUILD_DIR WORK_DIR SOURCE_DIR
# cpack -G DEB, then: its control fields (Depends from dpkg-shlibdeps),
# stripped ELF files, the compressed manual and the copyright file; then
# unpacked into a fresh directory tree, where graphscope --version and a
# dump run from it. Skipped (77) without dpkg-deb unless
# GRAPHSCOPE_REQUIRE_PACKAGE is set.
set -euo pipefail
build=$1 work=$2 src=$3
if ! command -v dpkg-deb >/dev/null || ! command -v dpkg-shlibdeps >/dev/null; then
  echo "no dpkg-deb/dpkg-shlibdeps (sudo apt-get install dpkg-dev)"
  [ -n "${GRAPHSCOPE_REQUIRE_PACKAGE:-}" ] && exit 1 || exit 77
fi
fail() { echo "FAIL: $*" >&2; exit 1; }
rm -rf "$work"; mkdir -p "$work"
(cd "$build" && cpack -G DEB -B "$work/out" > "$work/cpack.log" 2>&1) || { cat "$work/cpack.log"; fail "cpack -G DEB failed"; }
deb=$(ls "$work"/out/graphscope_*.deb)
echo "package: $(basename "$deb") ($(du -k "$deb" | cut -f1) KiB)"
dpkg-deb -f "$deb" Package Version Architecture Depends Section
depends=$(dpkg-deb -f "$deb" Depends)
for p in libc6 libstdc++6 libgvc6 libcgraph6; do
  echo "$depends" | grep -q "\b$p\b" || fail "Depends lacks $p: $depends"
done
root=$work/root
dpkg-deb -x "$deb" "$root"
for f in usr/bin/graphscope usr/share/man/man1/graphscope.1.gz usr/share/doc/graphscope/copyright \
         usr/include/graphscope/graphscope.h; do
  [ -e "$root/$f" ] || fail "not in the package: $f"
done
gzip -t "$root/usr/share/man/man1/graphscope.1.gz" || fail "the manual is not gzip"
[ ! -e "$root/usr/share/man/man1/graphscope.1" ] || fail "an uncompressed manual is in the package"
head -1 "$root/usr/share/doc/graphscope/copyright" | grep -q copyright-format || fail "copyright is not in Debian's format"
elf=0
while IFS= read -r f; do
  if head -c4 "$f" | grep -q 'ELF'; then
    elf=$((elf + 1))
    if readelf -S "$f" | grep -qE '\.symtab|\.debug_info'; then fail "not stripped: ${f#"$root"/}"; fi
  fi
done < <(find "$root" -type f)
echo "$elf ELF files, all stripped"
"$root/usr/bin/graphscope" --version
"$root/usr/bin/graphscope" dump "$src/tests/data/captures/forkjoin.json" | head -3
"$root/usr/bin/graphscope" dump --json "$src/tests/data/captures/forkjoin.json" | grep -q '"graphscope_version"' ||
  fail "the packaged dump names no version"
echo "package ok"
