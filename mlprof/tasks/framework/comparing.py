"""The mixins of tasks that compare configurations on one plot: ``--compare SETTING=V1,V2``
(one measurement setting varied, each value a curve or configuration) and ``--interleave
[ROUNDS]`` (the configurations measured in alternating rounds in one process), with the
rounds' parameter type and the curve label of a compared value.
"""

from __future__ import annotations

from typing import Any

import luigi

from mlprof.errors import MLProfError
from mlprof.results import layout
from mlprof.tasks.framework.base import BaseTask
from mlprof.tasks.framework.mixins import refuse_given
from mlprof.tasks.framework.parameters import AsciiIntParameter


class RoundsParameter(AsciiIntParameter):
    """An integer option that may be given without a value: ``--interleave`` means
    :data:`~mlprof.measure.settings.DEFAULT_ROUNDS` rounds, ``--interleave 40`` 40."""

    def _parser_kwargs(self, *args, **kwargs):
        from mlprof.measure.settings import DEFAULT_ROUNDS

        kw = super()._parser_kwargs(*args, **kwargs)
        kw["nargs"] = "?"
        kw["const"] = str(DEFAULT_ROUNDS)
        return kw


class InterleaveMixin(BaseTask):
    """``--interleave [ROUNDS]``: compare the configurations in alternating rounds."""

    exclude_index = True

    # Any: the tasks without the option set a plain 0 (PlotThroughput, PlotSpeedup)
    interleave: Any = RoundsParameter(
        default=0, description="measure the compared configurations "
        "in this many alternating rounds in one process per batch "
        "size and plot speed-ups with 95-percent confidence "
        "intervals "
        "(--interleave alone: 20 rounds); default: 0 (independent "
        "curves)")


class CompareMixin(BaseTask):
    """``--compare SETTING=V1,V2,...``: one measurement setting varied on one plot (``threads=1,2``,
    ``n_events=1,4``, ``input_data=random,zeros``), each value a curve or configuration of its
    own; the setting's own option is then refused (it would be ignored). The values reach the
    output path through :meth:`compare_part`."""

    exclude_index = True

    compare = luigi.Parameter(default="", description="put several values of one measurement "
                              "setting on one plot, e.g. threads=1,2 (settings: threads, "
                              "n_calls, n_events, warmup, min_duration, input_data); default: "
                              "none")

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._compared: tuple[str, tuple] | None = None
        if not self.compare:
            return
        from mlprof.measure.settings import COMPARE_FIELD, check_threads_here, parse_compare

        name, values = parse_compare(self.compare)
        if name in dict(self.get_params()):  # not min_duration of an interleaved comparison
            refuse_given(self, (name,), f"is compared by --compare {self.compare}; give its "
                         "values there only")
        if name == "threads":
            for v in values:
                try:
                    check_threads_here(v, allow_more=bool(getattr(self, "oversubscribe", False)))
                except MLProfError as e:
                    raise MLProfError(f"threads={v}: {e.message}", field=COMPARE_FIELD) from None
        self._compared = (name, values)

    @property
    def compared(self) -> tuple[str, tuple] | None:
        """(setting, values) of --compare, None without it."""
        return self._compared

    def compared_settings(self) -> list[tuple[tuple[str, object], ...]]:
        """Per compared value the settings override of one configuration (``(("threads", 2),)``);
        one empty override without --compare."""
        if self._compared is None:
            return [()]
        name, values = self._compared
        return [((name, v),) for v in values]

    def corner_threads(self) -> int | str:
        """What a plot's corner says about threads: ``--threads``, or ``threads=1,2`` when they
        are the compared setting (each curve's label then names its own)."""
        if self._compared is not None and self._compared[0] == "threads":
            return "threads=" + ",".join(str(v) for v in self._compared[1])
        return int(getattr(self, "threads", 1))

    def compare_part(self) -> str:
        """``compare-threads-1-2``: the compared values as a path part ("" without); an input
        file by its name and content hash, so another file's values are another result."""
        if self._compared is None:
            return ""
        from mlprof.measure.settings import INPUT_KINDS

        name, values = self._compared
        tags = []
        for v in values:
            if name == "input_data" and v not in INPUT_KINDS:
                from mlprof.util import sha256_file

                tags.append(layout.input_tag(v, sha256_file(v)))
            else:
                tags.append(layout.float_tag(v) if isinstance(v, float) else str(v))
        return f"compare-{name.replace('_', '-')}-{layout.joined_or_hashed(tags, 48)}"


def setting_label(override: tuple[tuple[str, object], ...]) -> str:
    """``threads=2``: what a curve's label says about its compared setting (an input file by its
    name)."""
    import os

    return ", ".join(f"{k}={os.path.basename(v) if isinstance(v, str) else v}"
                     for k, v in override)
