"""The running example of the protocol's examples (protocol/examples.py, invalid_examples.py): a small
knowledge base about SQLite's write-ahead log, its units, intents, plugin descriptors and an answer."""

from __future__ import annotations

from .document import IntentGroup, KnowledgeUnit
from .envelope import Descriptor, PlannerHints, unit_to_context_item

SOURCE_ID = "src-sqlite-wal"
SOURCE_NAME = "sqlite-wal.md"
SOURCE_TEXT = (
    "# Write-ahead logging\n\n"
    "WAL mode appends changes to a separate -wal file instead of overwriting the database file.\n"
    "Readers do not block writers and a writer does not block readers.\n\n"
    "## Enabling WAL\n\n"
    "Run PRAGMA journal_mode=WAL; once per database. The setting is persistent.\n"
    "WAL does not work over a network filesystem, because all processes must share memory.\n"
)

UNIT_DEFINITION = KnowledgeUnit(
    id=f"{SOURCE_ID}::chunk-000::unit-000",
    sourceId=SOURCE_ID,
    chunkId=f"{SOURCE_ID}::chunk-000",
    kuType="atomic",
    role="Definition",
    topic="WAL mode",
    claim="WAL mode appends changes to a separate -wal file instead of overwriting the database file.",
    sourceName=SOURCE_NAME,
    sourceType="markdown",
    chunkIndex=0,
    unitIndex=0,
    charStart=23,
    charEnd=114,
    parentUnitIds=[f"{SOURCE_ID}::section-000"],
)
UNIT_CONCURRENCY = KnowledgeUnit(
    id=f"{SOURCE_ID}::chunk-000::unit-001",
    sourceId=SOURCE_ID,
    chunkId=f"{SOURCE_ID}::chunk-000",
    kuType="atomic",
    role="Explanation",
    topic="WAL concurrency",
    claim="Readers do not block writers and a writer does not block readers.",
    sourceName=SOURCE_NAME,
    sourceType="markdown",
    chunkIndex=0,
    unitIndex=1,
    charStart=115,
    charEnd=181,
    parentUnitIds=[f"{SOURCE_ID}::section-000"],
)
UNIT_PROCEDURE = KnowledgeUnit(
    id=f"{SOURCE_ID}::chunk-001::unit-000",
    sourceId=SOURCE_ID,
    chunkId=f"{SOURCE_ID}::chunk-001",
    kuType="atomic",
    role="Procedure",
    topic="enabling WAL",
    title="Enable WAL",
    procedure=(
        "1. Open the database with the sqlite3 shell.\n"
        "2. Run PRAGMA journal_mode=WAL;\n"
        "3. Check that the pragma answers 'wal'; the setting persists."
    ),
    utilityActs=["implement", "recommend"],
    sourceName=SOURCE_NAME,
    sourceType="markdown",
    chunkIndex=1,
    unitIndex=0,
    parentUnitIds=[f"{SOURCE_ID}::section-001"],
)
UNIT_CONSTRAINT = KnowledgeUnit(
    id=f"{SOURCE_ID}::chunk-001::unit-001",
    sourceId=SOURCE_ID,
    chunkId=f"{SOURCE_ID}::chunk-001",
    kuType="atomic",
    role="Constraint",
    topic="WAL on network filesystems",
    claim="WAL does not work over a network filesystem, because all processes must share memory.",
    condition="the database file lives on NFS or SMB",
    subject="WAL mode",
    relation="depends_on",
    object="shared memory",
    confidence=0.9,
    phaseScopes=["kb-plugin", "gs-plugin", "val-plugin"],
    sourceName=SOURCE_NAME,
    sourceType="markdown",
    chunkIndex=1,
    unitIndex=1,
    parentUnitIds=[f"{SOURCE_ID}::section-001"],
)
KB_UNITS = [UNIT_DEFINITION, UNIT_CONCURRENCY, UNIT_PROCEDURE, UNIT_CONSTRAINT]

SESSION_UNIT = KnowledgeUnit(
    id="session::turn-003::unit-000",
    sourceId="session",
    chunkId="session::turn-003",
    kuType="atomic",
    role="Constraint",
    topic="deployment",
    claim="The application's database sits on an NFS share mounted by three web servers.",
    phaseScopes=["kb-plugin", "gs-plugin"],
    sourceName="Current-Turn Context",
    sourceType="session",
    createdAt="2024-05-14T09:12:03Z",
)

PROMPT = (
    "Our database sits on an NFS share mounted by three web servers. "
    "Should we switch SQLite to WAL mode, and how do we enable it?"
)

INTENT_RECOMMEND = IntentGroup(
    index=1,
    act="recommend",
    intent="Decide whether to switch SQLite to WAL mode for a database on an NFS share",
    context="three web servers share the database over NFS",
    criterion="the recommendation names the constraint that decides it",
    output="a yes/no recommendation with the reason",
)
INTENT_IMPLEMENT = IntentGroup(
    index=2,
    act="implement",
    intent="Enable WAL mode on a SQLite database",
    output="the steps to enable WAL mode",
)

DESCRIPTORS = [
    Descriptor(
        id="kb-fast",
        type="kb-plugin",
        name="Fast lexical retriever",
        version="0.1.0",
        description="Lexical-first retrieval with a small result budget. Cheapest path for focused questions.",
        costClass="cheap",
        plannerHints=PlannerHints(
            expectedLatencyMs=5,
            expectedLLMCalls=0,
            relativeCost=0.1,
            supportedActs=["define", "identify", "evaluate", "describe", "verify"],
            topicTags=["focused", "factual"],
            preferredDepth="shallow",
            fallbackRole="primary",
            evidenceStyle=["lexical"],
            confidenceWhenMatched=0.6,
        ),
        ops=["retrieve", "onSourceText", "onSessionEvent"],
    ),
    Descriptor(
        id="gs-symbolic",
        type="gs-plugin",
        name="Symbolic goal solver",
        version="0.1.0",
        description="Extractive answers from the selected units, no LLM. Says no-context when evidence is thin.",
        costClass="cheap",
        plannerHints=PlannerHints(
            expectedLatencyMs=3,
            expectedLLMCalls=0,
            relativeCost=0.1,
            supportedActs=["define", "identify", "describe", "implement"],
            topicTags=["extractive"],
            preferredDepth="shallow",
            fallbackRole="primary",
            evidenceStyle=["extractive"],
            confidenceWhenMatched=0.7,
        ),
        ops=["solve"],
    ),
]

ANSWER_MARKDOWN = (
    "No: keep the rollback journal. WAL mode needs every process to share memory with the database, "
    "and an NFS share mounted by three servers cannot give that.\n"
    "\n"
    "### If the database moves to local disk\n"
    "\n"
    "1. Open the database with the sqlite3 shell.\n"
    "2. Run `PRAGMA journal_mode=WAL;`\n"
    "3. Check that the pragma answers `wal`; the setting persists.\n"
    "\n"
    "Readers then no longer block the writer, and the writer no longer blocks readers."
)


def context_of(*units: KnowledgeUnit) -> list:
    """The units as a request's context items."""
    return [unit_to_context_item(u) for u in units]
