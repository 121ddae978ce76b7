"""Code the three kb plugins share (docs/ARCHITECTURE.md §2): unit store + lexical index, goal profiles, selection.

Public API (stable; see README.md):
    Retriever, SelectionConfig          the request handlers and their knobs; subclass to add a backend
    Candidate, Entry, Views             candidates and the per-call memory views (inline units + KB)
    GoalProfile, build_profile, bare_intent, guess_act
    KBStore, open_store, StoredUnit, NewUnit, OldUnit, WriteHook, ArtifactError
    MemoryIndex, memory_index
    IntentResult, build_document, intent_ref
    FIELD_WEIGHTS, TEXT_FIELDS, unit_fields, analyse, unit_hash, body_text, is_guidance, is_evidence,
    is_question_like
    annotate, goal_boost, relative_cut, resolve_levels, remove_redundant, sufficiency, jaccard,
    ancestors, ancestor_map
"""

from typing import TYPE_CHECKING, Any

from mrpvm.protocol.document import intent_ref

from .candidates import Candidate, Entry, Views
from .fields import (
    FIELD_WEIGHTS,
    LEVELS,
    TEXT_FIELDS,
    analyse,
    body_text,
    content_terms,
    is_evidence,
    is_guidance,
    is_question_like,
    level_of,
    own_terms,
    unit_fields,
    unit_hash,
)
from .memindex import MemoryIndex, memory_index
from .output import IntentResult, build_document
from .profile import GoalProfile, bare_intent, build_profile, guess_act
from .retriever import Retriever
from .selection import (
    SelectionConfig,
    Sufficiency,
    ancestor_map,
    ancestors,
    annotate,
    goal_boost,
    jaccard,
    relative_cut,
    remove_redundant,
    resolve_levels,
    sufficiency,
)
from .text_index import ArtifactError

if TYPE_CHECKING:
    from .store import KBStore, NewUnit, OldUnit, StoredUnit, WriteHook, open_store

_FROM_STORE = frozenset({"KBStore", "NewUnit", "OldUnit", "StoredUnit", "WriteHook", "open_store"})


def __getattr__(name: str) -> Any:
    """The store's names load store.py (SQLite, pathlib) on first use: a worker answering from inline units
    alone never needs it (store_files.py)."""
    if name in _FROM_STORE:
        from . import store

        return getattr(store, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "FIELD_WEIGHTS",
    "LEVELS",
    "TEXT_FIELDS",
    "Candidate",
    "Entry",
    "GoalProfile",
    "IntentResult",
    "KBStore",
    "MemoryIndex",
    "NewUnit",
    "OldUnit",
    "Retriever",
    "SelectionConfig",
    "ArtifactError",
    "StoredUnit",
    "Sufficiency",
    "Views",
    "WriteHook",
    "analyse",
    "ancestor_map",
    "ancestors",
    "annotate",
    "bare_intent",
    "body_text",
    "build_document",
    "build_profile",
    "content_terms",
    "own_terms",
    "goal_boost",
    "guess_act",
    "intent_ref",
    "is_evidence",
    "is_guidance",
    "is_question_like",
    "jaccard",
    "level_of",
    "memory_index",
    "open_store",
    "relative_cut",
    "remove_redundant",
    "resolve_levels",
    "sufficiency",
    "unit_fields",
    "unit_hash",
]
