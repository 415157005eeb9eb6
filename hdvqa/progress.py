"""Progress on stderr for every command that may run longer than a few seconds.

One mechanism for all (generate's jobs, verify, audit, parse-narrations, review): through tqdm,
a bar on a terminal; otherwise a plain line every few seconds with %, rate and ETA, so logs show
it. Short work prints nothing. Work whose count is not known yet (tables read, a model loaded)
is a named stage, and a heartbeat says what is running when nothing has been shown for
HEARTBEAT seconds, so no command is silent for long. Kept below every layer that reports
progress (only tqdm, imported when a bar is first drawn).
"""

from __future__ import annotations

import sys
import threading
import time


class Progress:
    """Progress of one piece of work: ``progress(done, total, phase)`` counts, ``stage(text)``
    names uncounted work. A phase other than the main one ("questions" by default) has a bar
    of its own labelled with it; generate's "preparing" phase (the prototype's targets, tables
    computed on first use, the admission pass) reads "preparing its targets" in the heartbeat."""

    LOG_EVERY = 5.0  # seconds between lines when stderr is not a terminal (and before the first)
    BAR_DELAY = 0.5  # on a terminal, no bar for work shorter than this
    HEARTBEAT = 5.0  # seconds without anything shown after which a line says the work goes on
    POLL = 0.5  # how often the heartbeat looks: a silence lasts at most HEARTBEAT + POLL

    def __init__(self, name: str, enabled: bool, n: int | None, unit: str = "target", main: str = "questions",
                 waiting: str = "preparing its targets"):
        self.name, self.enabled, self.n, self.bar = name, enabled, n, None
        self.unit, self.main, self.waiting = unit, main, waiting
        self.phase, self.started, self.shown = main, time.monotonic(), time.monotonic()
        self._stop = threading.Event()
        self._beat = None
        if enabled:
            self._beat = threading.Thread(target=self._heartbeat, daemon=True, name=f"progress {name}")
            self._beat.start()

    def _seen(self) -> None:
        self.shown = time.monotonic()

    def _heartbeat(self) -> None:
        # Silence is measured from the last thing shown, not the last call: the work may call
        # often without the count moving (or tqdm holding a log line back for LOG_EVERY).
        while not self._stop.wait(min(self.POLL, self.HEARTBEAT)):
            if time.monotonic() - self.shown >= self.HEARTBEAT:
                elapsed = f"{time.monotonic() - self.started:.0f} s"
                if self.bar is not None and self.bar.total and self.bar.total > 1:
                    elapsed = f"{self.bar.n}/{self.bar.total}, {elapsed}"
                what = self.waiting if self.phase == "preparing" or self.bar is None else f"on its {self.phase}"
                print(f"{self.name}: {what} ({elapsed})", file=sys.stderr, flush=True)
                self._seen()

    def stage(self, text: str) -> None:
        """Uncounted work from now on (``text``: what the heartbeat says, e.g. "reading the data");
        a bar shown so far is closed."""
        if self.bar is not None:
            self.bar.close()
        self.bar, self.phase, self.waiting = None, "stage", text

    def __call__(self, done: int, total: int, phase: str | None = None) -> None:
        if not self.enabled:
            return
        phase = phase or self.main
        if phase != self.phase:
            if self.bar is not None:
                self.bar.close()
            self.bar, self.phase = None, phase
        if phase == self.main and self.n is not None:
            total = min(self.n, total)  # n stops the walk early
        if self.bar is None:
            from tqdm import tqdm

            desc = self.name if phase == self.main else f"{self.name} ({phase})"
            if sys.stderr.isatty():
                self.bar = tqdm(total=total, desc=desc, unit=self.unit, file=sys.stderr, delay=self.BAR_DELAY)
            else:
                self.bar = tqdm(total=total, desc=desc, unit=self.unit, file=_Lines(self._seen), ascii=True, ncols=90,
                                mininterval=self.LOG_EVERY, delay=self.LOG_EVERY)
        elif total != self.bar.total:  # the same phase, a new count (preparing: the targets, then the admission pass)
            # (set, not reset(): reset redraws at once, ignoring the delay that keeps short work quiet)
            self.bar.n, self.bar.total = 0, total
        step = min(done, self.bar.total) - self.bar.n
        if step and sys.stderr.isatty():
            self._seen()  # a terminal's bar redraws itself as it moves
        self.bar.update(step)

    def close(self) -> None:
        self._stop.set()
        if self.bar is not None:
            self.bar.close()

    def __enter__(self) -> "Progress":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class _Lines:
    """A stderr for tqdm that ends each refresh with a newline instead of a carriage return
    (and tells ``shown`` when it printed)."""

    def __init__(self, shown=lambda: None):
        self.shown = shown

    def write(self, text: str) -> None:
        text = text.replace("\r", "").rstrip()
        if text:
            print(text, file=sys.stderr, flush=True)
            self.shown()

    def flush(self) -> None:
        sys.stderr.flush()
