"""``parse()`` for model scripts: TurnkeyML's standard script parameters.

A model script asks for the parameters it uses and gets their values, from its command line
(``python model.py --batch_size 8``, or mlprof's ``--script-args``) or the defaults::

    from mlprof.parser import parse
    batch_size, max_seq_length = parse(["batch_size", "max_seq_length"])

Both ``--batch_size 8``, ``--batch_size=8`` and ``--batch-size 8`` are accepted; unknown
arguments are left alone for the script itself.

While mlprof runs a script, ``from turnkeyml.parser import parse`` gives this ``parse`` too
(unless a real ``turnkeyml`` is installed): TurnkeyML's scripts run unchanged
(:mod:`mlprof.model.sandbox`).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any


def _bool(value: str | bool) -> bool:
    if isinstance(value, bool):
        return value
    v = str(value).strip().lower()
    if v in ("1", "true", "yes", "y", "on"):
        return True
    if v in ("0", "false", "no", "n", "off"):
        return False
    raise argparse.ArgumentTypeError(f"expected a boolean, got {value!r}")


@dataclass(frozen=True)
class Arg:
    """One standard parameter: name, default, type and meaning."""

    name: str
    default: Any
    type: Any
    help: str = ""


#: TurnkeyML's standardized parameters, same names and defaults
ARGS: dict[str, Arg] = {a.name: a for a in [
    Arg("batch_size", 1, int, "batch size of the model's inputs"),
    Arg("max_seq_length", 128, int, "sequence length of the model's inputs"),
    Arg("max_audio_seq_length", 25600, int, "sequence length of audio inputs"),
    Arg("height", 224, int, "height of input images"),
    Arg("num_channels", 3, int, "channels of input images"),
    Arg("width", 224, int, "width of input images"),
    Arg("pretrained", False, _bool, "use pretrained weights (never downloaded by mlprof)"),
    Arg("k", 8, int, "GNN: k"),
    Arg("alpha", 2.2, float, "GNN: alpha"),
    Arg("out_channels", 16, int, "GNN: output channels"),
    Arg("num_layers", 8, int, "GNN: number of layers"),
    Arg("in_channels", 1433, int, "GNN: input channels"),
]}


def parse(names: Sequence[str], argv: Sequence[str] | None = None) -> list[Any]:
    """Return the values of the standard parameters ``names``, in that order.

    ``argv`` defaults to ``sys.argv[1:]``. Unknown names raise ``ValueError`` listing the
    known ones.
    """
    unknown = [n for n in names if n not in ARGS]
    if unknown:
        raise ValueError(f"unknown parameter(s) {', '.join(unknown)}; known: "
                         f"{', '.join(ARGS)}")
    parser = argparse.ArgumentParser(add_help=False, allow_abbrev=False)
    for n in names:
        a = ARGS[n]
        flags = [f"--{n}"] + ([f"--{n.replace('_', '-')}"] if "_" in n else [])
        parser.add_argument(*flags, dest=n, type=a.type, default=a.default, help=a.help)
    args, _ = parser.parse_known_args(list(sys.argv[1:] if argv is None else argv))
    return [getattr(args, n) for n in names]
