"""What a target raises: one line a person can act on, and whose fault it was.

``TargetError`` says the target cannot be used at all; ``InfraError``, a kind of
it, that the machinery under the target failed mid-tier, which no verdict may
blame on the environment under test.  Their own module, below every target
module, so the host's readers of a container (``hostview``, ``archive``) can
raise them too.
"""

from __future__ import annotations


class TargetError(Exception):
    """The target cannot be used at all (image missing, daemon down): one clear line."""


class InfraError(TargetError):
    """The machinery under the target failed mid-tier (daemon gone, container killed).

    Not the environment's fault: the tier gets the category ``infra`` and the
    run goes on with the next one.
    """
