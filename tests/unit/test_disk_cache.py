"""The page image folder stays under its bound: the least recently used files go first."""

from __future__ import annotations

import os
import time

import pytest

from ingest.disk_cache import BoundedDirCache


def test_a_kept_file_is_found_again_whole(tmp_path):
    cache = BoundedDirCache(tmp_path, max_bytes=10_000)
    assert cache.get("7/page-1.png") is None
    path = cache.put("7/page-1.png", b"\x89PNG" + b"x" * 100)
    assert cache.get("7/page-1.png") == path and path.read_bytes().startswith(b"\x89PNG")
    assert oct(path.stat().st_mode & 0o777) == "0o640"
    assert not [p for p in path.parent.iterdir() if p.name.startswith(".tmp-")]


def test_past_its_bound_the_folder_drops_the_files_used_longest_ago(tmp_path):
    cache = BoundedDirCache(tmp_path, max_bytes=1000)
    for n in range(5):
        cache.put(f"1/p{n}.png", b"x" * 180)
        os.utime(cache.path(f"1/p{n}.png"), (time.time() - 100 + n, time.time() - 100 + n))
    assert cache.get("1/p0.png") is not None  # read now: the most recently used
    cache.put("2/p0.png", b"x" * 180)  # 1,080 bytes: over the bound, and a twentieth of it written since
    total = sum(p.stat().st_size for p in tmp_path.rglob("*") if p.is_file())
    assert total <= 900
    assert cache.get("1/p1.png") is None  # the oldest unused went
    assert cache.get("1/p0.png") is not None and cache.get("2/p0.png") is not None
    assert cache.sweep() == 0  # under the bound: nothing more goes


def test_a_process_sweeps_on_its_first_write_and_after_a_share_of_the_bound(tmp_path):
    for n in range(10):
        (tmp_path / f"old{n}").write_bytes(b"x" * 200)  # left by another process: 2,000 bytes
    cache = BoundedDirCache(tmp_path, max_bytes=1000)
    cache.put("1/new.png", b"y" * 10)
    assert sum(p.stat().st_size for p in tmp_path.rglob("*") if p.is_file()) <= 900


def test_a_key_never_leaves_the_folder(tmp_path):
    cache = BoundedDirCache(tmp_path / "images", max_bytes=1000)
    for bad in ("../secret", "/etc/passwd", "a/../../b", ""):
        with pytest.raises(ValueError):
            cache.path(bad)


def test_a_deleted_documents_folder_goes(tmp_path):
    cache = BoundedDirCache(tmp_path, max_bytes=10_000)
    cache.put("3/p1.png", b"x")
    cache.put("4/p1.png", b"x")
    cache.remove_folder("3")
    assert cache.get("3/p1.png") is None and cache.get("4/p1.png") is not None
