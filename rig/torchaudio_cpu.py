"""Importing torchaudio beside the CPU build of torch.

torchaudio's PyPI wheels (2.11.1, pulled in by the ``coqui`` extra) are CUDA builds: their C++
extension needs CUDA torch libraries (``libc10_cuda.so``) and raises ``OSError`` at import on
the CPU torch that rig pins. That breaks more than Coqui: transformers imports torchaudio
whenever it is installed (``transformers.audio_utils``), so sentence-transformers (the
``similarity`` extra) would fail too. :func:`import_torchaudio` imports it with the extension
marked absent, which torchaudio supports (a build without the extension imports that way);
its pure-PyTorch parts (``functional.resample``, the mel transforms) work, its C++ ones
(``forced_align``, the CTC decoders, rig uses neither) report themselves unavailable.
"""

from __future__ import annotations

import sys


def import_torchaudio() -> bool:
    """Import torchaudio (once per process), without its C++ extension when it cannot load.

    Call before importing coqui-tts, transformers or sentence-transformers.

    Returns:
        False when torchaudio is not installed (nothing imported), else True.

    Raises:
        OSError: loading failed in a way other than the extension (re-raised as is).
    """
    try:
        import torchaudio
        return True
    except ModuleNotFoundError as exc:
        if exc.name == "torchaudio":
            return False
        raise
    except OSError:
        utils = sys.modules.get("torchaudio._extension.utils")
        if utils is None:
            raise
    original = utils._load_lib

    def _load_lib(lib: str) -> bool:
        try:
            return original(lib)
        except OSError:
            return False

    utils._load_lib = _load_lib
    for name in [n for n in sys.modules if n == "torchaudio" or n.startswith("torchaudio.")]:
        if name != "torchaudio._extension.utils":
            del sys.modules[name]
    import torchaudio  # noqa: F401
    return True
