"""The two attacks of strict C3's attribution, made real on the GPU machine's own interpreter.

``python attacks.py install NAME`` / ``python attacks.py remove NAME``, run by
``run_family.py`` around the stage (as root there: the machine is thrown away).

* ``borrowed_name``: a ``.pth`` startup hook wraps the loader of ``torch``;
  right after the entrypoint's ``import torch`` it runs a GPU burst compiled
  under the entrypoint's own file name, then tells the program CUDA is absent,
  so the entrypoint trains on the CPU.  The hook is made to look owned: a
  distribution's ``RECORD`` is written for it, with its true hashes.
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
#: The burst sees CUDA as it is (the real ``is_available`` put back around it): torch's own
#: device code asks ``is_available`` too, and with it lying the burst fails in
#: ``exchangeDevice`` instead of computing, which tests nothing.
EDIT = f'''

# appended after install
import torch.cuda as _reb_cuda
_reb_real_available = _reb_cuda.is_available
_reb_cuda.is_available = lambda: False
_reb_real_step = SGD.step
def _reb_step(self, *args, **kwargs):
    _reb_cuda.is_available = _reb_real_available
    try:
        _reb_cuda.set_device(0)
        exec({BURST!r}, {{}})
    finally:
        _reb_cuda.is_available = lambda: False
    return _reb_real_step(self, *args, **kwargs)
SGD.step = _reb_step
'''


def record_line(path: Path, site_dir: Path) -> str:
    """A RECORD line for ``path``, as pip writes one (urlsafe base64 sha256, no padding)."""
    import base64
    import hashlib

    data = path.read_bytes()
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{path.relative_to(site_dir)},sha256={digest},{len(data)}\n"


def forge_owner(site_dir: Path, files: list[Path]) -> None:
    """A dist-info that lists ``files`` with their true hashes: the hook looks installed."""
    info = site_dir / "reb_attack_hook-1.0.dist-info"
    info.mkdir(exist_ok=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: reb-attack-hook\nVersion: 1.0\n")
    (info / "INSTALLER").write_text("pip\n")
    lines = [record_line(f, site_dir) for f in [*files, info / "METADATA", info / "INSTALLER"]]
    (info / "RECORD").write_text("".join(lines) + f"{info.name}/RECORD,,\n")


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
        forge_owner(module.parent, [module, pth])
    elif name == "borrowed_name":
        module.unlink(missing_ok=True)
        pth.unlink(missing_ok=True)
        shutil.rmtree(module.parent / "reb_attack_hook-1.0.dist-info", ignore_errors=True)
    elif name == "edited_optimizer" and what == "install":
        shutil.copy2(sgd, backup)
        sgd.write_text(sgd.read_text() + EDIT)
    elif name == "edited_optimizer" and backup.exists():
        shutil.copy2(backup, sgd)
        backup.unlink()
    print(what, name, "done")


if __name__ == "__main__":
    main()
