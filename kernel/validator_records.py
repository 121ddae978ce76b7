"""How far each validator's verdicts can be trusted, measured where the truth is known: in evaluations.

At run time nothing tells whether a validator's rejection was right, so its precision is measured by
`mrpvm eval`, which scores the very answer each verdict judged against the suite's expectations and
records the counts here (`<home>/validator-records.json`, written atomically). The engine reads them:
a validator whose rejections have been measured wrong more often than TRUST_PRECISION cannot reject an
answer its cited evidence supports (kernel/engine/stages.py); unmeasured validators keep their full say.
"""

from __future__ import annotations

import os
from pathlib import Path

import msgspec

FILE_NAME = "validator-records.json"
MIN_SAMPLES = 8  # rejections measured before the precision is acted on
TRUST_PRECISION = 0.6  # a rejection binds only from a validator right at least this often
SUPPORTED = 0.6  # evidence support above which an untrusted rejection is overruled


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


_decoder = msgspec.json.Decoder(ValidatorRecords)


def load(home: Path) -> ValidatorRecords:
    """The records under `home`; empty when there are none or the file is damaged (never fatal)."""
    try:
        return _decoder.decode((home / FILE_NAME).read_bytes())
    except (OSError, msgspec.DecodeError):
        return ValidatorRecords()


def add_measured(home: Path, measured: ValidatorRecords) -> ValidatorRecords:
    """Add an evaluation's counts to the records under `home` (atomic replace); the merged records."""
    records = load(home)
    records.merge(measured)
    home.mkdir(parents=True, exist_ok=True)
    path = home / FILE_NAME
    tmp = path.with_name(f".{FILE_NAME}.{os.getpid()}.tmp")
    tmp.write_bytes(msgspec.json.format(msgspec.json.encode(records), indent=1))
    os.replace(tmp, path)
    return records
