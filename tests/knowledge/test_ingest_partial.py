"""A kb-plugin that indexes a source in part (`partial`, protocol/SPEC.md) keeps the source owed to it until
it answers `success`: the ingest counts the source as indexed and says what is left, `kb check` lists the
plugin as partial, the daemon's `/ready` count does not wait for it, and the kernel's offers (`reoffer`:
the next ingest into the KB, the daemon's index watch; `kb check` until whole; not a kernel's start, so
`mrpvm ask` stays fast) complete it.

test-kb (tests/support/ingest_plugins/test_kb.py) answers `partial` to the first <n> upserts of a source
holding @@PARTIAL=<n>@@; kb-balanced's own dense view over several offers: tests/plugins/test_dense_partial.py.
"""

from __future__ import annotations

from mrpvm.knowledge.index_watch import owed
from mrpvm.knowledge.ingest import ingest_source
from mrpvm.knowledge.reindex import check_kb, reoffer
from test_ingest import calls, run_kernel

ENABLED = "test-sd,test-kb"
TEXT = "# Kiln\n\nFiring programs are saved under /var/lib/kiln/programs. @@PARTIAL=2@@\n"
OTHER = "# Power\n\nThe controller needs a 240 volt supply on its own breaker.\n"


def test_a_partial_index_stays_owed_until_the_kernels_offers_complete_it(tmp_path):
    async def work(ctx):
        kb = ctx.store.create_kb("docs")
        first = await ingest_source(ctx, kb, "kiln.md", TEXT, sd_plugin="test-sd")
        state = await check_kb(ctx, "docs", repair=False)
        debt = owed(ctx)
        at_start = await reoffer(ctx, partial=False)  # what a kernel's start offers
        again = await reoffer(ctx)
        still = await check_kb(ctx, "docs", repair=False)
        other = await ingest_source(ctx, kb, "power.md", OTHER, sd_plugin="test-sd")  # offers what is owed
        done = await check_kb(ctx, "docs", repair=False)
        return kb, first, state, debt, at_start, again, still, other, done, owed(ctx)

    kb, first, state, debt, at_start, again, still, other, done, debt_after = run_kernel(
        tmp_path, work, enabled=ENABLED
    )
    assert first.notified == ["test-kb (partial)"]  # indexed: the ingest keeps the source
    assert any("test-kb indexed source 'kiln.md' in part" in w and "offer 1" in w for w in first.warnings)
    (kiln,) = state.sources
    assert kiln.missing == ["test-kb"] and kiln.partial == ["test-kb"] and state.ok  # searchable
    assert debt.partial == 1 and debt.sources == 0 and debt.nothing  # searchable: /ready does not wait
    assert at_start.offered == []  # `mrpvm ask` does not wait for the rest of a partial index
    assert again.offered == ["docs/kiln.md -> test-kb (partial)"]
    assert still.sources[0].partial == ["test-kb"]
    assert other.notified == ["test-kb"] and done.ok
    assert all(s.acknowledged == ["test-kb"] and s.partial == [] for s in done.sources)
    assert debt_after.partial == 0
    upserts = [c for c in calls(tmp_path, kb.id) if c["action"] == "upsert"]
    kiln_id = kiln.sourceId
    assert sum(1 for c in upserts if c["sourceId"] == kiln_id) == 3  # two partial answers, then success


def test_kb_check_offers_a_partial_source_once_and_with_complete_until_it_is_whole(tmp_path):
    async def work(ctx):
        kb = ctx.store.create_kb("docs")
        await ingest_source(ctx, kb, "kiln.md", TEXT.replace("=2@@", "=4@@"), sd_plugin="test-sd")
        once = await check_kb(ctx, "docs", repair=True)  # one offer: still partial, but searchable: ok
        after_once = await check_kb(ctx, "docs", repair=False)
        return kb, once, after_once, await check_kb(ctx, "docs", repair=True, complete=True)

    kb, once, after_once, report = run_kernel(tmp_path, work, enabled=ENABLED)
    assert once.ok and after_once.ok and after_once.sources[0].partial == ["test-kb"]
    assert once.partial == after_once.partial == ["kiln.md (test-kb)"] and report.partial == []
    assert report.ok and report.sources[0].partial == ["test-kb"]  # the state before the repair
    assert report.repaired is not None and report.repaired.offered == ["docs/kiln.md -> test-kb (partial)"]
    assert not any("in part" in w for w in report.repaired.warnings)  # whole now: no stale "in part" notes
    assert len([c for c in calls(tmp_path, kb.id) if c["action"] == "upsert"]) == 5  # 1 + 1 + 3 offers
