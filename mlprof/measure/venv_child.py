"""Entry point of a measurement in another environment: ``python -m mlprof.measure.venv_child
JOB.json`` (see :mod:`mlprof.measure.venvs`). Writes the result as ``.npz``; an error is one
JSON line on stdout and exit status 1."""

from __future__ import annotations

import json
import sys


def main(job_file: str) -> int:
    """Run the job; 0 on success."""
    import numpy as np

    from mlprof.errors import MLProfError
    from mlprof.measure.harness import MeasureSettings, measure

    with open(job_file) as f:
        job = json.load(f)
    try:
        result = measure(job["model_file"], MeasureSettings(**job["settings"]),
                         tuple(job["script_args"]), reference_file=job.get("reference_file"))
    except MLProfError as e:
        print(json.dumps({"error": str(e), "status": getattr(e, "status", None)}))
        return 1
    tmp = job["output"] + ".tmp.npz"
    np.savez(tmp, batch_size=result.batch_size, samples_ns=result.samples_ns,
             events=result.events, calls=result.calls,
             provenance=json.dumps(result.provenance, default=str))
    import os

    os.replace(tmp, job["output"])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
