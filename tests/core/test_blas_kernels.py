"""core/blas_kernels.py: which OpenBLAS kernels the app asks for, and that the request takes effect."""

import os
import platform
import subprocess
import sys
from pathlib import Path

import pytest

from core import blas_threads
from core.blas_kernels import kernels_for, kernels_for_this_cpu, prefer_faster_kernels

ROOT = Path(__file__).resolve().parents[2]


def cpuinfo(vendor: str, family: int, flags: str, processors: int = 2) -> str:
    """/proc/cpuinfo's text for `processors` identical processors."""
    block = (
        f"processor\t: {{n}}\nvendor_id\t: {vendor}\ncpu family\t: {family}\nmodel\t\t: 17\n"
        f"model name\t: a test CPU\nflags\t\t: {flags}\n\n"
    )
    return "".join(block.format(n=n) for n in range(processors))


ZEN4 = cpuinfo("AuthenticAMD", 25, "fpu sse2 avx avx2 fma avx512f avx512dq avx512bw avx512vl")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (ZEN4, "Haswell"),
        (cpuinfo("AuthenticAMD", 25, "fpu sse2 avx avx2 fma"), None),  # Zen 3: OpenBLAS picks Zen
        (cpuinfo("AuthenticAMD", 26, "fpu avx2 avx512f"), None),  # Zen 5: not measured
        (cpuinfo("GenuineIntel", 6, "fpu avx2 avx512f"), None),  # Intel: SkylakeX is tuned for it
        (cpuinfo("AuthenticAMD", 25, "fpu avx512fp16"), None),  # a longer flag is not avx512f
        ("", None),
        ("processor\t: 0\nCPU implementer\t: 0x41\nFeatures\t: fp asimd\n", None),  # ARM
    ],
)
def test_kernels_for_cpus(text, expected):
    assert kernels_for(text) == expected


def test_kernels_for_reads_the_first_processor_only():
    mixed = ZEN4.split("\n\n")[0] + "\n\n" + cpuinfo("GenuineIntel", 6, "fpu avx2", processors=1)
    assert kernels_for(mixed) == "Haswell"
    assert kernels_for(cpuinfo("GenuineIntel", 6, "avx2", 1) + ZEN4) is None


def test_prefer_faster_kernels_sets_the_variable_before_numpy(tmp_path):
    info = tmp_path / "cpuinfo"
    info.write_text(ZEN4)
    environ = {}
    assert prefer_faster_kernels(environ, loaded={}, cpuinfo=info) == "Haswell"
    assert environ == {"OPENBLAS_CORETYPE": "Haswell"}


def test_prefer_faster_kernels_leaves_the_user_and_a_loaded_numpy_alone(tmp_path):
    info = tmp_path / "cpuinfo"
    info.write_text(ZEN4)
    users = {"OPENBLAS_CORETYPE": "SkylakeX"}
    assert prefer_faster_kernels(users, loaded={}, cpuinfo=info) is None
    assert users == {"OPENBLAS_CORETYPE": "SkylakeX"}
    environ = {}
    assert prefer_faster_kernels(environ, loaded={"numpy": object()}, cpuinfo=info) is None
    assert environ == {}  # too late: OpenBLAS has picked already, and a child process would differ


def test_prefer_faster_kernels_without_proc_or_on_other_cpus(tmp_path):
    environ = {}
    assert prefer_faster_kernels(environ, loaded={}, cpuinfo=tmp_path / "missing") is None
    other = tmp_path / "cpuinfo"
    other.write_text(cpuinfo("GenuineIntel", 6, "avx2 avx512f"))
    assert prefer_faster_kernels(environ, loaded={}, cpuinfo=other) is None
    assert environ == {}


def kernels_in_a_fresh_process(**env) -> tuple[str | None, str | None]:
    """(OPENBLAS_CORETYPE, the kernels OpenBLAS runs) in a new Python that imports core, then NumPy."""
    code = (
        "import os, core, numpy\n"
        "from core import blas_threads\n"
        "print(os.environ.get('OPENBLAS_CORETYPE'), blas_threads.kernels())\n"
    )
    environ = {k: v for k, v in os.environ.items() if k != "OPENBLAS_CORETYPE"} | env
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=environ, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    variable, kernels = done.stdout.split()
    return (None if variable == "None" else variable), (None if kernels == "None" else kernels)


@pytest.mark.skipif(not blas_threads.available(), reason="NumPy's BLAS here is not an OpenBLAS")
def test_importing_core_first_gives_numpy_the_chosen_kernels():
    chosen = kernels_for_this_cpu()
    variable, kernels = kernels_in_a_fresh_process()
    assert variable == chosen
    if chosen is not None:  # on AMD Zen 4: this is the check that the rule takes effect
        assert kernels is not None and kernels.lower() == chosen.lower()


@pytest.mark.skipif(
    not blas_threads.available() or platform.machine() not in ("x86_64", "AMD64"),
    reason="needs NumPy's OpenBLAS on x86-64",
)
def test_a_users_own_kernel_choice_wins():
    variable, kernels = kernels_in_a_fresh_process(OPENBLAS_CORETYPE="Sandybridge")
    assert variable == "Sandybridge" and kernels.lower() == "sandybridge"
