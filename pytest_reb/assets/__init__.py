"""Assets: the models, datasets and configs a repository's stages read, prepared on the host.

The official harness ran a prepare step inside each environment that downloaded
or generated what the stages read into ``{repo}/benchmark_assets``.  Here that
step runs on the host, into a content-addressed cache, and the tiers see the
result read-only:

``<cache>/objects/<sha256>``
    every prepared file once, by content, read-only;
``<cache>/views/<owner>__<name>/``
    one folder per repository with the files under the names its stages expect
    (each asset at the ``dest`` its module declares), hard links to the objects
    (copies across file systems).  Containers get it read-only at
    ``{repo}/benchmark_assets``, where the official step wrote, so
    repository-relative paths keep working; ``local://`` uses the folder itself;
``<cache>/manifests/<owner>__<name>.json``
    per asset: ready or failed (and why), where it came from, its files and
    their digests.  A copy sits in the view as ``.reb-manifest.json``.

Only ``--reb-prepare`` uses the network (``hf``, ``hf_dataset``,
``modelscope``, ``url``, ``git``).  ``repo`` assets (copied from the checkout
in the target, without running anything there) and ``synthetic`` ones (the
content their module spells out) need none and are made whenever a stage
needs them.  ``--reb-assets DIR`` points at a cache filled elsewhere;
``AssetCache.ingest`` is how a file made by other means (a stand-in
checkpoint, a manual download) becomes an asset.

Before a stage runs, the assets its argv, env and cwd point into must be
ready; otherwise the tier fails without running, with the official category
(``model`` for models and tokenizers, ``data`` for the rest) and a message
naming each missing asset and why.

The package follows those seams: ``fetchers`` gets an asset's files into a
staging folder (download, copy out of the checkout, write), ``cache`` stores
them by content and links them into the view, and ``view`` is the tiers'
side (which assets a stage reads, mounting the view, the missing-asset
message).  Every fact about one repository's assets is in its ``repos/``
module; nothing here names a repository.
"""
