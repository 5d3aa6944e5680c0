"""``streamlit run`` that logs how long each script run took on the server.

    python benchmarks/serve_timed.py run app.py --server.port 8501 ...

Exactly ``python -m streamlit run`` (same CLI, same config), plus one stderr line per script
run, which ``browser_speed.py`` reads to put the live server's time beside the browser's:

    WHATIF_RUN <run wall s> <run CPU s> <post-run GC wall s> <post-run GC CPU s>

The run is ``ScriptRunner._run_script`` (widget callbacks, the script, the end-of-run
bookkeeping), less the ``gc.collect(2)`` Streamlit does after every run
(``runner.postScriptGC``, on by default), which is timed on its own: it holds the GIL, so the
run's last messages wait for it.
"""

from __future__ import annotations

import gc
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from ui.streamlit_internals import runner_internals  # noqa: E402 - the one seam

script_runner = runner_internals().script_runner

_local = threading.local()


class _TimedGC:
    """Stands in for the ``gc`` module inside ``script_runner``; times ``collect``."""

    def __getattr__(self, name):
        return getattr(gc, name)

    def collect(self, *args):
        wall, cpu = time.perf_counter(), time.thread_time()
        try:
            return gc.collect(*args)
        finally:
            _local.gc = (time.perf_counter() - wall, time.thread_time() - cpu)


_original_run_script = script_runner.ScriptRunner._run_script


def _timed_run_script(self, rerun_data):
    _local.gc = (0.0, 0.0)
    wall, cpu = time.perf_counter(), time.thread_time()
    try:
        return _original_run_script(self, rerun_data)
    finally:
        wall, cpu = time.perf_counter() - wall, time.thread_time() - cpu
        gc_wall, gc_cpu = _local.gc
        print(
            f"WHATIF_RUN {wall - gc_wall:.6f} {cpu - gc_cpu:.6f} {gc_wall:.6f} {gc_cpu:.6f}",
            file=sys.stderr,
            flush=True,
        )


script_runner.gc = _TimedGC()
script_runner.ScriptRunner._run_script = _timed_run_script

if __name__ == "__main__":
    main = runner_internals().cli_main

    sys.argv = ["streamlit", *sys.argv[1:]]
    sys.exit(main())
