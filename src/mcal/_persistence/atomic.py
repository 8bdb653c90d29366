"""Atomic writes: a temporary file in the destination's folder, synced to disk, then renamed over the destination.

The temporary files are named ``.NAME.mcal-PID-RANDOM.tmp`` (``NAME`` the destination's name, ``PID`` the writing
process). A write that is killed leaves one behind; the next write to the same folder removes those whose process
no longer runs on this machine (and any older than a day, whatever wrote them).
"""

from __future__ import annotations

import os
import re
import tempfile
import time
from pathlib import Path
from typing import Any

#: A leftover temporary file of a write in another process is removed once it is this old, even if a process with
#: its PID runs (the folder may be shared with another machine, where the PID means nothing here).
STALE_SECONDS = 24 * 3600
_TEMPORARY = re.compile(r"\..+\.mcal-(\d+)-[^.]+\.tmp")


def as_path(path: Any, name: str) -> Path:
    """Return ``path`` as a Path; raise TypeError, naming the argument ``name``, unless it is str or path-like."""
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"{name} must be a str or path-like object naming a file; got {type(path).__name__}")
    return Path(path)


def check_output_path(path: str | os.PathLike, name: str = "path") -> Path:
    """Return ``path`` as a Path after checking that it can name a new file (nothing is created).

    Raises
    ------
    TypeError
        If ``path`` is not a str or path-like object.
    FileNotFoundError
        If the folder that would hold ``path`` does not exist, with ``name`` (the argument or option) in the message.
    IsADirectoryError
        If ``path`` is an existing folder.
    """
    path = as_path(path, name)
    if not path.parent.is_dir():
        raise FileNotFoundError(
            f"{name} must be a file in an existing folder; got {str(path)!r}, whose folder does not exist"
        )
    if path.is_dir():
        raise IsADirectoryError(f"{name} must be a file, not a folder; got {str(path)!r}, which is a folder")
    return path


def check_output_folder(path: str | os.PathLike, name: str = "path") -> Path:
    """Return ``path`` as a Path after checking that it is a folder or can be made one (nothing is created).

    Raises
    ------
    TypeError
        If ``path`` is not a str or path-like object.
    NotADirectoryError
        If ``path``, or the nearest of its parents that exists, is not a folder, with ``name`` in the message.
    """
    path = as_path(path, name)
    existing = next((p for p in (path, *path.parents) if p.exists()), path)
    if not existing.is_dir():
        raise NotADirectoryError(
            f"{name} must be a folder, or a path where one can be created; got {str(path)!r}, "
            f"but {str(existing)!r} is a file"
        )
    return path


def atomic_write_bytes(path: str | os.PathLike, data: bytes) -> None:
    """Write ``data`` to ``path`` through a temporary file in the same folder, synced, and an atomic rename.

    The data is synced to disk before the rename, and the folder after it (where the OS allows), so that after a
    crash ``path`` holds either its old content or ``data``. A failure leaves no temporary file behind; one left
    by a killed write is removed by the next write to the folder (see the module's docstring).

    Raises
    ------
    FileNotFoundError, IsADirectoryError
        If the folder of ``path`` does not exist, or ``path`` is a folder.
    """
    path = check_output_path(path)
    remove_leftover_temporaries(path.parent)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.mcal-{os.getpid()}-", suffix=".tmp")
    try:
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)  # mkstemp makes 0600; give the file the permissions open() would
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    sync_folder(path.parent)


def sync_folder(folder: Path) -> None:
    """Sync ``folder``'s entries (a rename in it) to disk; a no-op where the OS cannot open a folder (Windows)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:  # some file systems refuse to sync a folder
        pass
    finally:
        os.close(fd)


def remove_leftover_temporaries(folder: Path) -> list[Path]:
    """Remove the temporary files of killed writes in ``folder`` (see the module's docstring); return them."""
    removed = []
    now = time.time()
    for entry in os.scandir(folder):
        match = _TEMPORARY.fullmatch(entry.name)
        if match is None or not entry.is_file(follow_symlinks=False):
            continue
        try:
            stale = not _running(int(match.group(1))) or now - entry.stat().st_mtime > STALE_SECONDS
            if stale:
                os.unlink(entry.path)
                removed.append(Path(entry.path))
        except OSError:  # removed meanwhile by another writer, or not ours to remove
            continue
    return removed


def _running(pid: int) -> bool:
    if pid == os.getpid() or os.name == "nt":  # on Windows os.kill would end the process
        return True  # a write of this process: another thread may be writing it now
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError, OSError):
        return True  # a process of another user (or a PID this OS cannot check): leave it to the age rule
    return True
