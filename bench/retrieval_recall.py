"""Where the answering unit ranks in each of kb-balanced's views (issue 20: recall diagnostics).

For every answerable question of the given eval suites: the story's units as sd-symbolic makes them (a
session load), the question as the intent (kb-balanced's goal profile), and the rank (1-based) of the first
unit that mentions every `answerMustMention` string (else every `contextMustMention` string) in

- `bm25`:  kb-balanced's lexical search over all units (per-field BM25, the inline index);
- `hdc`:   DS024's associative similarity over all units;
- `dense`: the sentence-embedding cosine over all units (what the model reads of a unit, dense.py);
- `pool`:  kb-balanced's evidence list after fusion, admission and goal boosts (before the relative cut);
- `sel`:   its selection (the units handed to the solver; a selected section or other ancestor whose own
  text says the answer counts as an answering unit), and where a unit of the pool was lost when none
  is selected (the relative cut, the level resolution, the redundancy check, MMR, the budget);
- with `--eval RESULT.json` (an `mrpvm eval --json` result of the same suites): `eval`, the rank of the
  first answering unit among the evidence the engine handed the solver in that run (any kb-plugin's view;
  units are matched by their chunk and unit number, the session's source id differs), and `kb`, the view
  the engine kept.

`-` marks a unit the view does not rank (not in the pool, not selected); `split` a question whose expected
strings no single unit mentions. A summary prints recall@1/5/10/30 per view.

    .venv/bin/python bench/retrieval_recall.py /work/shared/eval/real0* eval/dev/dev* [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "tests" / "support")]

from kb_corpus import retrieve_request  # noqa: E402
from mrpvm.plugins.kb_balanced import __main__ as balanced_main  # noqa: E402
from mrpvm.plugins.kb_balanced.__main__ import plugin as balanced  # noqa: E402
from mrpvm.plugins.kb_balanced.dense import encode, encode_query, unit_text  # noqa: E402
from mrpvm.plugins.kb_balanced.hdc import association, encode_fields, query_vectors, unit_texts  # noqa: E402
from mrpvm.plugins.kb_common import retriever as common_retriever  # noqa: E402
from mrpvm.plugins.kb_common.fields import body_text, topic_text  # noqa: E402
from mrpvm.plugins.kb_common.memindex import MemoryIndex  # noqa: E402
from mrpvm.plugins.kb_common.profile import build_profile  # noqa: E402
from mrpvm.plugins.sd_symbolic.source_units.assemble import build_tree  # noqa: E402
from mrpvm.plugins.sd_symbolic.source_units.tree import SourceMeta  # noqa: E402
from mrpvm.protocol.document import IntentGroup, KnowledgeUnit  # noqa: E402
from mrpvm.protocol.envelope import encode_request  # noqa: E402
from mrpvm.shells.evaluation.scoring import expects_refusal, mentions  # noqa: E402
from mrpvm.shells.evaluation.suites import load_suite  # noqa: E402

VIEWS = ("bm25", "hdc", "dense", "pool", "sel")
EVAL_VIEWS = ("eval",)
CUTS = (1, 5, 10, 30)


def unit_says(unit: KnowledgeUnit) -> str:
    return f"{unit.sectionTitle or ''}\n{topic_text(unit)}\n{body_text(unit)}"


def targets(units: list[KnowledgeUnit], expected) -> tuple[set[int], list[str]]:
    """The atomic units that say the answer (a section's or the source's summary says every answer), and
    the expected strings they say."""
    for wanted in (expected.answerMustMention, expected.contextMustMention):
        if wanted:
            found = {
                i
                for i, u in enumerate(units)
                if u.kuType == "atomic" and all(mentions(unit_says(u), t) for t in wanted)
            }
            if found:
                return found, list(wanted)
    return set(), []


def holding(units: list[KnowledgeUnit], wanted: set[int], says: list[str]) -> set[int]:
    """The answering units and each ancestor whose own text says the answer too (a selected section that
    holds the answering sentences is evidence that answers)."""
    ancestors = {p for i in wanted for p in units[i].parentUnitIds}
    return wanted | {
        i for i, u in enumerate(units) if u.id in ancestors and all(mentions(unit_says(u), t) for t in says)
    }


def first_rank(order: list[int], wanted: set[int]) -> int | None:
    return next((r for r, i in enumerate(order, 1) if i in wanted), None)


STAGES = ("cut", "levels", "redundant", "mmr")


class _Capture:
    """The evidence list kb-balanced ranks before its relative cut (the fused pool), and what each later
    stage keeps of it: the relative cut, the level resolution, the redundancy check, MMR."""

    def __init__(self) -> None:
        self.pool: list[str] = []
        self.kept: dict[str, list[str]] = {}
        for stage, name in zip(
            STAGES[:3], ("relative_cut", "resolve_levels", "remove_redundant"), strict=True
        ):
            setattr(common_retriever, name, self._wrap(stage, getattr(common_retriever, name)))
        retriever = balanced_main.retriever
        retriever.diversify = self._wrap("mmr", retriever.diversify)

    def _wrap(self, stage: str, fn):
        def kept(*args, **kwargs):
            if stage == "cut":
                self.pool = [c.id for c in args[0]]
            out = fn(*args, **kwargs)
            self.kept[stage] = [c.id for c in out]
            return out

        return kept

    def lost_at(self, wanted: set[str]) -> str:
        """The first stage after which no answering unit is left ("" when one is selected)."""
        if not any(i in wanted for i in self.pool):
            return "pool"
        return next((s for s in STAGES if not any(i in wanted for i in self.kept.get(s, ()))), "budget")


def local_id(ident: str) -> str:
    """A unit id without its source id ("story-1a2b::chunk-004::unit-002" -> "chunk-004::unit-002")."""
    return ident.split("::", 1)[-1]


def eval_evidence(path: str | None) -> dict[str, tuple[list[str], str]]:
    """Question id -> (the local ids of the evidence it was answered from, the kb-plugin kept)."""
    if not path:
        return {}
    data = json.loads(Path(path).read_text())
    return {
        q["id"]: ([local_id(e) for e in q.get("evidence") or []], (q.get("plugins") or {}).get("kb", ""))
        for s in data["suites"]
        for q in s["questions"]
    }


def suite_rows(folder: str, capture: _Capture, evaluated: dict[str, tuple[list[str], str]]) -> list[dict]:
    suite = load_suite(folder)
    units = build_tree(suite.story, SourceMeta(f"story-{suite.spec.suiteId}", suite.story_name, "text"))
    by_id = {u.id: i for i, u in enumerate(units)}
    index = MemoryIndex(units)
    topics, claims = encode_fields([unit_texts(u) for u in units])
    vectors = encode([unit_text(u) for u in units])
    rows = []
    for q in suite.spec.questions:
        if expects_refusal(q.expected):
            continue
        wanted, says = targets(units, q.expected)
        group = IntentGroup(index=1, act="identify", intent=q.input, output="a short answer")
        profile = build_profile(group)
        row: dict = {"id": q.id, "units": len(units), "targets": len(wanted)}
        if not wanted:
            rows.append(row | {v: "split" for v in VIEWS + EVAL_VIEWS})
            continue
        bm25 = [p for p, _ in index.search(profile.weights, len(units))]
        row["bm25"] = first_rank(bm25, wanted)
        terms = [t for t, w in profile.weights.items() if w >= 0.5] or list(profile.weights)
        assoc = association(
            query_vectors(tuple(terms), tuple(profile.roles), profile.act), topics, claims, units
        )
        row["hdc"] = first_rank([int(i) for i in np.argsort(-assoc, kind="stable")], wanted)
        query = encode_query(q.input)
        if vectors is not None and query is not None:
            row["dense"] = first_rank([int(i) for i in np.argsort(-(vectors @ query), kind="stable")], wanted)
        doc, failure, _ = balanced.run(encode_request(retrieve_request([group], units)))
        assert doc is not None, failure
        row["pool"] = first_rank([by_id[i] for i in capture.pool if i in by_id], wanted)
        held = holding(units, wanted, says)
        row["sel"] = first_rank([by_id[i] for i in doc.resolved[0].selected if i in by_id], held)
        if row["sel"] is None:
            row["lost"] = capture.lost_at({units[i].id for i in held})
        if q.id in evaluated:
            local = {local_id(u.id): i for i, u in enumerate(units)}
            evidence, kb = evaluated[q.id]
            row["eval"] = first_rank([local[e] for e in evidence if e in local], wanted)
            row["kb"] = kb
        rows.append(row)
    return rows


def summary(rows: list[dict], views: tuple[str, ...]) -> list[str]:
    ranked = [r for r in rows if r.get("bm25") != "split"]
    out = [f"{len(rows)} answerable questions, {len(rows) - len(ranked)} with no single answering unit"]
    for view in views:
        cells = []
        for k in CUTS:
            n = sum(1 for r in ranked if isinstance(r.get(view), int) and r[view] <= k)
            cells.append(f"@{k} {n}")
        missing = sum(1 for r in ranked if not isinstance(r.get(view), int))
        out.append(f"{view:6} " + "  ".join(cells) + f"  unranked {missing}")
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("folders", nargs="+")
    parser.add_argument("--json", help="write the rows here")
    parser.add_argument("--eval", help="an `mrpvm eval --json` result of the same suites")
    args = parser.parse_args()
    capture = _Capture()
    evaluated = eval_evidence(args.eval)
    views = VIEWS + (EVAL_VIEWS if evaluated else ())
    rows: list[dict] = []
    print(
        f"{'question':10} {'units':>5} " + " ".join(f"{v:>6}" for v in views) + ("  kb" if evaluated else "")
    )
    for folder in args.folders:
        for row in suite_rows(folder, capture, evaluated):
            rows.append(row)
            cells = " ".join(f"{'-' if row.get(v) is None else row[v]!s:>6}" for v in views)
            lost = f"  lost at {row['lost']}" if row.get("lost") else ""
            print(f"{row['id']:10} {row['units']:>5} {cells}  {row.get('kb', '')}{lost}", flush=True)
    print("\n".join(summary(rows, views)))
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
