"""Rebuild docs/screenshots/: for every sample incident, the HTML report as headless Chromium
renders it (top of the page: summary and chart), and the terminal report's first screen at 80x24.

    python docs/screenshots/make.py      # needs chromium on PATH
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "docs" / "screenshots"
SAMPLES = ROOT / "sample_logs"
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
         "--no-first-run", "--hide-scrollbars"]


def main() -> None:
    chromium = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
    if not chromium:
        sys.exit("chromium is needed")
    env = dict(os.environ, TZ="UTC", COLUMNS="80", LINES="24")
    with tempfile.TemporaryDirectory() as tmp:
        for d in sorted(p for p in SAMPLES.iterdir() if p.is_dir() and p.name != "generators"):
            html = Path(tmp) / f"{d.name}.html"
            subprocess.run([sys.executable, "-m", "logsleuth", "report", "--tz", "UTC", f"sample_logs/{d.name}", "-o", str(html),
                            "--title", f"sample_logs/{d.name}"], cwd=ROOT, env=env, check=True, capture_output=True)
            subprocess.run([chromium, *FLAGS, f"--user-data-dir={tmp}/profile", "--window-size=1100,1000",
                            f"--screenshot={OUT / (d.name + '.png')}", html.as_uri()], check=True, capture_output=True)
            term = subprocess.run([sys.executable, "-m", "logsleuth", "analyze", "--tz", "UTC", f"sample_logs/{d.name}/",
                                   "--format", "text"], cwd=ROOT, env=env, capture_output=True, text=True)
            (OUT / f"{d.name}.txt").write_text("\n".join(term.stdout.splitlines()[:24]) + "\n")
            print(d.name)


if __name__ == "__main__":
    main()
