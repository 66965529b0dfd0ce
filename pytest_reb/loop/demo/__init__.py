"""The demo and the images pytest-reb's own tests run on: support of a source checkout.

Nothing a verification run needs is here; ``pytest repos --reb-image ...`` never imports it.
What it builds plays an agent-built environment for the sample repository ``demo/tinynet``
(``images.py``: a venv with CPU torch, the checkout at the official path, the agent's
self-report; the ``missing-dep`` variant lacks PyYAML while its report claims the same),
and the demo's git checkout alone (``checkout.py``), which ``reb task build reb/tinynet``
also uses.  The files come from a pytest-reb checkout: ``$REB_SOURCE``, else the working
directory (``spec.checkout_root``), never found by walking up from this package.

    python -m pytest_reb.loop.demo base             # the base image
    python -m pytest_reb.loop.demo images           # the base image and both demo variants
    python -m pytest_reb.loop.demo checkout DEST    # the demo's git checkout alone
"""
