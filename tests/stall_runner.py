"""``python tests/stall_runner.py <hdvqa args>``: hdvqa, except that the ``os.replace`` that
would finish the file named by $HDVQA_STALL_AT first touches $HDVQA_STALL_SIGNAL and then
hangs. A test can so kill a real sweep at a known point: mid-write or between files."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

_replace = os.replace


def _stalling_replace(src, dst, *args, **kwargs):
    if Path(dst).name == os.environ["HDVQA_STALL_AT"]:
        Path(os.environ["HDVQA_STALL_SIGNAL"]).touch()
        time.sleep(600)
    return _replace(src, dst, *args, **kwargs)


if __name__ == "__main__":
    os.replace = _stalling_replace
    from hdvqa.cli.main import main

    main(sys.argv[1:])
