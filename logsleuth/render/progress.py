"""Progress for big inputs: a bar on stderr, only when stderr is a terminal and an input is over
PROGRESS_MIN_BYTES. Nothing is printed when piped or redirected."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from logsleuth.render.console import stderr_console
from logsleuth.safe import visible

import os

if TYPE_CHECKING:  # imported when a bar is first shown: most runs show none
    from rich.progress import Progress

PROGRESS_MIN_BYTES = int(os.environ.get("LOGSLEUTH_PROGRESS_MIN_BYTES", 50 * 1024 * 1024))  # env: tests show the bar on small inputs


class InputProgress:
    def __init__(self) -> None:
        import threading

        self.progress: Progress | None = None
        self.tasks: dict[str, int] = {}
        self._lock = threading.RLock()  # inputs are read on several threads

    def __call__(self, name: str, done: int, total: int | None) -> None:
        if total is None or total < PROGRESS_MIN_BYTES:
            return
        with self._lock:
            self._update(name, done, total)

    def _update(self, name: str, done: int, total: int) -> None:
        if self.progress is None:
            from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn, TimeRemainingColumn, TransferSpeedColumn

            self.progress = Progress(
                TextColumn("{task.description}", markup=False), BarColumn(), DownloadColumn(), TransferSpeedColumn(), TimeRemainingColumn(),
                console=stderr_console(), transient=True,
            )
            self.progress.start()
        if name not in self.tasks:
            self.tasks[name] = self.progress.add_task(visible(name)[-60:], total=total)
        self.progress.update(self.tasks[name], completed=min(done, total))
        if done >= total:  # the input is read: clear the bar before anything is printed
            self.progress.remove_task(self.tasks.pop(name))
            if not self.tasks:
                self.close()

    def close(self) -> None:
        with self._lock:
            if self.progress is not None:
                self.progress.stop()
                self.progress = None


def for_terminal() -> InputProgress | None:
    try:
        return InputProgress() if sys.stderr.isatty() else None
    except (AttributeError, ValueError):
        return None
