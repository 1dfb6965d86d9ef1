"""``python -m evalnb.cli`` runs the ``evalnb`` command."""

from evalnb.cli.main import main

raise SystemExit(main())
