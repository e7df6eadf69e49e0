"""detectors/ and findings/ type-check: mypy, with the project's configuration ([tool.mypy] in
pyproject.toml: which modules, how strict), reports no error.

mypy runs from the repository root in a subprocess, its cache in a temporary directory removed
afterwards (nothing is left in the tree). All of detectors/ (kafka/, pulsar/ and sarama/ too) is
checked; the modules it imports from elsewhere are read for their types only (follow_imports = "silent").
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_mypy_reports_no_error():
    try:
        import mypy  # noqa: F401
    except ImportError:  # pragma: no cover - the `test` extras install it
        raise AssertionError("mypy is not installed: pip install -e '.[test]'") from None
    with tempfile.TemporaryDirectory(prefix="logsleuth-mypy-") as cache:
        proc = subprocess.run(
            [sys.executable, "-m", "mypy", "--config-file", str(ROOT / "pyproject.toml"), "--cache-dir", cache,
             "--no-error-summary", "--show-error-codes", "--no-color-output"],
            cwd=ROOT, capture_output=True, text=True, timeout=600,
        )
    report = proc.stdout + proc.stderr
    assert proc.returncode == 0 and not report.strip(), f"mypy (exit {proc.returncode}):\n{report}"
