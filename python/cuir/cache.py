"""Compiled variant kernels, cached on disk by content.

An entry is a directory `<root>/kernels/<key>/` holding what `cuir-opt --lower` wrote (the library, its
manifest, the patched .cu, ...) and `entry.json` (the key's parts and every file's SHA-256), written last.
<root> is $XDG_CACHE_HOME/cuir (default ~/.cache/cuir, where cuir-opt also keeps its lift cache).

The key is the SHA-256 of: the kernel's sources (the CUDA file, its Source CuIR, the lift cache and the
headers the lowering copies), the variant text traced without its captured values (`defaults=False`:
values are kernel parameters, passed at each call, so new values reuse the kernel) or locations, the archs, the other pipeline
options, and the toolchain: cuir-opt's bytes and `--version`, clang's and ptxas's `--version`.

An entry is built in a temporary directory beside the entries and renamed into place, so another process
sees a whole entry or none; when two processes build one key, the first rename wins and the other uses it.
An entry that does not verify (missing or changed files, unreadable entry.json) is rebuilt with a warning.
"""
import hashlib
import json
import os
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import warnings

FORMAT = "cuir-kernel-cache-1"
ENTRY_FILE = "entry.json"
_ROOT = pathlib.Path(__file__).resolve().parents[2]


def cache_root():
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return pathlib.Path(base) / "cuir"


def sha256_file(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


# The tracer's ` loc("file.py":12:1)`: where the user wrote an op, which the generated code does not depend on.
_LOCATION = re.compile(r' loc\("(?:[^"\\]|\\.)*":\d+:\d+\)')


def strip_locations(variant_text):
    """The variant text without the user's source locations (so that a key does not depend on paths)."""
    return _LOCATION.sub("", variant_text)


# ---- toolchain identity -------------------------------------------------------------------------------

def _first_line(cmd):
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return None
    lines = [l.strip() for l in (r.stdout + r.stderr).splitlines() if l.strip()]
    return " | ".join(lines[:3]) if r.returncode == 0 else None


def find_clang():
    """clang++ as cuir-opt finds it: $CUIR_CLANG, clang++-22 on PATH, /usr/lib/llvm-22/bin/clang++."""
    for cand in (os.environ.get("CUIR_CLANG"), shutil.which("clang++-22"), "/usr/lib/llvm-22/bin/clang++"):
        if cand and os.access(cand, os.X_OK):
            return cand
    return None


def find_ptxas():
    """ptxas of the CUDA toolkit as cuir-opt finds it: $CUDA_PATH, $CUDA_HOME, PATH, /usr/local/cuda."""
    for root in (os.environ.get("CUDA_PATH"), os.environ.get("CUDA_HOME")):
        if root and os.access(os.path.join(root, "bin", "ptxas"), os.X_OK):
            return os.path.join(root, "bin", "ptxas")
    cand = shutil.which("ptxas") or "/usr/local/cuda/bin/ptxas"
    return cand if os.access(cand, os.X_OK) else None


_TOOLCHAIN = {}


def toolchain_identity(cuir_opt):
    """What identifies the compilers: cuir-opt's SHA-256 and --version, clang's and ptxas's --version.

    Memoised per process and per cuir-opt file (path, size, mtime): hashing a few MB and running three
    `--version`s costs about 50 ms once."""
    st = os.stat(cuir_opt)
    memo = (str(cuir_opt), st.st_size, st.st_mtime_ns, os.environ.get("CUIR_CLANG"),
            os.environ.get("CUDA_PATH"), os.environ.get("CUDA_HOME"))
    if memo not in _TOOLCHAIN:
        clang, ptxas = find_clang(), find_ptxas()
        _TOOLCHAIN[memo] = {
            "cuir-opt": sha256_file(cuir_opt),
            "cuir-opt --version": _first_line([str(cuir_opt), "--version"]),
            "clang": _first_line([clang, "--version"]) if clang else None,
            "ptxas": _first_line([ptxas, "--version"]) if ptxas else None,
        }
    return _TOOLCHAIN[memo]


_SOURCES = {}


def kernel_sources_identity(kernel_source):
    """SHA-256 of the kernel's CUDA source, its Source CuIR, the lift cache and the shared kernel headers."""
    kernel_source = pathlib.Path(kernel_source)
    files = [kernel_source, kernel_source.with_name("flash_fwd.cuir.mlir"), _ROOT / "kernels" / "lift-cache.json"]
    include = _ROOT / "kernels" / "include" / "cuir"
    files += sorted(include.glob("*")) if include.is_dir() else []
    ident = {}
    for f in files:
        if f.is_file():
            st = f.stat()
            memo = (str(f), st.st_size, st.st_mtime_ns)
            if memo not in _SOURCES:
                _SOURCES[memo] = sha256_file(f)
            ident[str(f.relative_to(_ROOT)) if _ROOT in f.parents else str(f)] = _SOURCES[memo]
    return ident


def make_key(parts):
    """The entry key of a JSON-able dict of key parts."""
    blob = json.dumps({"format": FORMAT, **parts}, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(blob.encode()).hexdigest()[:40]


# ---- progress -----------------------------------------------------------------------------------------

def run_with_progress(cmd, what, stream=None):
    """Run cmd, telling stderr what is built and for how long; on failure, raise with cuir-opt's output."""
    stream = stream or sys.stderr
    tty = hasattr(stream, "isatty") and stream.isatty()
    start = time.monotonic()
    stream.write(f"cuir: building {what} ...{'' if tty else chr(10)}")
    stream.flush()
    proc = subprocess.Popen([str(c) for c in cmd], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    output = []
    reader = threading.Thread(target=lambda: output.extend(proc.stdout), daemon=True)
    reader.start()
    last = start
    while proc.poll() is None:
        time.sleep(0.2)
        now = time.monotonic()
        if tty and now - last >= 1:
            stream.write(f"\rcuir: building {what} ... {now - start:.0f} s")
            stream.flush()
            last = now
        elif not tty and now - last >= 15:
            stream.write(f"cuir: still building {what} ({now - start:.0f} s)\n")
            stream.flush()
            last = now
    reader.join()
    proc.stdout.close()
    elapsed = time.monotonic() - start
    text = "".join(output)
    if proc.returncode != 0:
        stream.write(f"{chr(13) if tty else ''}cuir: building {what} failed after {elapsed:.1f} s; cuir-opt said:\n"
                     f"{text[-4000:]}\n")
        stream.flush()
        raise RuntimeError(f"cuir-opt failed building {what} (exit {proc.returncode}):\n{text[-4000:]}")
    stream.write(f"{chr(13) if tty else ''}cuir: built {what} in {elapsed:.1f} s\n")
    stream.flush()
    return text


# ---- entries ------------------------------------------------------------------------------------------

class KernelCache:
    """Entries under root/kernels, and the entries this process has already verified (in memory)."""

    _verified = {}  # (root, key) -> entry directory, shared by every KernelCache of the process

    def __init__(self, root=None):
        self.root = pathlib.Path(root) if root else cache_root()
        self.dir = self.root / "kernels"

    def entry_dir(self, key):
        return self.dir / key

    def lookup(self, key):
        """The verified entry directory of key, or None (a corrupt entry is removed with a warning)."""
        memo = (str(self.root), key)
        if memo in self._verified and self._verified[memo].is_dir():
            return self._verified[memo]
        path = self.entry_dir(key)
        if not path.exists():
            return None
        problem = self._problem(path, key)
        if problem is None:
            self._verified[memo] = path
            return path
        warnings.warn(f"cuir: cache entry {path} is corrupt ({problem}); rebuilding it", RuntimeWarning,
                      stacklevel=3)
        self._discard(path)
        return None

    def get_or_build(self, key, parts, build):
        """The entry directory of key; build(tmpdir) fills a new one if there is none (or it was corrupt)."""
        found = self.lookup(key)
        if found is not None:
            return found
        self.dir.mkdir(parents=True, exist_ok=True)
        tmp = pathlib.Path(tempfile.mkdtemp(prefix=f".tmp-{key[:12]}-", dir=self.dir))
        try:
            build(tmp)
            files = {str(p.relative_to(tmp)): sha256_file(p) for p in sorted(tmp.rglob("*")) if p.is_file()}
            (tmp / ENTRY_FILE).write_text(json.dumps({"format": FORMAT, "key": key, "parts": parts,
                                                      "files": files}, indent=1, sort_keys=True))
            try:
                os.rename(tmp, self.entry_dir(key))
            except OSError:  # another process renamed its entry first: use that one
                if self.lookup(key) is None:
                    raise
        finally:
            if tmp.exists():
                shutil.rmtree(tmp, ignore_errors=True)
        found = self.lookup(key)
        if found is None:
            raise RuntimeError(f"cuir: cache entry {self.entry_dir(key)} did not verify after building it")
        return found

    @staticmethod
    def _problem(path, key):
        try:
            meta = json.loads((path / ENTRY_FILE).read_text())
        except (OSError, ValueError) as e:
            return f"{ENTRY_FILE}: {e.__class__.__name__}: {e}"
        if not isinstance(meta, dict) or meta.get("key") != key or not isinstance(meta.get("files"), dict):
            return f"{ENTRY_FILE} does not describe this key"
        for name, digest in meta["files"].items():
            f = path / name
            if not f.is_file():
                return f"{name} is missing"
            if sha256_file(f) != digest:
                return f"{name} changed"
        return None

    def _discard(self, path):
        """Move a corrupt entry aside (atomic), then delete it."""
        aside = pathlib.Path(tempfile.mkdtemp(prefix=".corrupt-", dir=self.dir))
        try:
            os.rename(path, aside / "entry")
        except OSError:
            pass  # another process moved or rebuilt it
        shutil.rmtree(aside, ignore_errors=True)
        self._verified.pop((str(self.root), path.name), None)
