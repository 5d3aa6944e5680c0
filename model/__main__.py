"""``python -m model`` is the same as the ``whatif`` console script."""

from model.cli import main

raise SystemExit(main())
