"""A folder of files kept under a size bound: the least recently used go first.

Page images are drawn on demand and kept here (``MEDIA_ROOT/var/...``). A file is written to a
temporary name and renamed into place, so a reader never sees half a file and two processes
drawing the same page at once both leave a whole one. A hit touches the file's modification time;
the sweep removes the files touched longest ago until the folder is under 90% of its bound.
Sweeping lists the whole folder, so a process sweeps on its first write and then after writing a
twentieth of the bound: the folder can pass its bound by that much per process between sweeps.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import threading
from pathlib import Path

SWEEP_SHARE = 20  # a process sweeps after writing 1/SWEEP_SHARE of the bound
KEEP_SHARE = 0.9  # a sweep leaves the folder at this share of its bound


class BoundedDirCache:
    def __init__(self, root: Path, max_bytes: int):
        self.root = Path(root)
        self.max_bytes = max_bytes
        self._written = 0
        self._swept = False
        self._lock = threading.Lock()

    def path(self, key: str) -> Path:
        """Where ``key`` ("folder/name") is kept; a key never leaves the root."""
        parts = Path(key).parts
        if not parts or any(p in ("", ".", "..") or p.startswith("/") for p in parts):
            raise ValueError(f"bad cache key {key!r}")
        return self.root.joinpath(*parts)

    def get(self, key: str) -> Path | None:
        path = self.path(key)
        try:
            os.utime(path)  # used now: the sweep keeps it longer
        except FileNotFoundError:
            return None
        return path

    def put(self, key: str, data: bytes) -> Path:
        path = self.path(key)
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o750)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
            os.chmod(tmp, 0o640)  # client data, as the uploads are (settings.FILE_UPLOAD_PERMISSIONS)
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        with self._lock:
            self._written += len(data)
            due = not self._swept or self._written * SWEEP_SHARE >= self.max_bytes
            if due:
                self._written, self._swept = 0, True
        if due:
            self.sweep()
        return path

    def sweep(self) -> int:
        """Remove the least recently used files until the folder holds at most ``KEEP_SHARE`` of the
        bound (nothing when it is under the bound); returns the bytes removed."""
        files = []
        total = 0
        for folder, _dirs, names in os.walk(self.root):
            for name in names:
                path = os.path.join(folder, name)
                try:
                    st = os.stat(path)
                except FileNotFoundError:
                    continue
                files.append((st.st_mtime, st.st_size, path))
                total += st.st_size
        if total <= self.max_bytes:
            return 0
        removed = 0
        for _mtime, size, path in sorted(files):
            if total - removed <= self.max_bytes * KEEP_SHARE:
                break
            try:
                os.unlink(path)
            except FileNotFoundError:
                continue
            removed += size
        return removed

    def remove_folder(self, folder: str) -> None:
        """Remove a folder of keys (a deleted document's pages)."""
        shutil.rmtree(self.path(folder), ignore_errors=True)
