"""The word the documents table gives of a document in the pipeline that has not moved for a while."""

from datetime import UTC, datetime, timedelta

import pytest

from ingest.durations import in_words
from reviewer.stall import extraction_notice, notice

NOW = datetime(2026, 11, 28, 7, 0, tzinfo=UTC)
LIMITS = dict(redelivered_after_s=3700, failed_after_s=7900)


@pytest.mark.parametrize(
    "seconds, words",
    [
        (0, "0 s"),
        (3, "3 s"),
        (59.9, "59 s"),
        (60, "1 min"),
        (3599, "59 min"),
        (3600, "1 h"),
        (3700, "1 h 1 min"),
        (7900, "2 h 11 min"),
        (-5, "0 s"),
    ],
)
def test_in_words(seconds, words):
    assert in_words(seconds) == words


def quiet_for(minutes: float, status: str) -> str:
    return notice(status, NOW - timedelta(minutes=minutes), NOW, **LIMITS)


def test_a_document_that_moved_lately_or_has_ended_gets_no_notice():
    assert quiet_for(9.9, "embedding") == quiet_for(9.9, "queued") == ""
    assert quiet_for(600, "ready") == quiet_for(600, "failed") == quiet_for(600, "needs_ocr") == ""


def test_a_stage_without_progress_says_when_it_comes_back_and_when_it_fails():
    text = quiet_for(14, "embedding")
    assert text.startswith("No progress for 14 min.")
    assert (
        "starts again by itself 1 h 1 min after it began" in text
        and "after 2 h 11 min without progress" in text
    )
    assert quiet_for(14, "converting") == text


def test_a_queued_document_waits_for_a_worker():
    assert quiet_for(75, "queued").startswith("Waiting for a worker for 1 h 15 min:")


def test_an_extraction_without_a_finished_clause_says_so_and_one_waiting_its_turn_waits():
    def extraction_quiet_for(minutes: float, running: bool) -> str:
        return extraction_notice(running, NOW - timedelta(minutes=minutes), NOW, **LIMITS)

    assert extraction_quiet_for(9, True) == extraction_quiet_for(9, False) == ""
    text = extraction_quiet_for(30, True)
    assert (
        text.startswith("No clause finished for 30 min.")
        and "in the background starts again by itself 1 h 1 min after it began, from its checkpoint" in text
    )
    assert "after 2 h 11 min without progress the clause types left are marked failed" in text
    assert extraction_quiet_for(30, False).startswith("Waiting for a worker for 30 min:")
