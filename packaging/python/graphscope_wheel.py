"""The PEP 517 backend of pyproject.toml: `pip install .` builds graphscope
with CMake and writes the wheel `cudagraphscope`.

In the tree (backend-path) and with no build requirements, because our
machines reach no Python package index: pip needs nothing but this file, the
standard library, CMake and a compiler, so `pip install .` works offline and
the same command works with an index. What it does:

 1. configures a build directory (Release, no tests, no benchmarks), or
    reuses one already built (config setting build-dir, or the environment
    variable GRAPHSCOPE_WHEEL_BUILD_DIR: CI builds once), and builds the
    installed targets;
 2. `cmake --install --strip` into a staging prefix, which becomes the
    package's cudagraphscope/_native/ (bin/graphscope, lib/<multiarch>/:
    libgraphscope.so.0, libgraphscope_inspect.so.0, graphscope/ with the live,
    injection and preload libraries; share/: the manual, the JSON Schemas);
 3. bundles the libraries the CLI and the C API need that a manylinux
    system does not promise (Graphviz's, with its layout and SVG plugins and
    their configuration; libltdl, expat, zlib) beside ours: our objects carry
    an $ORIGIN-relative DT_RPATH, which covers their dependencies too.
    CUDA's libraries are left out: they come from the CUDA toolkit and driver;
 4. tags the wheel py3-none-manylinux_X_Y_<arch>: no Python extension
    module inside (the package uses ctypes and runs the CLI), so any Python 3;
    X.Y the glibc its ELF files need (their highest GLIBC_ symbol version,
    raised to the first glibc shipped with a libstdc++ that has their highest
    GLIBCXX_ version);
 5. writes the wheel: the Python package from python/cudagraphscope, the
    staging prefix, the manual again as data (share/man/man1, so that `man
    graphscope` finds it in a venv), METADATA, WHEEL, entry_points.txt (the
    `graphscope` console script) and RECORD with sha256.

Without a CUDA toolkit, CMake builds the offline part (dump, diff, check,
report, offline profile, ranks) and this says so.
"""
from __future__ import annotations

import base64
import csv
import hashlib
import io
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
import zipfile
from typing import Any, Dict, List, Optional, Sequence, Set, Tuple

NAME = "cudagraphscope"
# The targets `cmake --install` installs (those this configuration has).
INSTALLED_TARGETS = ["graphscope", "graphscope_c", "graphscope_inspect_shared", "graphscope_man",
                     "graphscope_changelog", "graphscope_live", "graphscope_capture_shared", "graphscope_inject",
                     "graphscope_preload"]
# What any manylinux system has (PEP 600's list): never bundled.
SYSTEM_LIBRARIES = re.compile(r"^(ld-linux.*|libc|libm|libdl|librt|libpthread|libresolv|libutil|libnsl|libcrypt|"
                              r"libstdc\+\+|libgcc_s|linux-vdso)\.so")
# Of the CUDA toolkit or driver: never bundled (the live parts load them).
CUDA_LIBRARIES = re.compile(r"^(libcuda|libcudart|libcupti|libnvidia|libnvrtc|libnvperf)")
# Graphviz's plugins graphscope uses: the dot layout, and the core renderers (SVG).
GRAPHVIZ_PLUGINS = ("libgvplugin_dot_layout.so.6", "libgvplugin_core.so.6")
# The first glibc of a distribution whose libstdc++ has GLIBCXX_3.4.N
# (auditwheel's manylinux policies): 3.4.29 GCC 11 (AlmaLinux 9, glibc
# 2.34), 3.4.30 GCC 12 (Ubuntu 22.04, glibc 2.35), 3.4.31 GCC 13, 3.4.32
# GCC 13.2 and 3.4.33 GCC 14 (Ubuntu 24.04, glibc 2.39).
GLIBCXX_FLOOR = {29: (2, 34), 30: (2, 35), 31: (2, 39), 32: (2, 39), 33: (2, 39)}


def _log(message: str) -> None:
    sys.stderr.write("cudagraphscope: %s\n" % message)
    sys.stderr.flush()


def _source() -> str:
    return os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _version(source: str) -> str:
    with open(os.path.join(source, "CMakeLists.txt"), encoding="utf-8") as f:
        m = re.search(r"project\(graphscope VERSION ([0-9.]+)", f.read())
    if not m:
        raise RuntimeError("CMakeLists.txt has no project(graphscope VERSION ...)")
    version = m.group(1)
    with open(os.path.join(source, "python", NAME, "_version.py"), encoding="utf-8") as f:
        m = re.search(r'__version__ = "([^"]+)"', f.read())
    if not m or m.group(1) != version:
        raise RuntimeError("python/%s/_version.py says %s, CMakeLists.txt %s: make them agree"
                           % (NAME, m.group(1) if m else "nothing", version))
    return version


def _project(source: str) -> Dict[str, Any]:
    """pyproject.toml's [project] table."""
    try:
        import tomllib
    except ImportError:  # Python < 3.11
        raise RuntimeError("building %s needs Python 3.11 or newer (tomllib); the wheel itself installs on "
                           "Python 3.9 or newer" % NAME) from None
    with open(os.path.join(source, "pyproject.toml"), "rb") as f:
        return dict(tomllib.load(f)["project"])


def _run(argv: Sequence[str], **kwargs: object) -> None:
    _log("$ " + " ".join(argv))
    subprocess.run(list(argv), check=True, **kwargs)  # type: ignore[call-overload]


def _setting(config_settings: Optional[Dict[str, Any]], key: str, env: str) -> Optional[str]:
    value = (config_settings or {}).get(key)
    if isinstance(value, list):
        value = value[-1] if value else None
    return str(value) if value else os.environ.get(env) or None


def _build(source: str, config_settings: Optional[Dict[str, Any]]) -> str:
    """Configures (unless reused) and builds; returns the build directory."""
    if not shutil.which("cmake"):
        raise RuntimeError("building %s needs CMake 3.22 or newer and a C++17 compiler (on Debian: "
                           "scripts/install-deps, or sudo apt-get install cmake g++)" % NAME)
    given = _setting(config_settings, "build-dir", "GRAPHSCOPE_WHEEL_BUILD_DIR")
    jobs = _setting(config_settings, "jobs", "GRAPHSCOPE_WHEEL_JOBS") or str(os.cpu_count() or 2)
    if given:
        build = os.path.abspath(given)
        if not os.path.exists(os.path.join(build, "CMakeCache.txt")):
            raise RuntimeError("build-dir %s is no configured CMake build directory" % build)
        _log("reusing the build directory %s" % build)
    else:
        build = os.path.join(source, "build-wheel")
        argv = ["cmake", "-S", source, "-B", build, "-DCMAKE_BUILD_TYPE=Release", "-DGRAPHSCOPE_TESTS=OFF",
                "-DGRAPHSCOPE_BENCH=OFF"]
        if shutil.which("ccache"):
            argv += ["-DCMAKE_C_COMPILER_LAUNCHER=ccache", "-DCMAKE_CXX_COMPILER_LAUNCHER=ccache"]
        extra = _setting(config_settings, "cmake-args", "GRAPHSCOPE_WHEEL_CMAKE_ARGS")
        if extra:
            argv += extra.split()
        _run(argv, stdout=sys.stderr)
    listing = subprocess.run(["cmake", "--build", build, "--target", "help"], check=True, stdout=subprocess.PIPE,
                             universal_newlines=True).stdout
    have = set(re.findall(r"^\.\.\. (\S+)", listing, re.M))
    targets = [t for t in INSTALLED_TARGETS if t in have]
    _run(["cmake", "--build", build, "-j", jobs, "--target"] + targets, stdout=sys.stderr)
    if "graphscope_inject" not in have:
        _log("built WITHOUT the CUDA parts (no CUDA toolkit with CUPTI found): the wheel has the offline "
             "commands (dump, diff, check, report, profile --graph, ranks); capture, --exec and graph_data() "
             "say 'built without CUDA'. Install the CUDA toolkit (13.0 or newer) in /usr/local/cuda for them.")
    return build


def _is_elf(path: str) -> bool:
    with open(path, "rb") as f:
        return f.read(4) == b"\x7fELF"


def _elf_files(root: str) -> List[str]:
    out = []
    for d, _, files in os.walk(root):
        for name in files:
            p = os.path.join(d, name)
            if not os.path.islink(p) and _is_elf(p):
                out.append(p)
    return sorted(out)


def _needed_paths(elf: str) -> Dict[str, str]:
    """The soname -> path the dynamic loader resolves for elf, here."""
    p = subprocess.run(["ldd", elf], stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True)
    found = {}
    for line in p.stdout.splitlines():
        m = re.match(r"\s*(\S+) => (\S+) \(", line)
        if m:
            found[m.group(1)] = m.group(2)
        elif "=> not found" in line:
            found[line.split()[0]] = ""
    return found


def _debian_package(path: str) -> Optional[str]:
    if not shutil.which("dpkg"):
        return None
    for candidate in (path, os.path.realpath(path)):
        p = subprocess.run(["dpkg", "-S", candidate], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                           universal_newlines=True)
        if p.returncode == 0 and p.stdout:
            return p.stdout.split(":")[0].strip()
    return None


def _bundle(prefix: str, libdir: str) -> List[str]:
    """Copies into libdir the libraries (and Graphviz's plugins) the ELF
    files of prefix need beyond the system's and CUDA's; returns what it
    copied, by name."""
    own = {os.path.basename(p) for p in _elf_files(prefix)}
    copied: Dict[str, str] = {}
    missing: Set[str] = set()
    queue = _elf_files(prefix)
    gvc = None
    while queue:
        elf = queue.pop()
        for soname, path in _needed_paths(elf).items():
            if SYSTEM_LIBRARIES.match(soname) or CUDA_LIBRARIES.match(soname) or soname in own:
                continue
            if soname in copied:
                continue
            if not path:
                missing.add(soname)
                continue
            target = os.path.join(libdir, soname)
            shutil.copy2(os.path.realpath(path), target)
            os.chmod(target, 0o755)
            copied[soname] = path
            queue.append(target)
            if soname.startswith("libgvc.so"):
                gvc = path
    if missing:
        raise RuntimeError("libraries graphscope needs are not found here: %s" % ", ".join(sorted(missing)))
    if gvc:
        # Graphviz looks for its plugins in graphviz/ beside libgvc, listed in
        # the configuration file `dot -c` wrote there (config6a for 2.43).
        system = os.path.join(os.path.dirname(os.path.realpath(gvc)), "graphviz")
        plugins = os.path.join(libdir, "graphviz")
        os.makedirs(plugins, exist_ok=True)
        for name in GRAPHVIZ_PLUGINS:
            src = os.path.join(system, name)
            if not os.path.exists(src):
                raise RuntimeError("Graphviz's plugin %s is not in %s (sudo apt-get install libgraphviz-dev)"
                                   % (name, system))
            shutil.copy2(os.path.realpath(src), os.path.join(plugins, name))
            copied["graphviz/" + name] = src
            for soname, path in _needed_paths(src).items():
                if not (SYSTEM_LIBRARIES.match(soname) or soname in copied or soname in own):
                    raise RuntimeError("Graphviz's plugin %s needs %s, which is not bundled" % (name, soname))
        configs = [c for c in os.listdir(system) if c.startswith("config")]
        if not configs:
            raise RuntimeError("no Graphviz plugin configuration (config6*) in %s: run `sudo dot -c`" % system)
        with open(os.path.join(system, configs[0]), encoding="utf-8") as f:
            text = f.read()
        with open(os.path.join(plugins, configs[0]), "w", encoding="utf-8") as f:
            f.write(_plugin_config(text, GRAPHVIZ_PLUGINS))
    # The licences of what travels with graphscope.
    docs = os.path.join(prefix, "share", "doc", "graphscope", "bundled")
    for path in sorted(set(copied.values())):
        package = _debian_package(path)
        if package is None:
            continue
        copyright_file = "/usr/share/doc/%s/copyright" % package.split(":")[0]
        if os.path.exists(copyright_file):
            os.makedirs(os.path.join(docs, package), exist_ok=True)
            shutil.copy2(copyright_file, os.path.join(docs, package, "copyright"))
    return sorted(copied)


def _plugin_config(text: str, keep: Sequence[str]) -> str:
    """Graphviz's plugin configuration with only the plugins in keep: a
    block per plugin library, from "libgvplugin_x.so.N name {" to "}"."""
    out: List[str] = []
    skipping = False
    for line in text.splitlines(keepends=True):
        m = re.match(r"^(\S+\.so\S*) \S+ \{", line)
        if m:
            skipping = os.path.basename(m.group(1)) not in keep
        if not skipping:
            out.append(line)
        if line.rstrip() == "}":
            skipping = False
    return "".join(out)


def _symbol_versions(elf: str) -> Set[str]:
    if not shutil.which("objdump"):
        return set()
    p = subprocess.run(["objdump", "-T", elf], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                       universal_newlines=True)
    return set(re.findall(r"\b((?:GLIBC|GLIBCXX|CXXABI)_[0-9.]+)\b", p.stdout))


def _platform_tag(prefix: str) -> Tuple[str, Dict[str, str]]:
    """manylinux_X_Y_<arch>, and the highest versions that decided it."""
    glibc: Tuple[int, ...] = (2, 17)
    glibcxx = 0
    highest = {"GLIBC": "", "GLIBCXX": ""}
    for elf in _elf_files(prefix):
        for v in _symbol_versions(elf):
            name, _, number = v.partition("_")
            parts = tuple(int(x) for x in number.split(".") if x.isdigit())
            if name == "GLIBC" and parts > glibc:
                glibc, highest["GLIBC"] = parts, v
            elif name == "GLIBCXX" and len(parts) == 3 and parts[2] > glibcxx:
                glibcxx, highest["GLIBCXX"] = parts[2], v
    floor = GLIBCXX_FLOOR.get(glibcxx, (2, 39) if glibcxx > 33 else (2, 17))
    tag_glibc = max(glibc[:2], floor)
    machine = os.uname().machine
    return "manylinux_%d_%d_%s" % (tag_glibc[0], tag_glibc[1], machine), highest


def _metadata(project: Dict[str, Any], version: str, source: str) -> str:
    lines = ["Metadata-Version: 2.1", "Name: %s" % project["name"], "Version: %s" % version,
             "Summary: %s" % project.get("description", "")]
    for url_name, url in dict(project.get("urls") or {}).items():
        lines.append("Project-URL: %s, %s" % (url_name, url))
    license_ = project.get("license")
    if isinstance(license_, dict) and "text" in license_:
        lines.append("License: %s" % license_["text"])
    if project.get("requires-python"):
        lines.append("Requires-Python: %s" % project["requires-python"])
    for c in project.get("classifiers") or []:
        lines.append("Classifier: %s" % c)
    if project.get("keywords"):
        lines.append("Keywords: %s" % ",".join(project["keywords"]))
    readme = project.get("readme")
    body = ""
    if isinstance(readme, str):
        with open(os.path.join(source, readme), encoding="utf-8") as f:
            body = f.read()
        lines.append("Description-Content-Type: text/markdown")
    return "\n".join(lines) + "\n\n" + body


def _record_hash(data: bytes) -> str:
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


class _Wheel:
    """A wheel written file by file, with its RECORD."""

    def __init__(self, path: str, epoch: int) -> None:
        self.zip = zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED)
        self.records: List[Tuple[str, str, str]] = []
        self.date = tuple(time.gmtime(max(epoch, 315532800))[:6])

    def add(self, arcname: str, data: bytes, mode: int = 0o644) -> None:
        info = zipfile.ZipInfo(arcname, self.date)  # type: ignore[arg-type]
        info.external_attr = (0o100000 | mode) << 16
        info.compress_type = zipfile.ZIP_DEFLATED
        self.zip.writestr(info, data)
        self.records.append((arcname, _record_hash(data), str(len(data))))

    def add_file(self, arcname: str, path: str) -> None:
        with open(path, "rb") as f:
            data = f.read()
        self.add(arcname, data, 0o755 if os.access(path, os.X_OK) else 0o644)

    def close(self, record_name: str) -> None:
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        for row in self.records:
            writer.writerow(row)
        writer.writerow((record_name, "", ""))
        info = zipfile.ZipInfo(record_name, self.date)  # type: ignore[arg-type]
        info.external_attr = (0o100644) << 16
        info.compress_type = zipfile.ZIP_DEFLATED
        self.zip.writestr(info, out.getvalue().encode())
        self.zip.close()


def _stage(build: str, staging: str) -> Tuple[str, List[str]]:
    """cmake --install into staging/_native; returns the library directory
    and what was bundled."""
    prefix = os.path.join(staging, "_native")
    _run(["cmake", "--install", build, "--prefix", prefix, "--strip"], stdout=sys.stderr)
    lib = os.path.join(prefix, "lib")
    libdir = next((os.path.dirname(p) for p in _elf_files(lib) if os.path.basename(p).startswith("libgraphscope.so")),
                  None)
    if libdir is None:
        raise RuntimeError("cmake --install put no libgraphscope.so.0 under %s" % lib)
    # Python's copy comes from the source tree; the CMake package and the
    # pkg-config files describe an install prefix, whose libraries a wheel
    # holds under their sonames only.
    for d in (os.path.join(lib, "python3"), os.path.join(libdir, "cmake"), os.path.join(libdir, "pkgconfig"),
              os.path.join(prefix, "share", "lintian")):
        shutil.rmtree(d, ignore_errors=True)
    # A wheel holds no symbolic links: each library once, under its soname.
    for d, _, files in os.walk(prefix):
        for name in files:
            p = os.path.join(d, name)
            if os.path.islink(p):
                target = os.path.realpath(p)
                os.unlink(p)
                if re.search(r"\.so\.[0-9]+$", name) and os.path.exists(target):
                    os.replace(target, p)
    for d, _, files in os.walk(prefix):
        for name in files:
            if re.search(r"\.so\.[0-9]+\.[0-9]+\.[0-9]+$", name):  # the real names, moved to the sonames
                os.unlink(os.path.join(d, name))
    bundled = _bundle(prefix, libdir)
    return libdir, bundled


def get_requires_for_build_wheel(config_settings: Optional[Dict[str, Any]] = None) -> List[str]:
    return []


def get_requires_for_build_sdist(config_settings: Optional[Dict[str, Any]] = None) -> List[str]:
    return []


def build_wheel(wheel_directory: str, config_settings: Optional[Dict[str, Any]] = None,
                metadata_directory: Optional[str] = None) -> str:
    source = _source()
    version = _version(source)
    project = _project(source)
    build = _build(source, config_settings)
    with tempfile.TemporaryDirectory(prefix="cudagraphscope-wheel-") as staging:
        libdir, bundled = _stage(build, staging)
        tag, highest = _platform_tag(os.path.join(staging, "_native"))
        _log("bundled: %s" % (", ".join(bundled) or "nothing"))
        _log("tag py3-none-%s: highest symbol versions %s, %s" % (tag, highest["GLIBC"] or "-",
                                                                   highest["GLIBCXX"] or "-"))
        name = "%s-%s-py3-none-%s.whl" % (NAME, version, tag)
        dist_info = "%s-%s.dist-info" % (NAME, version)
        data = "%s-%s.data" % (NAME, version)
        epoch = int(os.environ.get("SOURCE_DATE_EPOCH", "315532800"))
        os.makedirs(wheel_directory, exist_ok=True)
        wheel = _Wheel(os.path.join(wheel_directory, name), epoch)
        package = os.path.join(source, "python", NAME)
        for file in sorted(os.listdir(package)):
            if file.endswith(".py") or file == "py.typed":
                wheel.add_file("%s/%s" % (NAME, file), os.path.join(package, file))
        native = os.path.join(staging, "_native")
        for d, dirs, files in os.walk(native):
            dirs.sort()
            for file in sorted(files):
                p = os.path.join(d, file)
                wheel.add_file("%s/_native/%s" % (NAME, os.path.relpath(p, native)), p)
        man = os.path.join(native, "share", "man", "man1", "graphscope.1.gz")
        if os.path.exists(man):
            wheel.add_file("%s/data/share/man/man1/graphscope.1.gz" % data, man)
        wheel.add("%s/METADATA" % dist_info, _metadata(project, version, source).encode())
        wheel.add("%s/WHEEL" % dist_info, ("Wheel-Version: 1.0\nGenerator: graphscope_wheel (packaging/python)\n"
                                           "Root-Is-Purelib: false\nTag: py3-none-%s\n" % tag).encode())
        scripts = dict(project.get("scripts") or {})
        entry = "[console_scripts]\n" + "".join("%s = %s\n" % kv for kv in sorted(scripts.items()))
        wheel.add("%s/entry_points.txt" % dist_info, entry.encode())
        with open(os.path.join(source, "LICENSE"), "rb") as f:
            wheel.add("%s/LICENSE" % dist_info, f.read())
        wheel.close("%s/RECORD" % dist_info)
    _log("wrote %s" % name)
    return name


def build_sdist(sdist_directory: str, config_settings: Optional[Dict[str, Any]] = None) -> str:
    """The tracked files of the source tree (git ls-files), with PKG-INFO."""
    source = _source()
    version = _version(source)
    project = _project(source)
    base = "%s-%s" % (NAME, version)
    p = subprocess.run(["git", "-C", source, "ls-files", "-z"], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if p.returncode != 0:
        raise RuntimeError("an sdist is made from a git checkout (git ls-files): %s" % p.stderr.decode().strip())
    files = [f for f in p.stdout.decode().split("\0") if f and os.path.isfile(os.path.join(source, f))]
    os.makedirs(sdist_directory, exist_ok=True)
    name = base + ".tar.gz"
    with tarfile.open(os.path.join(sdist_directory, name), "w:gz", format=tarfile.PAX_FORMAT) as tar:
        for f in sorted(files):
            tar.add(os.path.join(source, f), arcname="%s/%s" % (base, f), recursive=False)
        info = tarfile.TarInfo("%s/PKG-INFO" % base)
        data = _metadata(project, version, source).encode()
        info.size = len(data)
        info.mode = 0o644
        tar.addfile(info, io.BytesIO(data))
    return name
