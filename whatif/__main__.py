"""``python -m whatif`` is the same as the ``whatif`` console script."""

from whatif.cli import main

raise SystemExit(main())
