"""This host's noise floor: how far one configuration measured against itself moves, and so the
smallest change a comparison or an alert on this host can honestly call a change.

A floor is measured by CalibrateNoise (interleaved A/A pairs, :func:`calibrate`) and stored in
``<store>/CalibrateNoise/<host>/fp-<fingerprint id>/<revision>/noise.json``
(:class:`mlprof.results.records.NoiseRecord`). It belongs to the machine's fingerprint
(:func:`mlprof.measure.sysinfo.host_fingerprint`): a new kernel, other runtime versions or a
smaller CPU quota make a new fingerprint, which has no floor until it is calibrated again.

Readers ask :func:`find_floor` for the record of a fingerprint (this machine's by default) and
judge a figure by :meth:`~mlprof.results.records.NoiseRecord.floor_for` its call time and
threads; without a record they use their own fixed rules and say that the host is not
calibrated.
"""

from __future__ import annotations

import logging
import os

from mlprof import ingest
from mlprof.errors import MLProfError
from mlprof.results import layout
from mlprof.results.records import NoiseRecord

logger = logging.getLogger(__name__)

#: the message of a reader that found no floor for the fingerprint
NOT_CALIBRATED = "this host's noise floor is not measured (law run CalibrateNoise)"


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
    from mlprof.measure.sysinfo import fingerprint_id as current

    store = store or layout.store_base()
    fid = fingerprint_id or current()
    for path in noise_paths(store, fid):
        try:
            return read_noise(path)
        except MLProfError as e:
            if warn:
                logger.warning("skipped a damaged noise record: %s", e)
    return None
