"""The one writer for outputs: everything goes to a hidden temporary folder beside
the target, which replaces the target in a single atomic step only when every file
is written. A failed or killed compile leaves the previous output untouched.

On Linux the swap is renameat2(RENAME_EXCHANGE): old and new trade places at once,
so there is no instant at which `out/<name>` is missing. Elsewhere we fall back to
two renames (and a later compile puts the previous output back if one was killed
between them).

Concurrent compiles into one folder (POSIX flock, which the kernel drops when a
process dies, so a killed compile never holds a lock):
- each compile's temporary folder, `.<name>.tmp-<pid>-<random>`, is locked by its
  owner from creation to removal; another compile removes only temporary folders it
  can lock, i.e. whose owner has died, never one a live compile is writing;
- the parent folder (`out/`) is locked for the short steps that must not interleave:
  cleaning up, creating a temporary folder, and the swap (with `keep_others`, also
  reading the folder's manifest and carrying the other outputs' files over), so the
  last compile to swap leaves exactly its own complete output.

With `plan_digest` the folder gets `manifest.json`: which plan (sha256 of plan.json)
its files belong to and which output wrote which file. `keep_others` (`--only`) uses
it to replace exactly the files of the outputs written now and keep the rest, and to
refuse a folder that holds another plan's outputs rather than mix two plans.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import errno
import fcntl
import itertools
import json
import os
import shutil
import tempfile
from contextlib import contextmanager
from pathlib import Path
from collections.abc import Callable, Iterable, Iterator

from ..progress import stage

_RENAME_EXCHANGE = 2
_AT_FDCWD = -100

MANIFEST = "manifest.json"
MANIFEST_FORMAT = "clusterc-outputs"
MANIFEST_VERSION = 1
STAGING = ".staging"  # inside the temporary folder: outputs rendered by worker processes (staged())
# flock errors that mean "this file system cannot lock that", not "someone holds it" (NFS on a directory).
_NO_FLOCK = {errno.EBADF, errno.ENOLCK, errno.EOPNOTSUPP, errno.ENOTSUP, errno.EINVAL}


class OutputConflict(Exception):
    """The output folder holds files this compile must not mix its own with (user error, exit 2)."""

    def __init__(self, message: str, hint: str):
        super().__init__(message)
        self.message, self.hint = message, hint


def _exchange(a: Path, b: Path) -> bool:
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        fn = libc.renameat2
    except (OSError, AttributeError):
        return False
    fn.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    rc = fn(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE)
    return rc == 0


def _flock(fd: int, blocking: bool) -> bool | None:
    """True: locked; False: another process holds it; None: the file system cannot lock it."""
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | (0 if blocking else fcntl.LOCK_NB))
        return True
    except BlockingIOError:
        return False
    except OSError as exc:
        if exc.errno in _NO_FLOCK:
            return None
        raise


def _open_dir(path: Path) -> int | None:
    try:
        return os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    except OSError:
        return None  # gone already, or not a folder


@contextmanager
def _folder_lock(parent: Path, name: str) -> Iterator[None]:
    """Exclusive lock on the parent folder; where a directory cannot be flock'ed (NFS),
    on a lock file beside the target instead."""
    fd = os.open(parent, os.O_RDONLY | os.O_DIRECTORY)
    try:
        if _flock(fd, blocking=True) is None:
            os.close(fd)
            fd = os.open(parent / f".{name}.lock", os.O_RDWR | os.O_CREAT, 0o644)
            fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def _pid_alive(temp: Path, prefix: str) -> bool:
    pid = temp.name[len(prefix):].split("-")[0]
    if not pid.isdigit():
        return False
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _files_under(root: Path, entries: list[str]) -> list[str]:
    """Files (posix relative paths, sorted) at or below these top-level entries of root.
    Paths as strings: a pathlib object per folder cost 0.2 s for the 5,120 switch folders of
    a 131,072-GPU fabric's configs."""
    files = []
    for entry in entries:
        top = root / entry
        if not top.is_dir() or top.is_symlink():
            files.append(entry)
            continue
        start = len(os.fspath(top))  # os.walk gives every folder as top's path and what follows it
        for folder, _, names in os.walk(top):
            rel = entry + folder[start:].replace(os.sep, "/")
            files += [f"{rel}/{n}" for n in names]
    return sorted(files)


def _carry_over(old: Path, new: Path, skip: set[str]) -> None:
    """Hard-link (copy where links fail) every file of `old` into `new`, except `skip`
    and paths `new` already has (written by this compile)."""
    for folder, dirs, names in os.walk(old):
        dirs.sort()
        rel_folder = Path(folder).relative_to(old)
        for n in sorted(names):
            rel = (rel_folder / n).as_posix()
            dst = new / rel
            if rel in skip or os.path.lexists(dst):
                continue
            dst.parent.mkdir(parents=True, exist_ok=True)
            try:
                os.link(Path(folder) / n, dst, follow_symlinks=False)
            except OSError:
                shutil.copy2(Path(folder) / n, dst, follow_symlinks=False)


def in_batches(lines: Iterator[str], size: int = 1 << 16) -> Iterator[str]:
    """`lines` joined `size` at a time, for OutputDir.write_chunks: a sheet of 1.5 million rows
    is written without ever being one string (it and the list of its rows took 1.3 GB at
    524,288 GPUs), and without a write call per row."""
    while batch := list(itertools.islice(lines, size)):
        yield "".join(batch)


def _write_all(fd: int, data: bytes) -> None:
    """os.write may take less than it is given (signals, large writes): loop until all is out.
    One call for a small file, no view made (tens of thousands of files per compile)."""
    written = os.write(fd, data)
    if written == len(data):
        return
    view = memoryview(data)[written:]
    while view:
        view = view[os.write(fd, view):]


# how every output file is opened: created or emptied, never inherited by a child process
_CREATE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC


class OutputDir:
    """`with OutputDir(out / name) as w: w.write_text("a.csv", ...)` — all or nothing.

    With a manifest: `OutputDir(target, plan_digest=..., keep_others=...)`, and each
    output's files written inside `with w.output("cabling"): ...`."""

    def __init__(self, target: Path, plan_digest: Callable[[], str] | None = None, keep_others: bool = False):
        self.target = Path(target)
        self.tmp: Path | None = None
        self._digest_of = plan_digest
        self._digest: str | None = None
        self.keep_others = keep_others
        self._tmp_fd: int | None = None
        self._prefix = f".{self.target.name}.tmp-"
        self._files: dict[str, list[str]] = {}  # output -> files it wrote
        # output -> the files it wrote into its staging folder (staged()), as paths in the
        # folder: listed once, by the process that rendered it, for adopt()
        self.staged_files: dict[str, list[str]] = {}
        self._current: str | None = None
        self._touched: set[str] = set()  # top-level entries the current output wrote into (this process)
        self._made: set[str] = set()  # folders this process made (or found) below tmp

    # --- which plan, which files --------------------------------------------------------
    def _plan_digest(self) -> str:
        if self._digest is None:
            assert self._digest_of is not None
            self._digest = self._digest_of()
        return self._digest

    def _mergeable(self, complete: bool) -> dict | None:
        """The target's manifest when this compile may keep its other outputs (None: no
        folder yet, or an empty one); OutputConflict when that would mix two plans.
        `complete`: also require every file the manifest lists (at the swap)."""
        t = self.target
        hint = f"compile without --only to replace every output in {t}, or write to another -o folder"
        if not t.is_dir():
            return None
        if not any(t.iterdir()):
            return None
        try:
            manifest = json.loads((t / MANIFEST).read_text(encoding="utf-8"))
            if manifest.get("format") != MANIFEST_FORMAT or not isinstance(manifest.get("outputs"), dict):
                raise ValueError(f"not a {MANIFEST_FORMAT} manifest")
        except FileNotFoundError:
            raise OutputConflict(f"{t} holds files but no {MANIFEST}, so it is unknown which plan they belong to; "
                                 "--only would keep them beside this plan's outputs", hint) from None
        except (OSError, ValueError) as exc:
            raise OutputConflict(f"{t / MANIFEST} cannot be read ({exc}), so it is unknown which plan {t} holds", hint) from None
        theirs, ours = manifest.get("plan_sha256"), self._plan_digest()
        if theirs != ours:
            raise OutputConflict(f"{t} holds the outputs of another plan (plan sha256 {str(theirs)[:12]}, this one "
                                 f"{ours[:12]}); --only would mix two plans in one folder", hint)
        if complete:  # the outputs kept must be whole; those written now replace theirs anyway
            for output, files in manifest["outputs"].items():
                if output in self._files:
                    continue
                missing = [f for f in files if not os.path.lexists(t / f)]
                if missing:
                    raise OutputConflict(f"{t / missing[0]} (output {output}) is listed in {MANIFEST} but missing: "
                                         "the folder was changed after it was compiled", hint)
        return manifest

    @contextmanager
    def output(self, name: str) -> Iterator[None]:
        """Attribute what is written inside to output `name` (in the manifest). Outputs own
        whole top-level entries (`cabling.csv`, `configs/`): what an output creates there is its."""
        assert self.tmp is not None and self._current is None
        before = set(os.listdir(self.tmp))
        self._current, self._touched = name, set()
        try:
            yield
        finally:
            self._current = None
        new = sorted(set(os.listdir(self.tmp)) - before)
        # Writes from this process must land in the entries it created; forked workers'
        # writes (switch configs) are seen by the listing alone.
        foreign = sorted(self._touched - set(new))
        if foreign or MANIFEST in new:
            raise AssertionError(f"output {name} wrote into {foreign or MANIFEST}, which is not its own")
        self._files[name] = self._files.get(name, []) + _files_under(self.tmp, new)

    @contextmanager
    def staged(self, name: str) -> Iterator[None]:
        """Output `name` written into a folder of its own inside the temporary folder, for a
        worker process that renders it while others render theirs (each sees only its own
        entries, as output() requires); the parent then moves it in place with adopt(name)."""
        assert self.tmp is not None
        root = self.tmp
        (root / STAGING).mkdir(exist_ok=True)
        self.tmp = root / STAGING / name
        self.tmp.mkdir()
        before = self._files.pop(name, None)
        try:
            with self.output(name):
                yield
        finally:
            self.tmp = root
            # adopt() attributes the files, once and by their final paths (this process may
            # be the one that adopts); what output() listed is what adopt() would list again
            # after moving the entries, so it goes with them (staged_files)
            listed = self._files.pop(name, None)
            if listed is not None:
                self.staged_files[name] = listed
            if before is not None:
                self._files[name] = before

    def adopt(self, name: str) -> None:
        """Move the entries a worker wrote for output `name` (staged()) into the folder and
        attribute them to it, as output() does for what this process writes. The parent
        adopts in output order, so folder and manifest are what a serial compile gives."""
        assert self.tmp is not None
        staging = self.tmp / STAGING / name
        entries = sorted(os.listdir(staging))
        taken = [e for e in entries if os.path.lexists(self.tmp / e) or e == MANIFEST]
        if taken:
            raise AssertionError(f"output {name} wrote into {taken}, which is not its own")
        for entry in entries:
            os.rename(staging / entry, self.tmp / entry)
        staging.rmdir()
        listed = self.staged_files.pop(name, None)
        self._files[name] = self._files.get(name, []) + (_files_under(self.tmp, entries) if listed is None else listed)

    def end_staging(self) -> None:
        """After every staged output is adopted: the (empty) staging folder goes."""
        assert self.tmp is not None
        if (self.tmp / STAGING).is_dir():
            (self.tmp / STAGING).rmdir()

    def _manifest_text(self, old: dict | None) -> str:
        outputs = dict(old["outputs"]) if old else {}
        written = {f for files in self._files.values() for f in files}
        for output in list(outputs):
            if output in self._files:
                del outputs[output]
            else:  # a file an output written now took over no longer belongs to its old owner
                outputs[output] = [f for f in outputs[output] if f not in written]
        outputs.update(self._files)
        manifest = {"format": MANIFEST_FORMAT, "version": MANIFEST_VERSION, "name": self.target.name,
                    "plan_sha256": self._plan_digest(), "outputs": {k: outputs[k] for k in sorted(outputs)}}
        return json.dumps(manifest, indent=2, ensure_ascii=False) + "\n"

    # --- writing ------------------------------------------------------------------------
    def __enter__(self) -> OutputDir:
        parent = self.target.parent
        parent.mkdir(parents=True, exist_ok=True)
        if self.target.exists() and not self.target.is_dir():
            raise OutputConflict(f"{self.target} is a file, not a folder of outputs",
                                 "remove it or write to another -o folder")
        if self.keep_others and self._digest_of is not None:
            self._mergeable(complete=False)  # fail before rendering; checked again at the swap
        with _folder_lock(parent, self.target.name):
            stale = self._claim_stale()
            self.tmp = Path(tempfile.mkdtemp(prefix=f"{self._prefix}{os.getpid()}-", dir=parent))
            self._tmp_fd = os.open(self.tmp, os.O_RDONLY | os.O_DIRECTORY)
            _flock(self._tmp_fd, blocking=False)  # new and ours: nobody else can hold it
        self._remove(stale)
        return self

    def _claim_stale(self) -> list[tuple[Path, int | None]]:
        """Under the folder lock: temporary folders of compiles that died, locked by us now.
        A previous output that a killed fallback swap left aside goes back in place."""
        claimed: list[tuple[Path, int | None]] = []
        for temp in sorted(self.target.parent.glob(f"{self._prefix}*")):
            fd = _open_dir(temp)
            if fd is None:
                continue
            got = _flock(fd, blocking=False)
            if got is None:  # cannot lock a directory here: judge by the owner's pid
                got = not _pid_alive(temp, self._prefix)
            if got:
                claimed.append((temp, fd))
            else:
                os.close(fd)
        if not self.target.exists():
            for temp, fd in claimed:
                if temp.name.endswith("-old"):
                    os.rename(temp, self.target)
                    claimed.remove((temp, fd))
                    if fd is not None:
                        os.close(fd)
                    break
        return claimed

    @staticmethod
    def _remove(folders: list[tuple[Path, int | None]]) -> None:
        for folder, fd in folders:
            shutil.rmtree(folder, ignore_errors=True)
            if fd is not None:
                os.close(fd)

    def path(self, relative: str) -> Path:
        return Path(self._file(relative))

    def _file(self, relative: str) -> str:
        """The file's path in the temporary folder, its folder made (once per folder: a
        compile writes 16k netplan files into one). Plain strings: pathlib's parsing cost
        more than the write itself for small files."""
        assert self.tmp is not None
        if relative.startswith("/") or "//" in relative or "/." in "/" + relative or relative.endswith("/"):
            rel = Path(relative)  # unusual spelling (./, //, .., hidden): normalised the careful way
            if rel.is_absolute() or ".." in rel.parts:
                raise ValueError(f"output path escapes the output folder: {relative}")
            relative = rel.as_posix()
        if self._current is not None:
            self._touched.add(relative.partition("/")[0])
        full = f"{os.fspath(self.tmp)}/{relative}"
        folder = full.rpartition("/")[0]
        if folder not in self._made:
            try:
                os.mkdir(folder)  # its parent is usually made already: one call, not makedirs' stat first
            except FileExistsError:
                pass
            except FileNotFoundError:
                os.makedirs(folder, exist_ok=True)
            self._made.add(folder)
        return full

    def write_text(self, relative: str, text: str) -> None:
        self.write_bytes(relative, text.encode("utf-8"))

    def write_chunks(self, relative: str, chunks: Iterable[str], also: Callable[[bytes], object] | None = None) -> None:
        """Text written piece by piece: a file of hundreds of MB is never one string. Each
        piece goes to the kernel as it is encoded (a text-mode file's buffering copied every
        MB-sized piece again: twice the page faults), and to `also` where given (a digest's
        update: the bytes written are the bytes hashed, encoded once)."""
        fd = self._create(relative)
        try:
            for chunk in chunks:
                data = chunk.encode("utf-8")
                if also is not None:
                    also(data)
                _write_all(fd, data)
        finally:
            os.close(fd)

    def write_texts(self, folder: str, files: Iterable[tuple[str, str]]) -> None:
        """Many small files (name, text) in one folder, a netplan file per server: the folder
        is resolved and opened once and each file created relative to it (write_text's path
        checks and joins per file cost more than its write at 65,536 files). A name that is
        not a plain file name goes through write_text."""
        items = iter(files)
        head = next(items, None)
        if head is None:  # no files: no folder either, as write_text would leave it
            return
        path = self._file(f"{folder}/_")  # checks the folder's path and makes it
        dir_fd = os.open(path.rpartition("/")[0], os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        try:
            for name, text in itertools.chain([head], items):
                if "/" in name or name.startswith(".") or not name:
                    self.write_text(f"{folder}/{name}", text)
                    continue
                fd = os.open(name, _CREATE_FLAGS, 0o666, dir_fd=dir_fd)
                try:
                    _write_all(fd, text.encode("utf-8"))
                finally:
                    os.close(fd)
        finally:
            os.close(dir_fd)

    def write_bytes(self, relative: str, data: bytes) -> None:
        fd = self._create(relative)
        try:
            _write_all(fd, data)
        finally:
            os.close(fd)

    def _create(self, relative: str) -> int:
        return os.open(self._file(relative), _CREATE_FLAGS, 0o666)

    def __exit__(self, exc_type, exc, tb) -> None:
        assert self.tmp is not None and self._tmp_fd is not None
        if exc_type is not None:
            self._remove([(self.tmp, self._tmp_fd)])
            return
        os.chmod(self.tmp, 0o755)
        try:
            with _folder_lock(self.target.parent, self.target.name), stage("manifest and swap"):
                if self._digest_of is not None:
                    self._complete_with_manifest()
                aside = self._swap()
                # Lock the previous output before the folder lock drops: no other compile may
                # take it for a dead compile's leftovers while we remove it.
                previous = [] if aside is None else [(aside, _open_dir(aside))]
                for _, fd in previous:
                    if fd is not None:
                        _flock(fd, blocking=False)
        except BaseException:
            self._remove([(self.tmp, self._tmp_fd)])
            raise
        os.close(self._tmp_fd)
        with stage("remove the previous output"):
            self._remove(previous)

    def _complete_with_manifest(self) -> None:
        """Under the folder lock, just before the swap: with keep_others, the other outputs'
        files of the folder as it is now (another compile may have swapped since we began);
        then the manifest."""
        assert self.tmp is not None
        old = self._mergeable(complete=True) if self.keep_others else None
        if old is not None:
            replaced = {f for output in self._files for f in old["outputs"].get(output, [])}
            _carry_over(self.target, self.tmp, replaced | {MANIFEST})
        with open(self.tmp / MANIFEST, "w", encoding="utf-8", newline="") as fh:
            fh.write(self._manifest_text(old))

    def _swap(self) -> Path | None:
        """Put tmp in place of the target (under the folder lock); where the previous output went."""
        assert self.tmp is not None
        if not self.target.exists():
            os.rename(self.tmp, self.target)
            return None
        if _exchange(self.tmp, self.target):
            return self.tmp  # now holds the previous output
        old = self.tmp.with_name(self.tmp.name + "-old")
        os.rename(self.target, old)
        os.rename(self.tmp, self.target)
        return old
