"""Generation timing (issue 37): time to first token, time per output token and tokens/s of
decoder models on several runtimes, with the generated tokens checked across runtimes.

Modules: ``timing`` (one timed ``generate`` call: :class:`~.timing.TimedGeneration`; the
backend protocol and :func:`~.timing.open_backend`), ``backends`` (torch, torch-compile, ONNX
Runtime, OpenVINO through the libraries the field uses for generation on each), ``agreement``
(teacher-forced token agreement with the margin rule), ``metrics`` (TTFT, TPOT, ITL, tokens/s
with their formulas and bootstrap intervals), ``settings`` (the options of a generation point),
``run`` (one point: runtimes in interleaved rounds, isolated, under the lock, with the cause
record). No law imports.
"""
