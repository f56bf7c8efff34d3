"""Binding user functions to an ``args`` mapping by name, for :mod:`onyx_rapids.operators`
and :mod:`onyx_rapids.acc`.

A user function is a Numba CUDA device function (or a plain Python function, jitted here)
whose first parameters are fixed by the operator (``f, u, v, e`` for an edge function,
``u, v, e, state`` for ``acc``'s compute, ...) and whose further parameters name entries of
``args``.  This module holds what both operators do with them:

* :func:`device_function`: the device function for a user's function;
* :func:`parameters`: the names it takes after the fixed ones (refusing one that takes too few);
* :func:`reads_argument`: whether it reads one of its parameters (a kernel that never needs an
  edge's id need not load it);
* :func:`prepare_args`: ``args`` checked, Python scalars made NumPy ones;
* :func:`passed_once`: the names whose arrays a kernel takes as parameters, each distinct array
  once, and the names bound to an array already passed (the simulator copies every array
  argument, so an array passed twice would split into two);
* :func:`bind_to_slots`: a device function that calls a user function with its ``args`` taken
  from a tuple of slots (``acc``'s kernels pass that tuple; generated kernels instead name
  each argument as a kernel parameter, :mod:`onyx_rapids.kernels.codegen`).
"""

from __future__ import annotations

import dis
import inspect

import numpy as np

from . import device


def py_func(fn):
    """The Python function behind a device function (``fn`` itself if it is one)."""
    return getattr(fn, "py_func", fn)


_JIT_CACHE: dict = {}


def device_function(fn, what: str):
    """A CUDA device function for ``fn`` (already one, or a plain Python function to jit)."""
    if fn is None or not callable(fn):
        raise TypeError(f"{what} must be a function, got {type(fn).__name__}")
    if hasattr(fn, "py_func"):
        return fn
    return _JIT_CACHE.setdefault(fn, device.cuda.jit(device=True)(fn))


def parameters(fn, head: tuple, what: str) -> tuple:
    """The names of ``fn``'s parameters after the fixed ones, ``head``: those ``args`` gives."""
    names = tuple(inspect.signature(py_func(fn)).parameters)
    if len(names) < len(head):
        raise TypeError(
            f"{what} {py_func(fn).__name__} must take ({', '.join(head)}, ...) "
            f"but takes ({', '.join(names)})"
        )
    return names[len(head) :]


def reads_argument(fn, position: int) -> bool:
    """Whether ``fn``'s Python source reads its argument at ``position`` (a kernel that never
    needs an edge's id need not load it).  True when unsure (a closure captures it)."""
    code = py_func(fn).__code__
    name = code.co_varnames[position]
    if name in code.co_cellvars:
        return True
    for ins in dis.get_instructions(code):
        if ins.opname.startswith("LOAD_FAST"):
            value = ins.argval
            if name == value or (isinstance(value, tuple) and name in value):
                return True
    return False


def prepare_args(args, reserved=()) -> dict:
    """``args`` checked (identifier keys, not ``reserved``; device arrays or scalars) with
    Python scalars as NumPy ones (bool, int64, float32)."""
    if args is None:
        return {}
    if not isinstance(args, dict):
        raise TypeError(f"args must be a dict of name -> array or scalar, got {type(args).__name__}")
    prepared = {}
    for name, value in args.items():
        if not isinstance(name, str) or not name.isidentifier() or name in reserved:
            raise ValueError(f"args key {name!r} is not a usable parameter name")
        if isinstance(value, bool):
            prepared[name] = np.bool_(value)
        elif isinstance(value, int):
            prepared[name] = np.int64(value)
        elif isinstance(value, float):
            prepared[name] = np.float32(value)
        elif isinstance(value, np.generic) or device.is_device_array(value):
            prepared[name] = value
        else:
            raise TypeError(
                f"args[{name!r}] must be a device array ({device.xp.__name__}) or a scalar, "
                f"got {type(value).__name__}"
            )
    return prepared


def passed_once(args: dict, names) -> tuple[list, list]:
    """``(kept, aliases)``: of ``names`` (in order), those whose value a kernel takes as a
    parameter, and ``(name, kept name)`` for each bound to an array already kept."""
    kept, aliases = [], []
    for name in names:
        value = args[name]
        twin = next((other for other in kept if args[other] is value
                     and not isinstance(value, np.generic)), None)
        if twin is None:
            kept.append(name)
        else:
            aliases.append((name, twin))
    return kept, aliases


_BOUND: dict = {}


def bind_to_slots(fn, head: tuple, extras: tuple):
    """A device function ``(*head, aux)`` that returns ``fn(*head, *extras)``.

    ``extras`` are the expressions of ``fn``'s parameters after ``head``: ``"aux[i]"`` (slot i
    of the tuple of user arguments the kernels pass through) or a name of ``head`` (the state
    itself bound by name).  This is how :func:`onyx_rapids.acc.acc` hands each user function
    the ``args`` entries it names; its kernels only ever call ``f(*head, aux)``.  Cached, so
    that the same binding is the same function (and the kernels built on it are reused)."""
    key = (fn, tuple(head), tuple(extras))
    if key not in _BOUND:
        params = ", ".join(head + ("aux",))
        call = ", ".join(head + tuple(extras))
        source = f"def bound({params}):\n    return fn({call})\n"
        namespace = {"fn": fn}
        exec(compile(source, f"<acc binding of {getattr(fn, '__name__', fn)}>", "exec"),
             namespace)
        _BOUND[key] = device.cuda.jit(device=True)(namespace["bound"])
    return _BOUND[key]
