"""Helpers of pytest-reb's own tests, in one place: none of these files is collected.

``tests/`` is on ``sys.path`` during a run (pytest puts the folder of ``tests/conftest.py``
there), so a test imports them as ``from support.minirepo import git_checkout``:

- ``agentruns``: scripted agent runs (``reb agent run`` with a shell agent);
- ``breakage``: images in which each root-cause fault really happens;
- ``hoststate``: the host snapshot the suite compares at the end (nothing may change);
- ``imagebuild``: the small recipe-hashed image builder the fault and hostile images use;
- ``minirepo``: tiny git checkouts and projects;
- ``outcomes``: the one ``Outcome`` factory of the tests;
- ``repomodules``: loading ``repos/`` modules and their stages, writing trees;
- ``slurmcluster``: a real one-node Slurm cluster under a temporary folder.
"""
