"""The body of one batch creation, ``{"requests":[...]}``, written to a temporary file as it fills.

Each request is encoded (``split.encode``, the SDK's own settings) as soon as it is built and
appended here, so its dicts can be dropped at once; the body is then sent from the file in
pieces. Memory does not grow with the batch, which may hold up to 256 MB of requests.

A ``BatchBody`` can be iterated more than once (each pass starts at the top), so a POST that is
sent again sends it whole (``submit.send`` itself sends each creation once).
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterator

from bulk.split import ENVELOPE_BYTES

PIECE = 1 << 20


class BatchBody:
    def __init__(self):
        self._file = tempfile.TemporaryFile()
        self._file.write(b'{"requests":[')
        self.count = 0
        self.size = ENVELOPE_BYTES  # with the closing ``]}``, which ``__iter__`` adds

    def add(self, encoded: bytes) -> None:
        """Append one encoded request."""
        if self.count:
            self._file.write(b",")
            self.size += 1
        self._file.write(encoded)
        self.size += len(encoded)
        self.count += 1

    def __iter__(self) -> Iterator[bytes]:
        self._file.flush()
        self._file.seek(0)
        while piece := self._file.read(PIECE):
            yield piece
        yield b"]}"

    def close(self) -> None:
        self._file.close()

    def __enter__(self) -> BatchBody:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
