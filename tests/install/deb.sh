#!/usr/bin/env bash
# The Debian package, made and used as a user would:
#   deb.sh BUILD_DIR WORK_DIR SOURCE_DIR
# cpack -G DEB, then: lintian (no error, no warning), its control fields
# (Depends from dpkg-shlibdeps), shlibs and the ldconfig trigger, libraries
# in the multiarch directory, stripped and hardened ELF files with no search
# path outside the package, the compressed manual and changelog and the
# copyright file; then unpacked into a fresh directory tree, where graphscope
# --version and a dump run from it. Skipped (77) without dpkg-deb (or
# lintian) unless GRAPHSCOPE_REQUIRE_PACKAGE is set.
set -euo pipefail
build=$1 work=$2 src=$3
if ! command -v dpkg-deb >/dev/null || ! command -v dpkg-shlibdeps >/dev/null || ! command -v lintian >/dev/null; then
  echo "no dpkg-deb/dpkg-shlibdeps/lintian (sudo apt-get install dpkg-dev lintian)"
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
multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || echo x86_64-linux-gnu)
for f in usr/bin/graphscope usr/share/man/man1/graphscope.1.gz usr/share/doc/graphscope/copyright \
         usr/share/doc/graphscope/changelog.gz usr/include/graphscope/graphscope.h \
         "usr/lib/$multiarch/libgraphscope.so.0" "usr/lib/$multiarch/libgraphscope_inspect.so.0"; do
  [ -e "$root/$f" ] || fail "not in the package: $f"
done
dpkg-deb -e "$deb" "$work/control"
grep -q '^libgraphscope 0 ' "$work/control/shlibs" || fail "no shlibs entry for libgraphscope.so.0: $(cat "$work/control/shlibs" 2>&1)"
grep -q 'ldconfig' "$work/control/triggers" || fail "no ldconfig trigger"
echo "shlibs: $(wc -l < "$work/control/shlibs") libraries; triggers: $(tr '\n' ' ' < "$work/control/triggers")"
# lintian: no error and no warning (overrides, each with its reason, are in
# packaging/lintian-overrides).
lintian --tag-display-limit 0 "$deb" > "$work/lintian.txt" 2>&1 || true
cat "$work/lintian.txt"
if grep -E '^[EW]: ' "$work/lintian.txt"; then fail "lintian reports errors or warnings"; fi
echo "lintian: $(grep -c '^[EW]: ' "$work/lintian.txt" || true) errors and warnings"
gzip -t "$root/usr/share/man/man1/graphscope.1.gz" || fail "the manual is not gzip"
[ ! -e "$root/usr/share/man/man1/graphscope.1" ] || fail "an uncompressed manual is in the package"
head -1 "$root/usr/share/doc/graphscope/copyright" | grep -q copyright-format || fail "copyright is not in Debian's format"
elf=0
while IFS= read -r f; do
  if head -c4 "$f" | grep -q 'ELF'; then
    elf=$((elf + 1))
    if readelf -S "$f" | grep -qE '\.symtab|\.debug_info'; then fail "not stripped: ${f#"$root"/}"; fi
    # No search path but the package's own ($ORIGIN): never /usr/local/cuda.
    rpath=$(readelf -d "$f" | sed -n 's/.*(\(RPATH\|RUNPATH\)).*\[\(.*\)\]/\2/p')
    case $rpath in ''|'$ORIGIN'*) ;; *) fail "${f#"$root"/} searches $rpath" ;; esac
    readelf -d "$f" | grep -q 'BIND_NOW\|FLAGS.*NOW' || fail "${f#"$root"/} is not linked with -z now"
    readelf -l "$f" | grep -q GNU_RELRO || fail "${f#"$root"/} has no RELRO"
  fi
done < <(find "$root" -type f)
echo "$elf ELF files, all stripped, hardened (RELRO, BIND_NOW), no search path outside the package"
"$root/usr/bin/graphscope" --version
"$root/usr/bin/graphscope" dump "$src/tests/data/captures/forkjoin.json" | head -3
"$root/usr/bin/graphscope" dump --json "$src/tests/data/captures/forkjoin.json" | grep -q '"graphscope_version"' ||
  fail "the packaged dump names no version"
echo "package ok"
