"""law tasks of mlprof: thin, declarative; the work is done by library code.

Importing this package makes sure ``MLP_BASE`` is set (to this checkout) so that the default
model file resolves even without ``source setup.sh``.
"""

import os as _os

_os.environ.setdefault(
    "MLP_BASE", _os.path.dirname(_os.path.dirname(_os.path.dirname(_os.path.abspath(__file__)))))
