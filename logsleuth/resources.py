"""Where the bundled data files (``patterns/``, ``docs/findings/``) are: inside the wheel, or beside the source tree."""

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


@lru_cache(maxsize=1)
def findings_docs_dir() -> Path | None:
    """The findings' pages (docs/findings/*.md) as installed, so a reference a report prints is a
    file the reader has; None when this installation has none."""
    here = Path(__file__).resolve().parent
    for cand in (here / "_docs" / "findings", here.parent / "docs" / "findings"):
        if (cand / "README.md").is_file():
            return cand
    return None
