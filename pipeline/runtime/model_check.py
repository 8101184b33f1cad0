"""Every role's check at start: the configured embedding model is the one behind the store's vectors.

A 384-d model's vectors fit another 384-d model's index without complaint, and recall then compares a
query of one model with memories of the other: silently wrong. So a mismatch stops the role with one
error that says how to change models (`hindsight reindex --model`)."""

from __future__ import annotations

from sqlalchemy import Engine

from pipeline.adapters.embedder import PACKAGED_MODELS
from pipeline.adapters.index_factory import default_collection
from pipeline.adapters.model_identity import ModelIdentity, identity_of
from pipeline.adapters.postgres.model_sql import ModelStore, Recorded
from pipeline.core.config import Settings
from pipeline.core.errors import ConfigError

# What every release before the store recorded its model embedded with.
LEGACY_MODEL = "all-MiniLM-L6-v2"


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


def mismatch_message(recorded: ModelIdentity, configured: ModelIdentity) -> str:
    return (
        f"the store's vectors were made by {recorded.describe()}, but HINDSIGHT_EMBEDDING__MODEL is "
        f"{configured.describe()}. To change models, run the service with "
        f"HINDSIGHT_EMBEDDING__MODEL={recorded.name} and then `hindsight reindex --model {configured.name} "
        f"--wait` (recall keeps serving meanwhile), then restart with the new model; to keep the old one, "
        f"set HINDSIGHT_EMBEDDING__MODEL={recorded.name}"
    )
