"""Every role's check at start: the configured embedding model is the one behind the store's vectors.

A 384-d model's vectors fit another 384-d model's index without complaint, and recall then compares a
query of one model with memories of the other: silently wrong. So a mismatch stops the role with one
error that says how to change models (`hindsight reindex --model`)."""

from __future__ import annotations

from sqlalchemy import Engine

from pipeline.adapters.embedder import PACKAGED_MODELS
from pipeline.adapters.index_factory import default_collection
from pipeline.adapters.model_identity import identity_of, mismatch_message
from pipeline.adapters.postgres.model_sql import ModelStore, Recorded
from pipeline.core.config import MINILM_MODEL, Settings
from pipeline.core.errors import ConfigError

# What every release before the store recorded its model embedded with.
LEGACY_MODEL = MINILM_MODEL


def checked_model(settings: Settings, engine: Engine) -> Recorded:
    """The store's recorded model and collection (recorded now if the store has none); ConfigError when the
    configured model is another."""
    configured = identity_of(settings)
    # A store from before the record, configured with a local folder: that folder was the only other choice.
    legacy = (
        identity_of(settings, LEGACY_MODEL) if settings.embedding.model in PACKAGED_MODELS else configured
    )
    recorded = ModelStore(engine).ensure_recorded(configured, legacy, default_collection(settings))
    if not recorded.identity.same_vectors(configured):
        raise ConfigError(mismatch_message(recorded.identity, configured))
    return recorded
