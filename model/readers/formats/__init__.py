"""Benchmark outputs, one module per format; each registers its readers with
:mod:`model.readers.registry` when imported, and the registry imports every module here.

- :mod:`~model.readers.formats.serve_json`: ``vllm bench serve`` / ``benchmark_serving.py``
  and SGLang ``bench_serving`` result JSON and JSONL.
- :mod:`~model.readers.formats.serve_table`: the ``Serving Benchmark Result`` table they print.
- :mod:`~model.readers.formats.json_list`: a JSON array of results (``vllm bench sweep``'s
  summary.json).
- :mod:`~model.readers.formats.sweep`: ``vllm bench sweep``'s summary.csv.
- :mod:`~model.readers.formats.latency_throughput`: ``vllm bench latency`` and ``throughput``.
- :mod:`~model.readers.formats.startup`: ``vllm bench startup``.
- :mod:`~model.readers.formats.genai_perf`: GenAI-Perf's and AIPerf's exports and tables.
- :mod:`~model.readers.formats.common`: what they share (figure names and checks, command
  lines, runs), with the figure and condition names every format returns and the sources.

A new format is a new module here that ends with its ``register(Reader(...))`` calls (see
``docs/extending.md``), plus a real sample under ``tests/data/`` and a test that reads it.
"""
