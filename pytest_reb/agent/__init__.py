"""Agent runs: an agent CLI works in a container of a task image, the result is committed.

``backends`` holds the declarative argv templates and the parsers of their output;
``run`` the container's lifecycle (budget, kill, commit, secrets) and the records.
"""
