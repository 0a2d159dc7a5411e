"""The model corpus under models/: generated scripts up to date, labels and no downloads.

Cheap: reads files and runs ``models/generate.py --check`` (which imports no model library);
no model is built.
"""

from __future__ import annotations

import re
import subprocess
import sys

from mlprof.model.script import read_labels
from tests.helpers import REPO

MODELS = REPO / "models"
SCRIPTS = sorted(MODELS.glob("*/*.py"))

KEYS = {"name", "author", "task", "family", "kind", "config"}
AUTHORS = {"mlprof", "torchvision", "timm", "huggingface"}
TASKS = {"test", "computer_vision", "natural_language_processing", "audio", "graph",
         "time_series"}
#: a weights enum or a pretrained download: the keyword argument weights=<anything but None>,
#: also weights_backbone=
WEIGHTS = re.compile(r"\bweights(_backbone)?=(?!=|None\b)")
FORBIDDEN = ("from_pretrained", "pretrained=True", "torch.hub", "hf_hub_download",
             "load_state_dict_from_url")


def _generated() -> set[str]:
    proc = subprocess.run([sys.executable, str(MODELS / "generate.py"), "--list"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return set(proc.stdout.split())


def test_generated_scripts_are_up_to_date():
    proc = subprocess.run([sys.executable, str(MODELS / "generate.py"), "--check"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-3000:]


def test_generator_never_touches_hand_written_scripts():
    generated = _generated()
    on_disk = {str(p.relative_to(MODELS)) for p in SCRIPTS}
    assert generated <= on_disk
    hand = on_disk - generated
    for corpus in ("selftest", "timm", "torchvision", "transformers"):
        assert any(h.startswith(f"{corpus}/") for h in hand), corpus
    assert len(hand) == 41  # the hand-written scripts of models/README.md


def test_corpus_size():
    assert len(SCRIPTS) >= 400
    corpora = {p.parent.name for p in SCRIPTS}
    assert {"selftest", "timm", "torchvision", "transformers", "graph", "recurrent"} <= corpora


def test_labels():
    generated = _generated()
    for path in SCRIPTS:
        first = path.read_text().split("\n", 1)[0]
        assert first.startswith("# labels: "), path
        labels = read_labels(str(path))
        assert set(labels) <= KEYS, (path, sorted(labels))
        for key in ("name", "author", "task"):
            assert len(labels.get(key, [])) == 1, (path, key)
        assert labels["name"] == [path.stem], path
        assert labels["author"][0] in AUTHORS, path
        assert labels["task"][0] in TASKS, path
        if str(path.relative_to(MODELS)) in generated:
            assert {"family", "kind"} <= set(labels), path
            assert labels.get("config", ["small"]) == ["small"], path


def test_labels_select_models():
    """--labels family::resnet or kind::detection picks a sensible subset."""
    kinds: dict[str, set[str]] = {}
    for path in SCRIPTS:
        for k, vs in read_labels(str(path)).items():
            for v in vs:
                kinds.setdefault(f"{k}::{v}", set()).add(path.parent.name)
    assert kinds["kind::detection"] == {"torchvision"}
    assert kinds["author::huggingface"] == {"transformers"}
    assert kinds["task::graph"] == {"graph"}
    assert "config::small" in kinds


def test_nothing_is_downloaded():
    for path in SCRIPTS:
        text = path.read_text()
        for bad in FORBIDDEN:
            assert bad not in text, (path, bad)
        assert not WEIGHTS.search(text), (path, WEIGHTS.search(text).group(0))
        assert "torch.manual_seed(0)" in text, path
        assert "parse(" in text or path.stem == "no_batch", path
