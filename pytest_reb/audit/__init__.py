"""C5: the agent's self-report and the audit of its claims.

``report`` reads the report into a typed model, ``observe`` asks the target
what the claimed interpreter is, ``result`` is what an audit finds, and
``rules`` judges the one against the other in two modes: ``strict`` (evidence)
and ``compat`` (the official validators, per repository).
"""
