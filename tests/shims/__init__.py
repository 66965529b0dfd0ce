"""Our shims, one test file per folder of ``repos/shims/``, run for real on the host python.

The helpers several files share are in ``conftest.py``. Most shims are of four kinds, each
tested its own way:

Setup scripts that write a generated config (deep_tempest, funmusic, internevo, voxcpm).
Each test runs a stage's ``setup`` steps exactly as its ``repos/`` module declares them
(placeholders filled with temporary folders, the host python as ``{python}``) and checks
what they wrote against the values the official probes and prepare steps wrote, and that the
files the run's argv reads are the ones written. Stand-ins of the prepared assets are empty
files and folders; nothing here needs torch.

Drivers we rewrote (comic_translate, nano_vllm, socialed, visionmamba). The official stage
ran a driver the harness wrote; our rewrite is executed here as the stage executes it: as a
script under the host python, from a stand-in repository root as the working directory, with
stand-ins of the repository code it patches and of the heavy libraries written into
``tmp_path``. The stand-in keeps the behaviour the shim exists for, so a shim that lost its
effect fails.

Shims that serve a stage (clearervoice_studio, flaggems, renderformer, sana). The shim runs
for real on small stand-ins of the code it serves, and the stage is also run the way the
plugin runs it: the module's own ``setup`` and ``argv`` with the placeholders filled for a
temporary tree, so a wrong path or flag in the module fails here too. Host python only: no
torch.

Budget and patching shims (kvpress, multimodalmamba, torchft). The shim runs on the host
python (no torch) against small stand-ins of the code it patches or calls, placed on
PYTHONPATH in tmp_path, and the observable effect is asserted: what the program under the
shim sees, what a generator writes, what a helper prints for the stage's ``Helper`` to read.
"""
