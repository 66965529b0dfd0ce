"""The two attacks of strict C3's attribution, made real on the GPU machine's own interpreter.

``python attacks.py install NAME`` / ``python attacks.py remove NAME``, run by
``run_family.py`` around the stage (as root there: the machine is thrown away).

* ``borrowed_name``: a ``.pth`` startup hook wraps the loader of ``torch``;
  right after the entrypoint's ``import torch`` it runs a GPU burst compiled
  under the entrypoint's own file name, then tells the program CUDA is absent,
  so the entrypoint trains on the CPU.
* ``edited_optimizer``: no hook; ``torch/optim/sgd.py`` of the installed torch
  is edited so CUDA reads absent and every ``SGD.step`` (called from the
  entrypoint's own code) runs a burst on the GPU first.

Both must fail strict C3.  ``remove`` restores the interpreter exactly.
"""

import shutil
import site
import sys
from pathlib import Path

BURST = ("import torch\n"
         "m = torch.randn(4096, 4096, device='cuda')\n"
         "for _ in range(20): m = m @ m; m = m / m.norm()\n"
         "torch.cuda.synchronize()\n")
HOOK = f'''import importlib.machinery, os, sys
class _After:
    def find_spec(self, name, path=None, target=None):
        if name != "torch" or not sys.argv or not sys.argv[0].endswith("train.py"):
            return None
        sys.meta_path.remove(self)
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        real = spec.loader.exec_module
        def exec_module(module):
            real(module)
            code = compile({BURST!r}, os.path.abspath(sys.argv[0]), "exec")
            exec(code, {{"__name__": "__main__"}})
            module.cuda.is_available = lambda: False
        spec.loader.exec_module = exec_module
        return spec
sys.meta_path.insert(0, _After())
'''
EDIT = f'''

# appended after install
import torch.cuda as _reb_cuda
_reb_cuda.is_available = lambda: False
_reb_real_step = SGD.step
def _reb_step(self, *args, **kwargs):
    exec({BURST!r}, {{}})
    return _reb_real_step(self, *args, **kwargs)
SGD.step = _reb_step
'''


def paths() -> tuple[Path, Path, Path]:
    """The hook's module and .pth, and the installed optimizer module."""
    import torch.optim.sgd as sgd

    sp = Path(site.getsitepackages()[0])
    return sp / "_reb_attack_hook.py", sp / "_reb_attack_hook.pth", Path(sgd.__file__)


def main() -> None:
    what, name = sys.argv[1:3]
    module, pth, sgd = paths()
    backup = sgd.with_suffix(".py.reb-orig")
    if name == "borrowed_name" and what == "install":
        module.write_text(HOOK)
        pth.write_text("import _reb_attack_hook\n")
    elif name == "borrowed_name":
        module.unlink(missing_ok=True)
        pth.unlink(missing_ok=True)
    elif name == "edited_optimizer" and what == "install":
        shutil.copy2(sgd, backup)
        sgd.write_text(sgd.read_text() + EDIT)
    elif name == "edited_optimizer" and backup.exists():
        shutil.copy2(backup, sgd)
        backup.unlink()
    print(what, name, "done")


if __name__ == "__main__":
    main()
