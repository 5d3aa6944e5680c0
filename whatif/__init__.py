"""``whatif``, the command line: an edge of the calculation core, like the pages.

It reads the scenario keys, measurement files and presets through :mod:`model`, and the pages'
URL paths from their declarations (:mod:`ui.lenses`, imported only by the commands that print a
link), so :mod:`model` holds no page path (issue 41).
"""
