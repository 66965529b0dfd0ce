"""The tiers C0-C5: each a module with a function ``probe(ctx) -> Outcome``, run at most
once per target, and the in-target probe scripts they ship (``probes/``, mounted read-only).

What a probe is given is ``pytest_reb.pyramid.context.Context``; which module is which
tier is ``pytest_reb.pyramid.context.TIER_TESTS``; the tier names are ``outcome.TIERS``.
"""
