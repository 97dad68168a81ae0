"""The names a collective call records on the host, in one place: the backend's span of a c10d Work
(``nccl:all_reduce``, an async RecordFunction: c10d/Work.cpp calls _setAsync on it), c10d's dispatcher ops (also
the functional collectives), ``record_param_comms`` and the process group's own methods."""

from __future__ import annotations

import re

BACKEND_SPAN = re.compile(r"^(nccl|gloo|mpi|ucc|xccl|hccl):")
COLLECTIVE_CALL = re.compile(BACKEND_SPAN.pattern + r"|^_?c10d(_functional)?::|^record_param_comms$|^ProcessGroup\w*::")
