"""This host's noise floor: how far one configuration measured against itself moves, and so the
smallest change a comparison or an alert on this host can honestly call a change.

A floor is measured by CalibrateNoise (interleaved A/A pairs, :func:`calibrate`) and stored in
``<store>/CalibrateNoise/<host>/fp-<fingerprint id>/<revision>/noise.json``
(:class:`mlprof.results.records.NoiseRecord`). It belongs to the machine's fingerprint
(:func:`mlprof.sysinfo.host_fingerprint`): a new kernel, other runtime versions or a
smaller CPU quota make a new fingerprint, which has no floor until it is calibrated again.

Readers ask :func:`find_floor` for the record of a fingerprint (this machine's by default) and
judge a figure by :meth:`~mlprof.results.records.NoiseRecord.floor_for` its call time and
threads; without a record they use their own fixed rules and say that the host is not
calibrated.
"""

from __future__ import annotations

import logging
import math
import os
from typing import Any

from mlprof import ingest
from mlprof.errors import MLProfError
from mlprof.results import layout
from mlprof.results.records import NoiseRecord

logger = logging.getLogger(__name__)

#: the message of a reader that found no floor for the fingerprint
NOT_CALIBRATED = "this host's noise floor is not measured (law run CalibrateNoise)"
#: the same, where a value is shown (``mlprof system-info``)


def read_noise(path: str) -> NoiseRecord:
    """A noise record, checked (a one-line :class:`~mlprof.errors.MLProfError` naming the file
    and the field otherwise)."""
    try:  # through mlprof.ingest: a FIFO or a device there is one line, never a hang
        record = ingest.load_json(path)
    except MLProfError as e:
        raise MLProfError(f"cannot read the noise record: {e.message}", path,
                          "classes") from None
    return NoiseRecord.from_json(record, path)


def noise_paths(store: str, fingerprint_id: str) -> list[str]:
    """The noise records of ``fingerprint_id`` in ``store`` (of any host name and revision),
    the newest revision directory first."""
    base = os.path.join(store, "CalibrateNoise")
    seg = layout.fingerprint_segment(fingerprint_id)
    out = []
    try:
        hosts = sorted(os.listdir(base))
    except OSError:
        return []
    for host in hosts:
        fdir = os.path.join(base, host, seg)
        try:
            revisions = sorted(os.listdir(fdir), reverse=True)
        except OSError:
            continue
        for rev in revisions:
            path = os.path.join(fdir, rev, layout.NOISE_FILE)
            if os.path.isfile(path) and not os.path.islink(path):
                out.append(path)
    return out


def find_floor(store: str | None = None, fingerprint_id: str | None = None,
               warn: bool = True) -> NoiseRecord | None:
    """The noise record of ``fingerprint_id`` (this machine's by default) in ``store`` (the
    configured store by default), None when there is none; a damaged record is skipped, with
    a one-line warning naming its file and field (``warn``), never a number."""
    from mlprof.sysinfo import fingerprint_id as current

    store = store or layout.store_base()
    fid = fingerprint_id or current()
    for path in noise_paths(store, fid):
        try:
            record = read_noise(path)
            if record.fingerprint_id != fid:  # copied or moved: another machine's floor
                raise MLProfError(f"the record is of fingerprint {record.fingerprint_id}, "
                                  f"its directory of {fid}", path, "fingerprint_id")
            return record
        except MLProfError as e:
            if warn:
                logger.warning("skipped a damaged noise record: %s", e)
    return None


def floor_summary(record: NoiseRecord) -> list[dict[str, Any]]:
    """Each class of ``record`` as the figures a reader states: call time, threads, pairs,
    floor and interval, median ``|ratio - 1|`` and the minimum detectable change (2 x floor);
    what ``nightly.json`` and ``mlprof system-info`` show."""
    return [{"call_ms": c.call_ms, "threads": c.threads, "pairs": c.pairs, "floor": c.floor,
             "ci_low": c.ci_low, "ci_high": c.ci_high, "median_abs": c.median_abs,
             "min_detectable": 2.0 * c.floor} for c in record.classes]


def describe_class(c: Any) -> str:
    """One class of a record in words: ``0.021 ms calls, 1 thread(s): floor 3.1 % [2.0, 4.5],
    minimum detectable change 6.2 %`` (``c``: a :class:`NoiseClass` or its JSON)."""
    def get(key: str) -> Any:
        return c[key] if isinstance(c, dict) else getattr(c, key)

    return (f"{_ms(get('call_ms'))} calls, {get('threads')} thread(s): floor "
            f"{100 * get('floor'):.1f} % [{100 * get('ci_low'):.1f}, "
            f"{100 * get('ci_high'):.1f}], minimum detectable change "
            f"{200 * get('floor'):.1f} % ({get('pairs')} A/A pairs)")


def _ms(v: float) -> str:
    return f"{v:.3g} ms" if math.isfinite(v) else "? ms"

# --- how verdicts use a floor (pure helpers: alerts, interleaved and --compare verdicts,
# Report and the dashboard all word it the same way) ----------------------------------------

#: what a reader without a floor says, once (Report, dashboard, comparison tables, alerts)
NOT_CALIBRATED_SHORT = "not calibrated: law run CalibrateNoise"


def percent(floor: float) -> str:
    """A relative floor as per cent, as every verdict writes it: ``0.0412`` -> ``"4.1"``."""
    return f"{100 * floor:.1f}"


def within_noise(floor: float) -> str:
    """The verdict of a speed-up whose interval excludes 1 but whose distance from 1 is within
    the host's floor: the rounds tell the two apart, the host does not (an A/A pair of this
    host moves that far in 1 of 20 rounds)."""
    return f"within this host's noise (floor {percent(floor)} %)"


def is_within_floor(speedup: float, floor: float | None) -> bool:
    """Whether ``|speedup - 1|`` is within ``floor`` (never without a floor)."""
    return floor is not None and abs(speedup - 1.0) <= floor


def calibration_date(record: NoiseRecord) -> str:
    """The day the record was calibrated (its header's timestamp), ``"?"`` without one."""
    ts = record.header.timestamp
    return str(ts)[:10] if ts else "?"


def min_detectable_text(record: NoiseRecord | None, host: str = "this host") -> str:
    """One line: the smallest change this host can tell from noise (2 x floor), per class
    where the classes differ (by a tenth of a per cent or more), with the fingerprint id and
    the calibration date; ``"minimum detectable change: not calibrated: law run
    CalibrateNoise"`` without a record. ``host`` names the machine (another host's records
    in a report of several).

    Why per class: short calls and many threads move more between A/A rounds than long
    single-threaded ones; one number for all would hide small regressions of the steady
    configurations or call the noise of the unsteady ones a change."""
    if record is None:
        return (f"minimum detectable change{'' if host == 'this host' else ' on ' + host}: "
                f"{NOT_CALIBRATED_SHORT}")
    where = f"fingerprint {record.fingerprint_id}, calibrated {calibration_date(record)}"
    shown = {percent(2 * c.floor) for c in record.classes}
    if len(shown) == 1:
        return f"minimum detectable change on {host}: {shown.pop()} % (2 x floor; {where})"
    parts = [f"{percent(2 * c.floor)} % for {c.call_ms:.3g} ms calls with {c.threads} "
             f"thread{'s' if c.threads != 1 else ''}"
             for c in sorted(record.classes, key=lambda c: (c.threads, c.call_ms))]
    return f"minimum detectable change on {host}: {'; '.join(parts)} (2 x floor; {where})"
