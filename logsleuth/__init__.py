"""logsleuth: log forensics for message-broker incidents."""

import os as _os

# Polars allocates with jemalloc, which by default keeps freed pages for 10 s before it gives them
# back; a run frees and allocates chunk after chunk, so most of that time its resident memory
# carries hundreds of MB it no longer uses. Read when jemalloc starts (the first import of polars,
# which comes after this in any logsleuth process); a value the user set is kept. Measured on the
# dense benchmark log (docs/performance.md): peak RSS -10 %, CPU unchanged; 0 ms cost +20 % CPU.
_os.environ.setdefault("_RJEM_MALLOC_CONF", "dirty_decay_ms:200,muzzy_decay_ms:0")

__version__ = "0.1.0"
