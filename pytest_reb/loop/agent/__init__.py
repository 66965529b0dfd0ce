"""Agent runs: an agent CLI works in a container of a task image, the result is committed.

``backends`` holds the declarative argv templates and the parsers of their output;
``run`` the container's lifecycle (budget, kill, commit, secrets) and the records.
"""

#: An agent run's budget in seconds when none is given (``reb agent run --budget``); here, not in
#: ``run``, so that ``reb --help`` builds its parser without the engine's client.
DEFAULT_BUDGET = 3600.0
