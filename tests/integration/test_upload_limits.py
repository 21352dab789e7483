"""What an upload past a limit is told, and what a killed upload leaves behind: a file just over the size
limit is told figures that differ, an upload of more files than one upload takes is told the limit in the
upload form (not a bare "Bad Request"), and the partial file of an upload whose process died is swept."""

from __future__ import annotations

import os
import time

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import reverse

from ingest.intake import IntakeError, intake_file

pytestmark = pytest.mark.django_db


def test_a_file_just_over_the_size_limit_is_told_figures_that_differ(engagement, tmp_path, settings):
    settings.MAX_UPLOAD_BYTES = 100 * 1024 * 1024
    path = tmp_path / "big.txt"
    with open(path, "wb") as out:
        out.truncate(settings.MAX_UPLOAD_BYTES + 7)  # sparse: 100 MiB and 7 bytes, none of them on disk
    with pytest.raises(IntakeError) as refused:
        intake_file(engagement, path, filename="big.txt", enqueue=False)
    said = refused.value.message
    assert "“big.txt” is 104,857,607 bytes; the limit is 104,857,600 bytes (100.0 MB)" in said, said
    settings.MAX_UPLOAD_BYTES = 1000
    with pytest.raises(IntakeError) as refused:
        intake_file(
            engagement, SimpleUploadedFile("a.txt", b"x" * 2_500_000), filename="a.txt", enqueue=False
        )
    assert "is 2.4 MB; the limit is 1000 bytes" in refused.value.message  # far over: no need of bytes


def _files(n: int) -> list[SimpleUploadedFile]:
    return [
        SimpleUploadedFile(f"lease-{i}.txt", f"Lease {i}: the Tenant pays rent.\n".encode()) for i in range(n)
    ]


def _signed_in(engagement, make_member) -> tuple[Client, str]:
    client = Client(enforce_csrf_checks=True)
    client.force_login(make_member(engagement, "admin"))
    page = client.get(reverse("engagement-upload", args=[engagement.pk]))
    return client, str(page.context["csrf_token"])


def test_more_files_than_one_upload_takes_are_told_the_limit_in_the_upload_form(
    engagement, make_member, settings
):
    from ingest.models import Document

    settings.DATA_UPLOAD_MAX_NUMBER_FILES = 5
    client, token = _signed_in(engagement, make_member)
    url = reverse("engagement-upload", args=[engagement.pk])
    said = client.post(url, {"files": _files(6)}, HTTP_HX_REQUEST="true", HTTP_X_CSRFTOKEN=token)
    html = said.content.decode()
    assert said.status_code == 422, html[:500]
    assert 'id="upload-results"' in html and "At most 5 files in one upload; this one had more" in html
    assert not Document.objects.exists()
    # the form sent without JavaScript carries its token in the body, which is not read: told in words too
    plain = client.post(url, {"files": _files(6), "csrfmiddlewaretoken": token})
    assert plain.status_code == 413 and "At most 5 files in one upload" in plain.content.decode()
    taken = client.post(url, {"files": _files(5)}, HTTP_HX_REQUEST="true", HTTP_X_CSRFTOKEN=token)
    assert taken.status_code == 200 and Document.objects.count() == 5


def test_the_partial_file_of_an_upload_whose_process_died_is_swept(settings):
    from django.core.files.uploadedfile import TemporaryUploadedFile

    from ingest import tasks

    upload = TemporaryUploadedFile("contract.pdf", "application/pdf", 0, None)  # where Django spools uploads
    upload.write(b"%PDF-1.7 half of it")
    partial = upload.temporary_file_path()
    assert os.path.dirname(partial) == str(settings.FILE_UPLOAD_TEMP_DIR)
    left = os.path.join(settings.FILE_UPLOAD_TEMP_DIR, "tmpkilled.upload.pdf")  # a process killed mid-upload
    with open(left, "wb") as out:
        out.write(b"%PDF-1.7 the first megabytes")
    an_hour_ago = time.time() - 2 * 3600
    os.utime(left, (an_hour_ago, an_hour_ago))
    try:
        assert tasks.sweep_upload_temp_files() == "1 removed"
        assert not os.path.exists(left) and os.path.exists(partial)  # an upload going on is left alone
    finally:
        upload.close()
