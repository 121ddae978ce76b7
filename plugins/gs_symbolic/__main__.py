"""gs-symbolic: deterministic, extractive answers from evidence only (no LLM).

`solve` reads the intent (or, for a bare DS016 request, the prompt), the evidence units (or the
request's context items), the guidance units and kb-thinkingdb's proof notes, and answers with the
sentences of the evidence that answer the intent. Constrained formats (Yes/No, one word) are answered
only from an explicit statement. With nothing usable the answer is `no-context` and the exact
sentence of protocol.vocab.NO_CONTEXT_ANSWER.

needs-decomposition: returned only when the intent holds two or more questions, none of which the
evidence answers, and the request allows decomposition (each sub-question then gets its own
retrieval in a child frame). A multi-question intent with some answers is answered part by part.
"""

from __future__ import annotations

from mrpvm.plugins.sdk import Call, Plugin
from mrpvm.plugins.sdk.embedding import for_call, worker_started
from mrpvm.protocol.document import CnlDocument, KnowledgeUnit
from mrpvm.protocol.envelope import SolvePayload
from mrpvm.protocol.variants import respell
from mrpvm.protocol.vocab import NO_CONTEXT_ANSWER

from .material import Outcome, prepare
from .question import analyse, is_instruction, with_collection
from .solver import answer

PLUGIN_ID = "gs-symbolic"
_RANK = {"high": 2, "medium": 1, "low": 0}


def _split_guidance(units: list[KnowledgeUnit]) -> tuple[list[KnowledgeUnit], list[str]]:
    """Evidence units that are really output instructions move to guidance (bare requests mix them)."""
    evidence, guidance = [], []
    for unit in units:
        body = unit.body
        if body and is_instruction(body):
            guidance.append(body)
        else:
            evidence.append(unit)
    return evidence, guidance


def solve(call: Call) -> CnlDocument:
    payload: SolvePayload = call.payload
    # a short one-shot call does not wait for the model to load; vectors are kept in the KB's folder
    for_call(call.time_left(), call.request.paths.artifacts)
    intent = payload.intent
    # a word the documents spell otherwise (the retriever's TermVariants) is read in their spelling
    variants = payload.resolved.term_variants if payload.resolved else {}
    text = respell((intent.intent if intent else "") or call.prompt, variants)
    context = respell(intent.context if intent else "", variants)
    units = payload.evidence or call.context_units()
    evidence, inline_guidance = _split_guidance(units)
    guidance = [g.body for g in payload.guidance if g.body] + inline_guidance
    output = intent.output if intent else ""
    act = intent.act if intent else None
    answer_type = intent.answerType if intent else ""
    question = analyse(text, act, output, guidance, context, answer_type)
    notes = payload.resolved.notes if payload.resolved else ""
    question = with_collection(question, payload.resolved.term_weights if payload.resolved else {})
    material = prepare(evidence, notes)

    subs = question.sub_questions
    if len(subs) >= 2:
        parts: list[tuple[str, Outcome | None]] = []
        for sub in subs:
            sub_q = analyse(sub, None, output, guidance, context)
            sub_q = with_collection(sub_q, question.collection)
            parts.append((sub, answer(sub_q, material)))
        answered = [(s, o) for s, o in parts if o is not None]
        if not answered:
            if payload.allowDecompose:
                listing = "\n".join(f"- {s}" for s, _ in parts)
                return call.reply(
                    "needs-decomposition",
                    result=f"{len(parts)} sub-questions, none answered by the evidence as one intent",
                    answer=f"Answer these separately:\n{listing}",
                    sources=[],
                )
            return _no_context(call, len(evidence))
        return _success(call, _combine(parts), len(evidence))

    outcome = answer(question, material)
    if outcome is None:
        return _no_context(call, len(evidence))
    return _success(call, outcome, len(evidence))


def _combine(parts: list[tuple[str, Outcome | None]]) -> Outcome:
    blocks, ids, confs = [], [], []
    for sub, out in parts:
        if out is None:
            blocks.append(f"**{sub}**\n\n{NO_CONTEXT_ANSWER}")
            confs.append("low")
            continue
        blocks.append(f"**{sub}**\n\n{out.markdown}")
        ids.extend(i for i in out.sources if i not in ids)
        confs.append(out.confidence)
    conf = min(confs, key=lambda c: _RANK.get(c, -1))  # a number: below "low" (solver.UNTYPED)
    supported = all(out is not None and out.supported for _, out in parts)
    return Outcome("\n\n".join(blocks), ids, conf, f"{len(parts)} sub-questions", "multi", supported)


def _success(call: Call, out: Outcome, n_units: int) -> CnlDocument:
    """`success` when a passage answering by the question's words supports the answer; otherwise the best
    candidate as `insufficient` (the kernel keeps it as a weak answer, tries the other candidates first)."""
    return call.reply(
        "success" if out.supported else "insufficient",
        out.confidence,
        result=f"{out.kind} answer from {len(out.sources)} of {n_units} units",
        evidence=out.evidence,
        answer=out.markdown,
        sources=out.sources,
    )


def _no_context(call: Call, n_units: int) -> CnlDocument:
    why = "no evidence units" if n_units == 0 else f"none of {n_units} units states the answer"
    return call.reply("no-context", result=why, answer=NO_CONTEXT_ANSWER, sources=[])


# a warm worker loads the sentence encoder when a question's vectors are not kept, or once idle (meaning.py)
plugin = Plugin(PLUGIN_ID, "gs-plugin", {"solve": solve}, on_worker_start=worker_started)

if __name__ == "__main__":
    plugin.main()
