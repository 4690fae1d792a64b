"""Which of OpenBLAS's kernel sets NumPy's matrix products use on this CPU, chosen before NumPy loads.

NumPy's wheels ship OpenBLAS built for many CPUs at once (DYNAMIC_ARCH). It picks one kernel set when
NumPy is first imported: from the OPENBLAS_CORETYPE environment variable if set, else from the CPU's
features. On AMD Zen 4 (family 25 with AVX-512) it picks "SkylakeX": AVX-512 kernels with blocking
sizes tuned for Intel's caches. There the AVX2 "Haswell" kernels ran the NumPy BERT engine faster,
same process, alternating (three A/B runs, two of them `python -m bench --only bert_speed`'s rows
"Haswell / SkylakeX kernels"): 0.96-0.99x the time at 32 tokens, 0.91-0.98x at 128 and 0.82-0.97x
at 512; one of the engine's products alone, with its weights coming from memory, 9-16% faster.
Results differ only in float32 rounding (parity with transformers stays about 5e-6).
Four later runs of those rows (2026-11-21) did not agree: 1.05-1.07x (Haswell slower) at 32 tokens,
0.89-1.05x at 128, 1.01x at 512. The rows time the engine in one process, and sentences of up to 128
tokens now take the partner path (core/bert_partner.py, one BLAS thread a side), where an A/B of both
kernel sets was too noisy to decide; the rule stays until a bench row on that path says otherwise.

This was measured with NumPy 2.4's OpenBLAS 0.3.31. OpenBLAS 0.3.34 retunes the SkylakeX blocking for
Zen 4 (OpenMathLib/OpenBLAS#5868): when NumPy's OpenBLAS changes, rerun that bench row and drop this
rule if it no longer pays. Other CPUs (Intel, Zen 5, ARM, macOS's Accelerate) keep OpenBLAS's choice.

core/__init__.py calls prefer_faster_kernels() before anything imports NumPy. A user's own
OPENBLAS_CORETYPE always wins, and once NumPy is loaded nothing changes (NumPy then runs with
OpenBLAS's own choice: the same results, a little slower). Imports nothing but the standard library.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping, MutableMapping
from pathlib import Path

CPUINFO = Path("/proc/cpuinfo")


def _first_processor(cpuinfo: str) -> dict[str, str]:
    """The "key : value" fields of the first processor in /proc/cpuinfo's text."""
    fields: dict[str, str] = {}
    for line in cpuinfo.splitlines():
        key, colon, value = line.partition(":")
        if not colon:
            if fields:  # a blank line ends the first processor's block
                break
            continue
        fields.setdefault(key.strip(), value.strip())
    return fields


def kernels_for(cpuinfo: str) -> str | None:
    """The OPENBLAS_CORETYPE to prefer on the CPU that /proc/cpuinfo's text describes, or None to keep
    OpenBLAS's own choice."""
    cpu = _first_processor(cpuinfo)
    zen4 = (
        cpu.get("vendor_id") == "AuthenticAMD"
        and cpu.get("cpu family") == "25"  # Zen 3 and Zen 4; of those, only Zen 4 has AVX-512
        and "avx512f" in cpu.get("flags", "").split()
    )
    return "Haswell" if zen4 else None


def kernels_for_this_cpu(cpuinfo: Path = CPUINFO) -> str | None:
    """kernels_for() this machine's CPU; None where /proc/cpuinfo cannot be read (not Linux)."""
    try:
        text = cpuinfo.read_text(errors="replace")
    except OSError:
        return None
    return kernels_for(text)


def prefer_faster_kernels(
    environ: MutableMapping[str, str] = os.environ,
    loaded: Mapping[str, object] = sys.modules,
    cpuinfo: Path = CPUINFO,
) -> str | None:
    """Set OPENBLAS_CORETYPE when this CPU runs faster on other kernels than OpenBLAS would pick, the
    user has not set it and NumPy is not loaded yet. Returns the kernel set chosen, or None."""
    if "OPENBLAS_CORETYPE" in environ or "numpy" in loaded:
        return None
    kernels = kernels_for_this_cpu(cpuinfo)
    if kernels is not None:
        environ["OPENBLAS_CORETYPE"] = kernels
    return kernels
