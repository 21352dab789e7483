"""EXTRACTION_ENGINE: auto means Claude when an API key is set, the offline engine otherwise."""

from __future__ import annotations

import pytest

from extraction.engines import resolve_engine_name


@pytest.mark.parametrize(
    "setting, key, chosen",
    [
        ("auto", "sk-ant-test", "anthropic"),
        ("auto", "", "offline"),
        ("", "", "offline"),
        ("offline", "sk-ant-test", "offline"),  # a key does not override an explicit choice
        ("Anthropic", "", "anthropic"),
    ],
)
def test_the_engine_follows_the_setting_and_the_key(settings, setting, key, chosen):
    settings.EXTRACTION_ENGINE, settings.ANTHROPIC_API_KEY = setting, key
    assert resolve_engine_name() == chosen


def test_a_run_asking_for_an_engine_gets_it_whatever_the_setting(settings):
    settings.EXTRACTION_ENGINE, settings.ANTHROPIC_API_KEY = "auto", "sk-ant-test"
    assert resolve_engine_name("offline") == "offline"


def test_an_unknown_engine_is_a_clear_error(settings):
    settings.EXTRACTION_ENGINE = "gpt"
    with pytest.raises(ValueError, match="unknown engine 'gpt'; choose auto, anthropic or offline"):
        resolve_engine_name()
