"""Where the bundled data files (``patterns/``) are: inside the wheel, or beside the source tree."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path


@lru_cache(maxsize=1)
def patterns_dir() -> Path:
    here = Path(__file__).resolve().parent
    for cand in (here / "_patterns", here.parent / "patterns"):
        if (cand / "layouts.toml").is_file():
            return cand
    raise FileNotFoundError("logsleuth's bundled patterns/ directory is missing from this installation")
