"""Kernels and helpers read like the functions they decorate: names, docs, signature, repr."""

from __future__ import annotations

import inspect
import pydoc
from pathlib import Path

import simtsafe as ss
from tests.kernels import load_kernel_module

_SOURCE = '''
@ss.device
def twice(x):
    """Twice x."""
    return x * 2

@ss.kernel(contract=ss.LaunchContract(domain=1, block=64), lineinfo=True)
def blur(out: DisjointSlice[np.float32], a: In[np.float32]) -> None:
    """Blur a row."""
    i = thread.index_1d()
    out[i] = twice(a[i])
'''


def test_kernel_has_its_functions_attributes(tmp_path: Path) -> None:
    mod = load_kernel_module(tmp_path, _SOURCE)
    k, h = mod.blur, mod.twice
    assert (k.__name__, k.__qualname__, k.__module__) == ("blur", "blur", mod.__name__)
    assert (h.__name__, h.__qualname__, h.__module__) == ("twice", "twice", mod.__name__)
    assert k.__wrapped__ is k.py_func and h.__wrapped__ is h.py_func
    assert str(inspect.signature(k)) == str(inspect.signature(k.py_func))
    assert k.__doc__ is not None and "Blur a row." in k.__doc__
    assert "LaunchContract(domain=1, block=(64, 1, 1)" in k.__doc__
    assert "lineinfo=True" in k.__doc__
    assert h.__doc__ is not None and "Twice x." in h.__doc__


def test_classes_keep_their_own_attributes() -> None:
    assert (ss.Kernel.__name__, ss.Kernel.__qualname__) == ("Kernel", "Kernel")
    assert ss.Kernel.__module__ == "simtsafe._compose"
    assert ss.Kernel.__doc__ is not None and ss.Kernel.__doc__.startswith("A ``@simtsafe.kernel``")
    assert ss.DeviceFunction.__name__ == "DeviceFunction"


def test_repr_and_help_name_the_kernel(tmp_path: Path) -> None:
    mod = load_kernel_module(tmp_path, _SOURCE)
    assert repr(mod.blur).startswith(f"<simtsafe.kernel 'blur' ({mod.__name__}.blur) contract=")
    assert repr(mod.twice) == f"<simtsafe.device 'twice' ({mod.__name__}.twice)>"
    text = pydoc.render_doc(mod.blur, renderer=pydoc.plaintext)
    assert "blur(out:" in text and "Blur a row." in text and "Launch contract" in text


def test_function_attributes_are_read_only(tmp_path: Path) -> None:
    mod = load_kernel_module(tmp_path, _SOURCE)
    try:
        mod.blur.__name__ = "other"
    except AttributeError as exc:
        assert "read-only" in str(exc) or "immutable" in str(exc)
    else:  # pragma: no cover - the assertion below fails
        raise AssertionError("__name__ was assignable")
    assert mod.blur.__name__ == "blur"
