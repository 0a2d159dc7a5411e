"""Input generation: random, incremental, zeros, ones, or arrays from a .npz/.npy file.

Inputs are built once, before any timing, one feed per event.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from mlprof.errors import MLProfError
from mlprof.measure.settings import INPUT_KINDS, check_batch_size, check_input_data, check_setting
from mlprof.model.spec import InputSpec

_INT_RANGE = 8          # random/incremental integers lie in [0, 8): safe for small embeddings
_FLOAT_PERIOD = 1024    # incremental floats wrap here, so float16 stays finite


def make_feeds(inputs: Sequence[InputSpec], batch_size: int, n_events: int = 1,
               kind: str = "random", seed: int = 0) -> list[dict[str, np.ndarray]]:
    """Build ``n_events`` feeds (dicts of C-contiguous arrays) for ``batch_size``."""
    batch_size = check_batch_size(batch_size)
    n_events = check_setting("n_events", n_events)
    kind = check_input_data(kind)
    if kind in INPUT_KINDS:
        rng = np.random.default_rng(seed)
        return [{i.name: _generate(i, batch_size, e, kind, rng) for i in inputs}
                for e in range(n_events)]
    arrays = _load_file(kind, inputs)
    return [{i.name: _slice_file(arrays[i.name], i, batch_size, e, kind) for i in inputs}
            for e in range(n_events)]


def _generate(spec: InputSpec, batch_size: int, event: int, kind: str,
              rng: np.random.Generator) -> np.ndarray:
    shape = spec.full_shape(batch_size)
    dt = np.dtype(spec.dtype)
    if kind == "zeros":
        return np.zeros(shape, dtype=dt)
    if kind == "ones":
        return np.ones(shape, dtype=dt)
    size = int(np.prod(shape, dtype=np.int64))
    if kind == "incremental":
        base = np.arange(size, dtype=np.int64) + event * size
        if dt == np.bool_:
            arr = (base % 2).astype(bool)
        elif np.issubdtype(dt, np.integer):
            arr = (base % _INT_RANGE).astype(dt)
        else:
            arr = (base % _FLOAT_PERIOD).astype(dt)
        return np.ascontiguousarray(arr.reshape(shape))
    # random
    if dt == np.bool_:
        return rng.random(shape) < 0.5
    if np.issubdtype(dt, np.integer):
        return rng.integers(0, 2 if _is_mask(spec.name) else _INT_RANGE, size=shape, dtype=dt)
    return rng.standard_normal(shape).astype(dt)


def _is_mask(name: str) -> bool:
    """Whether an integer input is a mask (``attention_mask``, ``token_type_ids`` are not):
    its values are 0 or 1 by definition. Random values up to 7 made OPT's position ids (the
    cumulative sum of its attention mask) run past its 2,050 positions."""
    return "mask" in name.lower()


def _load_file(path: str, inputs: Sequence[InputSpec]) -> dict[str, np.ndarray]:
    try:
        loaded = np.load(path, allow_pickle=False)
    except Exception as e:
        raise MLProfError(f"cannot read arrays: {e}", path, "--input-data") from None
    names = [i.name for i in inputs]
    if isinstance(loaded, np.ndarray):  # .npy: one array
        if len(inputs) != 1:
            raise MLProfError(f"a .npy file holds one array, but the model has {len(inputs)} "
                              f"inputs ({', '.join(names)}); use a .npz with one array per input "
                              "name", path, "--input-data")
        return {names[0]: loaded}
    with loaded:
        keys = list(loaded.keys())
        if all(n in keys for n in names):
            return {n: loaded[n] for n in names}
        positional = [f"arr_{k}" for k in range(len(names))]
        if keys == positional:
            return {n: loaded[k] for n, k in zip(names, positional, strict=False)}
    missing = [n for n in names if n not in keys]
    raise MLProfError(f"no array for input(s) {', '.join(missing)}; the file has "
                      f"{', '.join(keys) or 'no arrays'}", path, "--input-data")


def _slice_file(arr: np.ndarray, spec: InputSpec, batch_size: int, event: int,
                path: str) -> np.ndarray:
    fld = f"--input-data[{spec.name}]"
    target = np.dtype(spec.dtype)
    if arr.dtype != target and not np.can_cast(arr.dtype, target, casting="same_kind"):
        raise MLProfError(f"array dtype {arr.dtype} cannot be used for input '{spec.name}' of "
                          f"dtype {spec.dtype}", path, fld)
    if not spec.batched:
        if tuple(arr.shape) != spec.shape:
            raise MLProfError(f"array shape {list(arr.shape)} does not match input "
                              f"'{spec.name}' shape {list(spec.shape)}", path, fld)
        return np.ascontiguousarray(arr.astype(target, copy=False))
    if arr.ndim != len(spec.shape) + 1 or tuple(arr.shape[1:]) != spec.shape:
        raise MLProfError(f"array shape {list(arr.shape)} does not match input '{spec.name}': "
                          f"expected [rows, {', '.join(map(str, spec.shape))}]", path, fld)
    if arr.shape[0] == 0:
        raise MLProfError(f"array for input '{spec.name}' has no rows", path, fld)
    # rows for this event, wrapping around when the file has fewer rows than needed
    rows = (np.arange(batch_size) + event * batch_size) % arr.shape[0]
    return np.ascontiguousarray(arr[rows].astype(target, copy=False))
