"""Measurement readers: every file a user brings (SPEC 4.4, 4.5) read into plain data.

Pure Python like the rest of :mod:`model` (no streamlit, no plotly); nothing here evaluates or
unpickles what it reads, and nothing here imports the physics: a reader needs at most
:mod:`model.errors`, the scenario's names (:data:`model.scenario.CUDA_GRAPHS_MODES`) and, for the
examples, :mod:`model.datafiles`. Each module reads:

- :mod:`~model.readers.measurements`: no file format of its own; what every reader returns
  (:class:`~model.readers.measurements.Dataset`, its problems and kinds), the CSV schemas of our
  own formats with their templates, the size limit and the UTF-8 decoding every upload goes
  through, and the one number parser.
- :mod:`~model.readers.csv_import`: our own measurement CSVs (decode sweep, launch
  micro-benchmark, cold-start items, request latency, capture-kit bandwidth and host-to-device).
- :mod:`~model.readers.vllm_log`: a vLLM server's start-up log (``whatif parse-log``).
- :mod:`~model.readers.formats`: benchmark outputs, one module per format: vllm bench serve /
  latency / throughput / startup / sweep, SGLang bench_serving, GenAI-Perf and AIPerf (JSON,
  JSONL, CSV, console tables); :mod:`~model.readers.bench_import` tries them on a text.
- :mod:`~model.readers.registry`: every reader module's ``READERS`` (how it recognises a file,
  how it reads one, how the accepted-formats sentence names it), collected in one list.
- :mod:`~model.readers.importers`: the one entry point (:func:`~model.readers.importers.import_file`)
  that tries the registered readers in their order and refuses a file none of them recognises
  with the sentence made from the registry.
- :mod:`~model.readers.examples`: the example measurement data sets of ``presets/examples.yaml``,
  read by the same entry point as an upload.
- :mod:`~model.readers.traces`: request traces (plain, Azure, BurstGPT) for the Scale to zero
  replay; a :class:`~model.readers.traces.Trace`, not a ``Dataset``.

This ``__init__`` imports nothing, so ``from model.readers import csv_import`` loads only that
reader (and what it needs). The module names are those the readers had in the flat ``model/``
package, so the tests (``tests/test_csv_import.py`` and so on) still name their module.
"""
