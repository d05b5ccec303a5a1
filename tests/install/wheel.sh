#!/usr/bin/env bash
# The Python wheel of pyproject.toml, made from this build directory and used
# as a user would:
#   wheel.sh SOURCE_DIR BUILD_DIR WORK_DIR
# - the wheel: built by the in-tree backend from BUILD_DIR (no second
#   compile), named cudagraphscope-VERSION-py3-none-manylinux_X_Y_ARCH.whl,
#   its RECORD's sha256 and sizes right, its ELF files carrying no path
#   outside the wheel and needing no library the wheel lacks beyond
#   manylinux's and CUDA's;
# - a fresh venv: `pip install --no-index` of it (offline), then
#   `graphscope --version`, `python -m cudagraphscope --version`, the manual
#   where `man` looks, the injection library where `capture --exec` looks;
# - the offline Python tests (tests/python) through the installed package,
#   its library and its CLI (GRAPHSCOPE_TEST_INSTALLED=1).
# Skipped (77) without python3's venv module unless GRAPHSCOPE_REQUIRE_PACKAGE is set.
set -euo pipefail
src=$1 build=$2 work=$3
py=/usr/bin/python3
[ -x "$py" ] || py=$(command -v python3)
if ! "$py" -c 'import ensurepip, venv' 2>/dev/null; then
  echo "no venv module for $py (sudo apt-get install python3-venv)"
  [ -n "${GRAPHSCOPE_REQUIRE_PACKAGE:-}" ] && exit 1 || exit 77
fi
fail() { echo "FAIL: $*" >&2; exit 1; }
rm -rf "$work"; mkdir -p "$work/dist"

# The wheel, from this build directory (the backend builds the installed
# targets, up to date here, and installs them).
(cd "$src" && GRAPHSCOPE_WHEEL_BUILD_DIR=$build "$py" -c '
import sys
sys.path.insert(0, "packaging/python")
import graphscope_wheel
print(graphscope_wheel.build_wheel(sys.argv[1]))' "$work/dist") > "$work/wheel.name" 2> "$work/wheel.log" ||
  { cat "$work/wheel.log"; fail "the backend did not build the wheel"; }
whl=$work/dist/$(cat "$work/wheel.name")
version=$(sed -n 's/^project(graphscope VERSION \([0-9.]*\).*/\1/p' "$src/CMakeLists.txt")
case $(basename "$whl") in
  cudagraphscope-"$version"-py3-none-manylinux_2_*_"$(uname -m)".whl) ;;
  *) fail "wheel named $(basename "$whl")" ;;
esac
echo "wheel: $(basename "$whl") ($(du -k "$whl" | cut -f1) KiB); $(grep -E '^cudagraphscope: (bundled|tag)' "$work/wheel.log" | tr '\n' ' ')"

# RECORD: every file once, with its sha256 and size.
"$py" - "$whl" <<'EOF' || fail "RECORD does not match the wheel"
import base64, csv, hashlib, io, sys, zipfile
z = zipfile.ZipFile(sys.argv[1])
names = [n for n in z.namelist() if not n.endswith("/RECORD")]
record = next(n for n in z.namelist() if n.endswith(".dist-info/RECORD"))
rows = {r[0]: r for r in csv.reader(io.StringIO(z.read(record).decode()))}
assert set(rows) == set(names) | {record}, set(rows) ^ (set(names) | {record})
for n in names:
    data = z.read(n)
    digest = "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    assert rows[n][1:] == [digest, str(len(data))], n
wheel = z.read(record.replace("RECORD", "WHEEL")).decode()
assert "Root-Is-Purelib: false" in wheel and "Tag: py3-none-manylinux_" in wheel, wheel
entry = z.read(record.replace("RECORD", "entry_points.txt")).decode()
assert "graphscope = cudagraphscope._cli:main" in entry, entry
EOF

# A fresh venv, offline.
"$py" -m venv "$work/v"
"$work/v/bin/pip" install --no-index --disable-pip-version-check -q "$whl" > "$work/pip.log" 2>&1 ||
  { cat "$work/pip.log"; fail "pip install of the wheel failed"; }
v=$work/v
site=$("$v/bin/python" -c 'import cudagraphscope, os; print(os.path.dirname(cudagraphscope.__file__))')
native=$site/_native
[ "$("$v/bin/graphscope" --version)" = "graphscope $version" ] || fail "v/bin/graphscope --version: $("$v/bin/graphscope" --version)"
[ "$("$v/bin/python" -m cudagraphscope --version)" = "graphscope $version" ] || fail "python -m cudagraphscope --version"
[ -f "$v/share/man/man1/graphscope.1.gz" ] || fail "the manual is not in the venv's share/man"
[ -f "$site/py.typed" ] || fail "no py.typed"
ls "$native"/share/graphscope/schemas/*.schema.json > /dev/null || fail "no JSON Schema in the package"
echo "venv: $("$v/bin/graphscope" --version); python -m cudagraphscope --version agrees; manual and schemas installed"

# graphscope's ELF files: no RPATH but $ORIGIN's, each dependency (and
# theirs: the loader's search runs through our DT_RPATH) found inside the
# wheel or among manylinux's and CUDA's libraries.
while IFS= read -r f; do
  rpath=$(readelf -d "$f" | sed -n 's/.*(\(RPATH\|RUNPATH\)).*\[\(.*\)\]/\2/p')
  case $rpath in ''|'$ORIGIN'*) ;; *) fail "${f#"$native"/} has RPATH $rpath" ;; esac
  ldd "$f" | awk '/=>/ {print $1, $3}' | while read -r soname path; do
    case $soname in
      libc.so*|libm.so*|libdl.so*|librt.so*|libpthread.so*|libutil.so*|libresolv.so*|libstdc++.so*|libgcc_s.so*|ld-linux*) ;;
      libcupti*|libcuda*|libnvidia*) ;;  # the CUDA toolkit's and the driver's
      *) case $path in "$native"/*) ;; *) echo "${f#"$native"/} loads $soname from $path" ;; esac ;;
    esac
  done
done < <(find "$native" -type f \( -name 'libgraphscope*' -o -path '*/bin/*' \)) > "$work/outside.txt"
[ ! -s "$work/outside.txt" ] || { cat "$work/outside.txt"; fail "libraries from outside the wheel"; }
if [ -d /usr/local/cuda ]; then
  ls "$native"/lib/*/graphscope/libgraphscope_inject.so "$native"/lib/*/graphscope/libgraphscope_live.so > /dev/null ||
    fail "built with CUDA, but the injection or live library is not in the wheel"
fi
# Pictures with the wheel's Graphviz alone: its plugins, not the system's.
LD_DEBUG=files "$v/bin/graphscope" dump --svg "$src/tests/data/captures/forkjoin.json" > "$work/fj.svg" 2> "$work/ld.log"
grep -q '</svg>' "$work/fj.svg" || fail "no SVG from the wheel's graphscope"
if grep -E 'file=.*libgvplugin' "$work/ld.log" | grep -v "$native" > /dev/null; then
  fail "Graphviz plugins loaded from outside the wheel: $(grep -E 'file=.*libgvplugin' "$work/ld.log" | head -2)"
fi
echo "ELF files: \$ORIGIN paths only, nothing loaded from outside the wheel but the system's and CUDA's"

# The offline Python tests, through the installed package alone.
(cd "$work" && env -u GRAPHSCOPE_LIBRARY -u GRAPHSCOPE_BINARY -u PYTHONPATH GRAPHSCOPE_TEST_INSTALLED=1 \
  PYTHONDONTWRITEBYTECODE=1 "$v/bin/python" -m unittest discover -s "$src/tests/python" 2>&1) > "$work/tests.log" ||
  { tail -40 "$work/tests.log"; fail "the offline Python tests failed through the wheel"; }
echo "offline Python tests through the wheel: $(tail -1 "$work/tests.log")"
echo "wheel ok"
