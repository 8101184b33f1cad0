"""The tuning the API ranks with follows the settings, and a bench's variant is taken over that tuning."""

from dataclasses import replace

from pipeline.core.config import MINILM_MODEL, PAIR_MODEL, Settings
from pipeline.recall.tuning import DEFAULT_TUNING, configured, rebased


def test_configured_reads_chinese_when_the_model_does() -> None:
    assert configured(Settings(embedding={"model": PAIR_MODEL})).dense_reads_cjk is True
    assert configured(Settings(embedding={"model": MINILM_MODEL})).dense_reads_cjk is False


def test_configured_takes_the_operator_s_recall_switches() -> None:
    tuning = configured(Settings(recall={"semantic": False, "decay_exponent": 0.5}))
    assert (tuning.semantic, tuning.decay_exponent) == (False, 0.5)


def test_a_variant_keeps_what_the_settings_set() -> None:
    # A bench's `--variant` built from DEFAULT_TUNING used to drop dense_reads_cjk, so under a model that
    # reads Chinese its Chinese questions were ranked by BM25 alone.
    api = configured(Settings(embedding={"model": PAIR_MODEL}))
    variant = rebased(replace(DEFAULT_TUNING, candidates=7, speaker_boost=1.0), api)
    assert (variant.candidates, variant.speaker_boost, variant.dense_reads_cjk) == (7, 1.0, True)
    assert rebased(DEFAULT_TUNING, api) == api
