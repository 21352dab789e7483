"""What Django's upload handling leaves to the app: a request with more files than one upload takes, and the
partial files of uploads whose process died.

More files than ``DATA_UPLOAD_MAX_NUMBER_FILES``: Django raises ``TooManyFilesSent`` as the body is parsed,
which the CSRF check does first, and answers a bare "Bad Request (400)". :class:`UploadLimitsMiddleware`
parses the body before that check and marks the request (:func:`too_many_files`), so the upload page says the
limit in its form. The files and fields are then unread, the CSRF token posted in the form among them: a
request that sends it in a header (htmx, the upload page's way) goes on to its view; a form sent without
JavaScript is answered here, 413, in words.

Partial files: Django spools an upload over ``FILE_UPLOAD_MAX_MEMORY_SIZE`` to a temporary file in
``FILE_UPLOAD_TEMP_DIR`` and removes it when the request ends, or is interrupted; a process killed
meanwhile (a web worker past its timeout, out of memory, a deploy) leaves it there. The beat removes those
not written to for :data:`STALE_AFTER_S` (:func:`sweep_stale_temp_files`); the folder is on the media volume,
which the web, the workers and the beat share.
"""

from __future__ import annotations

import logging
import os
import time
from pathlib import Path

from django.conf import settings
from django.core.exceptions import TooManyFilesSent
from django.http import HttpResponse

log = logging.getLogger(__name__)

# A partial upload not written to for this long has no process writing it: an upload going on writes every
# 64 KiB, and one taken is removed when its request ends (docs/decisions.md, config.uploads.STALE_AFTER_S).
STALE_AFTER_S = 3600


def too_many_files_message() -> str:
    limit = settings.DATA_UPLOAD_MAX_NUMBER_FILES
    return (
        f"At most {limit} files in one upload; this one had more, and none was taken. "
        "Upload them in parts, or in a ZIP."
    )


def too_many_files(request) -> bool:
    """Whether the request carried more files than one upload takes (its files and fields are then empty)."""
    return getattr(request, "too_many_files", False)


class UploadLimitsMiddleware:
    """Placed before ``CsrfViewMiddleware``, which would parse the body first."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        if request.method == "POST" and request.content_type == "multipart/form-data":
            try:
                request.POST  # noqa: B018 - parsed here, where its refusal can be caught
            except TooManyFilesSent:
                request.too_many_files = True
                if settings.CSRF_HEADER_NAME not in request.META:
                    return HttpResponse(too_many_files_message(), status=413, content_type="text/plain")
        return self.get_response(request)


def sweep_stale_temp_files(folder: Path | None = None, now: float | None = None) -> int:
    """Remove the files of ``FILE_UPLOAD_TEMP_DIR`` not written to for :data:`STALE_AFTER_S`; how many."""
    folder = Path(folder or settings.FILE_UPLOAD_TEMP_DIR)
    cutoff = (now or time.time()) - STALE_AFTER_S
    removed = 0
    try:
        entries = list(os.scandir(folder))
    except FileNotFoundError:
        return 0
    for entry in entries:
        try:
            if entry.is_file(follow_symlinks=False) and entry.stat(follow_symlinks=False).st_mtime < cutoff:
                os.remove(entry.path)
                removed += 1
        except FileNotFoundError:  # removed meanwhile (its request ended)
            continue
    if removed:
        log.warning("removed %s partial upload file(s) left by processes that died, from %s", removed, folder)
    return removed
