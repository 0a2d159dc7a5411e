"""A model page's plots as SVG files: latency, throughput and speed-up vs batch size, and the
latency distributions.

Drawn here (:mod:`mlprof.report.site.svg`), not by matplotlib: cheap at the corpus scale.
Speed-ups compare like with like on the measurement settings (device, threads, calls, ...), so
a script measured through its ONNX export is compared too; the export is in the caption.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Mapping
from typing import Any

import numpy as np

from mlprof.report.site.page import figure_html
from mlprof.report.site.series import norm, settings_parts, version_key
from mlprof.report.site.svg import XYCurve, box_plot, line_chart
from mlprof.report.site.table import flag, fmt, number
from mlprof.results import layout

#: a curve: its label, its rows (a DataFrame by batch size) and its first row
Curve = tuple[str, Any, dict]


def _curve_label(row: Mapping[str, Any], vary: set[str], common: set[str]) -> str:
    """A legend label: runtime and version, then only what differs between the curves."""
    parts = [f"{row['runtime']} {row['runtime_version']}".strip()]
    if "device" in vary:
        parts.append(str(row["device"]))
    if "threads" in vary:
        parts.append(f"{fmt('threads', row['threads'])} threads")
    if "settings_key" in vary:  # only what differs, e.g. "calls20 warmup1"
        tokens = [t for t in re.split(r"_+", str(row["settings_key"])) if t not in common]
        parts.append(" ".join(tokens)[:40])
    return ", ".join(p for p in parts if p.strip())


def _col(g, name: str) -> list[float]:
    return [v if v is not None else math.nan for v in map(number, g[name])]


def _untrusted(g) -> list[bool]:
    return [flag(u) or flag(c) for u, c in zip(g["unstable"], g["contended"], strict=True)]


def _samples(g) -> dict[int, np.ndarray]:
    """Each batch size's per-call samples of a curve (validated like every result: a branch
    changed since the report was read is left out)."""
    from mlprof.measure.results import CorruptResult, read_branch

    per = {}
    for r in g.itertuples():
        branch = layout.parse_branch_file(str(r.path))
        if branch is None:
            continue
        csv_path = os.path.join(os.path.dirname(str(r.path)),
                                layout.branch_files(branch[0])["csv"])
        try:
            per[int(r.batch_size)] = read_branch(csv_path, str(r.path))[0]
        except (CorruptResult, OSError):
            continue
    return per


def _curves(ok) -> list[Curve]:
    """One curve per runtime, version, device, threads and settings, labelled by what differs."""
    group_cols = ["runtime", "runtime_version", "device", "threads", "settings_key"]
    vary = {c for c in ("device", "threads", "settings_key") if ok[c].nunique() > 1}
    token_sets = [set(re.split(r"_+", str(k))) for k in ok["settings_key"].unique()]
    common = set.intersection(*token_sets) if token_sets else set()
    curves = []
    for _, g in ok.groupby(group_cols, sort=True, dropna=False):
        g = g.sort_values("batch_size")
        first = g.iloc[0].to_dict()
        curves.append((_curve_label(first, vary, common), g, first))
    return curves


def _latency_throughput(curves: list[Curve]) -> tuple[list[XYCurve], list[XYCurve]]:
    """Latency per event (median, 16-84 % band) and throughput curves."""
    lat, thr = [], []
    for label, g, _ in curves:
        bs = _col(g, "batch_size")
        # per event: the events per call (1 for a model without a batch dimension; the batch
        # size in reports from before the column)
        ev = _col(g, "events_per_call") if "events_per_call" in g else bs
        ev = [e if e == e else b for b, e in zip(bs, ev, strict=True)]  # NaN: an older row

        def per(name: str, ev: list[float] = ev, g: Any = g) -> list[float]:
            return [v / d for v, d in zip(_col(g, name), ev, strict=True)]

        lat.append(XYCurve(label, bs, per("median_ms"), per("p16_ms"), per("p84_ms"),
                           _untrusted(g)))
        thr.append(XYCurve(label, bs, _col(g, "throughput"), open=_untrusted(g)))
    return lat, thr


def _speedup(curves: list[Curve], reference_runtime: str) -> tuple[str, str] | None:
    """The speed-up chart vs the newest version of the reference runtime and its caption:
    like with like on the *measurement* settings; a script measured through its ONNX export
    differs only in the export, which the caption names. None without a reference or peer."""
    refs = sorted((c for c in curves if c[2]["runtime"] == reference_runtime),
                  key=lambda t: version_key(str(t[2]["runtime_version"])))
    if not refs:
        return None
    rlabel, rg, rfirst = refs[-1]

    def same(first: Mapping[str, Any]) -> bool:
        return (str(first["device"]) == str(rfirst["device"])
                and norm(first["threads"]) == norm(rfirst["threads"])
                and settings_parts(first["settings_key"])[0]
                == settings_parts(rfirst["settings_key"])[0])

    ref = dict(zip(_col(rg, "batch_size"), _col(rg, "median_ms"), strict=True))
    spd, used = [], [(rlabel, rfirst)]
    for label, g, first in curves:
        if label == rlabel or not same(first):
            continue
        pts = [(b, ref[b] / m) for b, m in zip(_col(g, "batch_size"), _col(g, "median_ms"),
                                               strict=True)
               if b in ref and m and m > 0 and math.isfinite(ref[b])]
        if pts:
            spd.append(XYCurve(label, [b for b, _ in pts], [v for _, v in pts]))
            used.append((label, first))
    if not spd:
        return None
    exports = sorted({f"{f['runtime']} {settings_parts(f['settings_key'])[1]}"
                      for _, f in used if settings_parts(f["settings_key"])[1]})
    caption = (f"Speed-up vs {rlabel} (reference): its median latency / the curve's; "
               "same device, threads and measurement settings")
    if exports:
        caption += "; measured on the ONNX export: " + ", ".join(exports)
    return line_chart(spd, x_label="batch size", y_label=f"speed-up vs {rlabel}", y_log=False,
                      reference=1.0, reference_label=f"{rlabel} (reference)",
                      title="speed-up vs the reference runtime"), caption


def model_plots(rows, img_dir: str, slug: str, reference_runtime: str) -> list[str]:
    """The model's plots as ``<figure>`` HTML, each an SVG file ``img/<slug>_<name>.svg``:
    latency, throughput and speed-up vs batch size and the latency distributions."""
    ok = rows[rows["status"] == "ok"]
    if ok.empty:
        return []
    curves = _curves(ok)
    out: list[str] = []

    def save(svg: str, name: str, caption: str) -> None:
        if svg:
            fname = f"{slug}_{name}.svg"
            with open(os.path.join(img_dir, fname), "w") as f:
                f.write(svg)
            out.append(figure_html("../img/" + fname, caption, f"plot-{name}"))

    lat, thr = _latency_throughput(curves)
    save(line_chart(lat, x_label="batch size", y_label="latency per event [ms] (median, "
                    "16-84% band)", title="latency per event vs batch size"), "latency",
         "Latency per event vs batch size (median, 16-84% band)")
    save(line_chart(thr, x_label="batch size", y_label="throughput [events/s]",
                    title="throughput vs batch size"), "throughput",
         "Throughput vs batch size (events/s, the results table's column)")
    speedup = _speedup(curves, reference_runtime)
    if speedup:
        save(speedup[0], "speedup", speedup[1])
    samples = {label: per for label, g, _ in curves if (per := _samples(g))}
    if samples and (svg := box_plot(samples)):
        save(svg.replace("<svg ", '<svg xmlns="http://www.w3.org/2000/svg" '
                         'font-family="system-ui,sans-serif" ', 1), "distributions",
             "Latency per call: distribution per batch size (box 16-84%, median, "
             "whiskers 1-99%)")
    return out
