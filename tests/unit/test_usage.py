from decimal import Decimal

from extraction.usage import Usage, cost_usd, price_for


def test_usage_adds_api_usage_objects_and_prices_cache_tokens():
    u = Usage().add(
        {
            "input_tokens": 1000,
            "output_tokens": 200,
            "cache_creation_input_tokens": 4000,
            "cache_read_input_tokens": 0,
        }
    )
    u.add(
        {
            "input_tokens": 500,
            "output_tokens": 100,
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 4000,
        }
    )
    assert (u.input_tokens, u.output_tokens, u.cache_write_tokens, u.cache_read_tokens, u.requests) == (
        1500,
        300,
        4000,
        4000,
        2,
    )
    # sonnet: $3 in, $15 out per million; cache write 1.25x, read 0.1x
    expected = (
        Decimal(1500) * 3
        + Decimal(4000) * 3 * Decimal("1.25")
        + Decimal(4000) * Decimal("0.3")
        + Decimal(300) * 15
    ) / 1_000_000
    assert cost_usd(u, "claude-sonnet-4-6") == expected.quantize(Decimal("0.000001"))
    assert cost_usd(u, "claude-sonnet-4-6", batch=True) == (expected / 2).quantize(Decimal("0.000001"))
    assert price_for("claude-opus-4-1-20250805") == (Decimal(15), Decimal(75))
    assert price_for("some-future-model") == (Decimal(3), Decimal(15))


def test_current_models_are_priced_from_their_own_rows_and_an_unknown_one_is_logged(caplog):
    assert price_for("claude-opus-4-6") == (Decimal("5"), Decimal("25"))  # not Opus 4's $15/$75
    assert price_for("claude-opus-5-5-20260901") == (Decimal("4"), Decimal("20"))
    assert price_for("claude-sonnet-5-5") == (Decimal("2"), Decimal("10"))
    assert price_for("claude-sonnet-4-6") == (Decimal("3"), Decimal("15"))
    assert price_for("claude-haiku-5-5") == (Decimal("0.1"), Decimal("0.5"))
    assert cost_usd(Usage(1_000_000, 100_000), "claude-opus-4-6") == Decimal("7.5")
    with caplog.at_level("WARNING"):
        assert price_for("claude-nova-9") == (Decimal("3"), Decimal("15"))
    assert "no price on file for model 'claude-nova-9'" in caplog.text


def test_a_large_output_budget_gets_a_longer_request_timeout():
    import anthropic

    from extraction.agent.loop import request_timeout

    client = anthropic.Anthropic(api_key="sk-ant-test", timeout=120.0)
    assert request_timeout(client, 4096, 4096) == 120.0  # ANTHROPIC_TIMEOUT as configured
    assert request_timeout(client, 32_768, 4096) == 960.0  # after three doublings: eight times as long
