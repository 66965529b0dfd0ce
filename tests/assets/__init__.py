"""The assets our ``repos/`` modules declare: one test file per repository.

The official prepare steps post-processed what they fetched (tokenised a sample, paired
screenshots, picked a checkpoint, sliced a parquet, wrote scp lists, converted scenes);
pytest-reb fetches the raw asset into the view and each stage's ``setup`` redoes the
post-processing into ``{out}``.  Each test runs a stage's ``setup`` steps exactly as its
``repos/`` module declares them (placeholders filled with temporary folders, the host python
as ``{python}``) against small stand-ins of the raw asset (a local HTTP server for ``url``
assets, a stand-in checkout for ``repo`` assets, ``ingest`` for hub snapshots) and of the
code a step calls, and checks what they wrote against what the official prepare step wrote
and what the stage's argv then reads.  Nothing here needs torch or the network.
"""
