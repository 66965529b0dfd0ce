"""Names the diagnosis hints need: the distribution, Debian package or tool to install.

Kept apart from the rules (``diagnose.py``) because they grow with every repository met,
while the rules do not: an import whose PyPI distribution has another name (``zeta`` is
``zetascale``), a shared library and the package that ships it, a program and where to get
it.  The environment's own metadata comes first where it can say (``distribution_of``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

#: Import names whose distribution is named otherwise (the hint names the one to install).
DISTRIBUTION_OF = {
    "yaml": "PyYAML", "cv2": "opencv-python-headless", "PIL": "Pillow",
    "sklearn": "scikit-learn", "skimage": "scikit-image", "bs4": "beautifulsoup4",
    "google.protobuf": "protobuf", "attr": "attrs", "dateutil": "python-dateutil",
    "Crypto": "pycryptodome", "fitz": "PyMuPDF", "dotenv": "python-dotenv",
    "jose": "python-jose", "magic": "python-magic", "OpenGL": "PyOpenGL",
    "mmcv": "mmcv (a build matching torch and CUDA)",
    "detectron2": "detectron2 (built from source against the installed torch)",
    "flash_attn": "flash-attn (a wheel matching torch and CUDA)",
    "zeta": "zetascale", "mamba_ssm": "mamba-ssm (a wheel matching torch and CUDA)",
    "causal_conv1d": "causal-conv1d (a wheel matching torch and CUDA)",
    "pytorch_lightning": "pytorch-lightning", "huggingface_hub": "huggingface-hub",
    "google": "protobuf (or the google-* package meant)", "Levenshtein": "python-Levenshtein",
    "docx": "python-docx", "pptx": "python-pptx",
    "serial": "pyserial", "usb": "pyusb", "win32api": "pywin32", "gi": "PyGObject",
    "tkinter": "the OS's Tk binding of Python (Debian: python3-tk), not a pip package",
    "_tkinter": "the OS's Tk binding of Python (Debian: python3-tk), not a pip package",
}

#: Shared libraries -> the Debian package that ships them (for the hint).
DEBIAN_PACKAGE_OF = {
    "libGL.so": "libgl1", "libEGL.so": "libegl1", "libgthread-2.0.so": "libglib2.0-0",
    "libglib-2.0.so": "libglib2.0-0", "libSM.so": "libsm6", "libXext.so": "libxext6",
    "libXrender.so": "libxrender1", "libsndfile.so": "libsndfile1", "libgomp.so": "libgomp1",
    "libespeak-ng.so": "libespeak-ng1", "libespeak.so": "libespeak1", "libsox.so": "libsox3",
    "libavcodec.so": "ffmpeg", "libavformat.so": "ffmpeg", "libportaudio.so": "libportaudio2",
    "libGLU.so": "libglu1-mesa", "libosmesa.so": "libosmesa6", "libOSMesa.so": "libosmesa6",
    "libjpeg.so": "libjpeg62-turbo", "libpng16.so": "libpng16-16", "libopenblas.so": "libopenblas0",
    "libstdc++.so": "libstdc++6", "libaio.so": "libaio1", "libnuma.so": "libnuma1",
}

#: Programs -> the Debian package (or the way) to get them.
PACKAGE_OF_TOOL = {
    "tkinter": "python3-tk", "_tkinter": "python3-tk", "_gdbm": "python3-gdbm",
    "_dbm": "python3-gdbm", "distutils": "python3-distutils (Python 3.11 and older)",
    "ffmpeg": "ffmpeg", "ffprobe": "ffmpeg", "sox": "sox", "espeak": "espeak-ng",
    "espeak-ng": "espeak-ng", "git": "git", "gcc": "build-essential", "g++": "build-essential",
    "cc": "build-essential", "c++": "build-essential", "x86_64-linux-gnu-gcc": "build-essential",
    "make": "make", "cmake": "cmake", "ninja": "ninja-build (or pip install ninja)",
    "nvcc": "the CUDA toolkit matching torch's CUDA", "java": "default-jre-headless",
    "wget": "wget", "curl": "curl", "unzip": "unzip", "convert": "imagemagick",
    "latex": "texlive", "pdflatex": "texlive", "perl": "perl",
}


def distribution_of(name: str, installed: Mapping[str, Sequence[str]] | None = None) -> str:
    """The distribution to install for import ``name`` (its top level decides)."""
    top = name.split(".")[0]
    for key in (name, top):
        found = (installed or {}).get(key)
        if found:
            return " or ".join(dict.fromkeys(found))
    return DISTRIBUTION_OF.get(name) or DISTRIBUTION_OF.get(top) or top
