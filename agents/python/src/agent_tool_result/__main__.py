"""``python -m agent_tool_result FILE...``: one outcome line per answer, as ``atr classify
--format json`` prints it (see :mod:`agent_tool_result.capture`)."""

from .capture import main

raise SystemExit(main())
