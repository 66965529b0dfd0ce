"""C2 probe: does the framework see the GPU, and does a real kernel give the CPU's answer?

Runs under the report's interpreter inside the target, mounted read-only.
It prints one JSON line after the marker ``REB_CUDA_PROBE``.  Its word is not
trusted on its own: the host also watches that this process really opened a
GPU device, which a patched ``is_available()`` cannot fake.
Standard library plus whichever framework is installed (torch, then JAX,
then TensorFlow, the official order).
"""

import importlib.machinery
import json
import os
import platform
import sys
import time

MARKER = "REB_CUDA_PROBE"
#: C5's strict question, answered here when the host passes its nonce (``pyramid/answers.py``):
#: the same two lines as C5's own probe (``c5_observe.PYTHON_PROBE``), the nonce reversed.
PYTHON_MARKER = "REB_PYTHON_PROBE"
#: The line before the main one: the compiled modules this process loaded (module -> real
#: path), which the extension sweep then need not load again, each in an interpreter of its own.
LOADED_MARKER = "REB_CUDA_PROBE_LOADED"
MAX_LOADED = 200
HOLD_SECONDS = 0.6  # keep the context open long enough for the host's sampler


def loaded_extensions() -> dict:
    """The extension modules in ``sys.modules`` and their files (what ``import torch`` and the
    kernel loaded here); bounded, and no module's attribute access may stop the probe."""
    suffixes = tuple(importlib.machinery.EXTENSION_SUFFIXES)
    found = {}
    for name, module in list(sys.modules.items()):
        try:
            path = getattr(module, "__file__", None)
            if isinstance(name, str) and isinstance(path, str) and path.endswith(suffixes):
                found[name[:200]] = os.path.realpath(path)[:500]
        except Exception:
            continue
        if len(found) >= MAX_LOADED:
            break
    return found


def answer(**said: str) -> None:
    """One line of C5's answer, when the host asked (``argv[1]``: its nonce)."""
    if len(sys.argv) > 1:
        said = {"nonce": sys.argv[1][::-1], **said}
        sys.stdout.write(PYTHON_MARKER + " " + json.dumps(said) + "\n")
        sys.stdout.flush()


def torch_probe() -> dict:
    try:
        import torch
    except BaseException as exc:  # as C5's own probe words it, then as before
        answer(torch_error=(type(exc).__name__ + ": " + str(exc))[:300])
        raise
    answer(torch_version=str(torch.__version__))

    obs = {"framework": "pytorch", "torch_version": torch.__version__,
           "cuda_build": torch.version.cuda, "cuda_available": bool(torch.cuda.is_available()),
           "gpu_count": int(torch.cuda.device_count())}
    if not obs["cuda_available"]:
        return obs
    # is_available() may have been patched: what contradicts it is named, and every step
    # below may fail on a build without CUDA, so each failure is kept instead of raised
    spoof = []
    if obs["cuda_build"] is None:
        spoof.append("torch.version.cuda is None (a CPU-only build of torch)")
    if obs["gpu_count"] < 1:
        spoof.append("torch.cuda.device_count() is 0")
    if spoof:
        obs["spoof"] = spoof
    try:
        obs["arch_list"] = list(torch.cuda.get_arch_list())
        obs["devices"] = []
        for i in range(obs["gpu_count"]):
            major, minor = torch.cuda.get_device_capability(i)
            obs["devices"].append({"index": i, "name": torch.cuda.get_device_name(i),
                                   "capability": f"{major}.{minor}"})
    except Exception as exc:
        obs["device_query_error"] = f"{type(exc).__name__}: {exc}"[:500]
    torch.backends.cuda.matmul.allow_tf32 = False
    gen = torch.Generator().manual_seed(1234)
    a = torch.randn(256, 256, generator=gen, dtype=torch.float32)
    b = torch.randn(256, 256, generator=gen, dtype=torch.float32)
    expected = (a @ b).sum(dim=0)
    try:
        got = (a.cuda() @ b.cuda()).sum(dim=0)
        torch.cuda.synchronize()
        err = float((got.cpu() - expected).abs().max() / expected.abs().max())
        obs["kernel"] = {"op": "matmul 256x256 fp32", "max_rel_error": err, "ok": err < 1e-3}
    except Exception as exc:
        obs["kernel"] = {"op": "matmul 256x256 fp32", "ok": False,
                         "error": f"{type(exc).__name__}: {exc}"[:500]}
    time.sleep(HOLD_SECONDS)
    return obs


def jax_probe() -> dict:
    import jax
    import jax.numpy as jnp

    gpus = [d for d in jax.devices() if d.platform == "gpu"]
    obs = {"framework": "jax", "jax_version": jax.__version__, "cuda_available": bool(gpus),
           "gpu_count": len(gpus)}
    if gpus:
        x = jnp.arange(1024.0)
        got = float(jax.device_put(x, gpus[0]).sum())
        obs["kernel"] = {"op": "sum 1024", "ok": got == float(sum(range(1024)))}
        time.sleep(HOLD_SECONDS)
    return obs


def tf_probe() -> dict:
    import tensorflow as tf

    gpus = tf.config.list_physical_devices("GPU")
    obs = {"framework": "tensorflow", "tf_version": tf.__version__, "cuda_available": bool(gpus),
           "gpu_count": len(gpus)}
    if gpus:
        with tf.device("/GPU:0"):
            got = float(tf.reduce_sum(tf.range(1024, dtype=tf.float64)))
        obs["kernel"] = {"op": "sum 1024", "ok": got == float(sum(range(1024)))}
        time.sleep(HOLD_SECONDS)
    return obs


def main() -> int:
    answer(python_version=platform.python_version(), executable=sys.executable)
    errors = {}
    for name, probe in (("torch", torch_probe), ("jax", jax_probe), ("tensorflow", tf_probe)):
        try:
            obs = probe()
        except ImportError as exc:
            errors[f"{name}_error"] = f"{type(exc).__name__}: {exc}"[:300]
            continue
        except Exception as exc:
            errors[f"{name}_error"] = f"{type(exc).__name__}: {exc}"[:500]
            continue
        obs.update(errors)
        obs["python"] = sys.executable
        print(LOADED_MARKER + " " + json.dumps(loaded_extensions()), flush=True)
        print(MARKER + " " + json.dumps(obs), flush=True)
        return 0
    errors.update(framework="none", cuda_available=False, gpu_count=0, python=sys.executable)
    print(MARKER + " " + json.dumps(errors), flush=True)
    return 3


if __name__ == "__main__":
    sys.exit(main())
