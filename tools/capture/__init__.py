"""The capture kit: ``python -m tools.capture --out DIR`` measures, on a GPU node, what the
app's model needs (kernel launch cost, HBM bandwidth of a decode-like product, host-to-device
copy rate, CUDA context creation) and writes CSVs in the app's upload schema. See README.md.

Importing the package (or any module in it) never imports torch; only the measurement functions
in :mod:`tools.capture.gpu` do, when they run.
"""
