"""How far each validator's verdicts can be trusted, measured where the truth is known: in evaluations.

At run time nothing tells whether a validator's rejection was right, so its precision is measured by
`mrpvm eval`, which scores the very answer each verdict judged against the suite's expectations and
records the counts in the store every node shares (kernel/store_learning.py; a home's
`validator-records.json` from before is added once when a kernel opens). The engine reads them:
a validator whose rejections have been measured wrong more often than TRUST_PRECISION cannot reject an
answer its cited evidence supports, and an acceptance by one measured not to tell right answers from wrong
ones (MIN_LIFT) validates nothing (kernel/engine/stages.py), and one measured to be noise both ways is not
called at all unless pinned (`sets_aside`: frame_run.py); unmeasured validators keep their full say.
"""

from __future__ import annotations

import hashlib
import logging
from pathlib import Path
from typing import TYPE_CHECKING

import msgspec

if TYPE_CHECKING:
    from .store import Store

FILE_NAME = "validator-records.json"
MIN_SAMPLES = 8  # rejections measured before the precision is acted on
TRUST_PRECISION = 0.6  # a rejection binds only from a validator right at least this often
SUPPORTED = 0.6  # evidence support above which an untrusted rejection is overruled
# An acceptance is evidence only from a validator whose acceptances were right this much more often than
# the answers it rejected (P(right | accepted) - P(right | rejected)), measured on MIN_SAMPLES verdicts. One
# that accepts everything tells right answers from wrong ones no better than chance.
MIN_LIFT = 0.2
log = logging.getLogger("mrpvm.validator_records")


class ValidatorRecord(msgspec.Struct, kw_only=True):
    """Verdicts scored against the evaluation: rejections of wrong answers are right, and so are
    acceptances of right ones."""

    rejected: int = 0
    rightRejections: int = 0
    accepted: int = 0
    rightAcceptances: int = 0

    def reject_precision(self) -> float | None:
        """Share of its rejections that were right, once MIN_SAMPLES were measured; else None."""
        if self.rejected < MIN_SAMPLES:
            return None
        return self.rightRejections / self.rejected

    def accept_precision(self) -> float | None:
        return self.rightAcceptances / self.accepted if self.accepted else None

    def lift(self) -> float | None:
        """P(right | accepted) - P(right | rejected) once MIN_SAMPLES verdicts were measured; 0.0 for a
        validator that gave (all but once) one kind of verdict: it did not tell answers apart; None:
        unmeasured."""
        if self.accepted + self.rejected < MIN_SAMPLES:
            return None
        if min(self.accepted, self.rejected) < 2:
            return 0.0
        return self.rightAcceptances / self.accepted - (self.rejected - self.rightRejections) / self.rejected

    def is_noise(self) -> bool:
        """Measured noise both ways: its acceptances do not tell right answers from wrong ones (lift below
        MIN_LIFT) and its rejections were right less often than TRUST_PRECISION (on MIN_SAMPLES). Such a
        verdict can neither validate nor rightly reject; a validator that has hardly ever rejected is not
        noise (its rejections were never measured) and is still called."""
        lift, precision = self.lift(), self.reject_precision()
        return lift is not None and lift < MIN_LIFT and precision is not None and precision < TRUST_PRECISION

    def describe(self) -> str:
        return (
            f"{self.accepted} acceptance(s), {self.rightAcceptances} right; {self.rejected} rejection(s), "
            f"{self.rightRejections} right"
        )


class ValidatorRecords(msgspec.Struct, kw_only=True):
    version: int = 1
    validators: dict[str, ValidatorRecord] = {}

    def add(self, plugin_id: str, verdict: str, right: bool) -> None:
        record = self.validators.setdefault(plugin_id, ValidatorRecord())
        if verdict == "rejected":
            record.rejected += 1
            record.rightRejections += right
        elif verdict == "accepted":
            record.accepted += 1
            record.rightAcceptances += right

    def merge(self, other: ValidatorRecords) -> None:
        for plugin_id, new in other.validators.items():
            mine = self.validators.setdefault(plugin_id, ValidatorRecord())
            mine.rejected += new.rejected
            mine.rightRejections += new.rightRejections
            mine.accepted += new.accepted
            mine.rightAcceptances += new.rightAcceptances

    def overrules(self, plugin_id: str, support: float | None) -> tuple[bool, str]:
        """(overrule this rejection?, why): an untrusted validator rejecting a supported answer."""
        record = self.validators.get(plugin_id)
        precision = record.reject_precision() if record is not None else None
        if precision is None or precision >= TRUST_PRECISION or support is None or support < SUPPORTED:
            return False, ""
        assert record is not None
        return True, (
            f"overruled: {plugin_id}'s rejections were right {record.rightRejections} of {record.rejected} "
            f"times when measured (precision {precision:.2f} < {TRUST_PRECISION}) and the answer's evidence "
            f"support is {support:.2f}"
        )

    def discounts_acceptance(self, plugin_id: str) -> tuple[bool, str]:
        """(is this validator's acceptance no evidence?, why): measured, it does not discriminate."""
        record = self.validators.get(plugin_id)
        lift = record.lift() if record is not None else None
        if lift is None or lift >= MIN_LIFT:
            return False, ""
        assert record is not None
        return True, (
            f"not counted: {plugin_id}'s verdicts did not tell right answers from wrong ones when measured "
            f"({record.describe()}; lift {lift:.2f} < {MIN_LIFT})"
        )

    def sets_aside(self, plugin_id: str) -> str | None:
        """Why this validator is not called (its verdicts were measured to be noise), or None."""
        record = self.validators.get(plugin_id)
        if record is None or not record.is_noise():
            return None
        return (
            f"not called: {plugin_id}'s verdicts were measured to be noise ({record.describe()}; lift "
            f"{record.lift():.2f} < {MIN_LIFT}, rejections right {record.reject_precision():.2f} < "
            f"{TRUST_PRECISION}); pin it to call it anyway"
        )


_decoder = msgspec.json.Decoder(ValidatorRecords)


def _counts(records: ValidatorRecords) -> dict[str, tuple[int, int, int, int]]:
    return {
        plugin_id: (r.rejected, r.rightRejections, r.accepted, r.rightAcceptances)
        for plugin_id, r in records.validators.items()
    }


def load(store: Store) -> ValidatorRecords:
    """The records in the store (empty when nothing was measured)."""
    return ValidatorRecords(
        validators={
            plugin_id: ValidatorRecord(
                rejected=c[0], rightRejections=c[1], accepted=c[2], rightAcceptances=c[3]
            )
            for plugin_id, c in store.validator_counts().items()
        }
    )


def add_measured(store: Store, measured: ValidatorRecords) -> ValidatorRecords:
    """Add an evaluation's counts to the store's records (atomic adds); the records after."""
    store.add_validator_counts(_counts(measured))
    return load(store)


def import_legacy(store: Store, home: Path) -> bool:
    """Add `<home>/validator-records.json` (the file kept before the store held the records) once, by
    its content digest, then rename it `.imported`; a damaged file is left where it is."""
    path = Path(home) / FILE_NAME
    try:
        data = path.read_bytes()
        records = _decoder.decode(data)
    except FileNotFoundError:
        return False
    except (OSError, msgspec.DecodeError) as err:
        log.warning("%s not imported: %s", path, err)
        return False
    counts = {k: c for k, c in _counts(records).items() if min(c) >= 0}
    digest = hashlib.sha256(b"validator-records\0" + data).hexdigest()
    imported = store.add_validator_counts(counts, digest=digest, what=FILE_NAME)
    try:
        path.rename(path.with_name(FILE_NAME + ".imported"))
    except OSError as err:  # the digest keeps it from being added twice anyway
        log.warning("%s imported but not renamed: %s", path, err)
    return imported
