"""Vector loads of a row's consecutive float32 features: ``load2(a, i, j)`` returns ``a[i, j]``
and ``a[i, j + 1]`` from one 8-byte load, ``load4`` four values from one 16-byte load
(``ld.v2.f32`` / ``ld.v4.f32`` in the PTX).  Numba issues one 4-byte load per array element,
so a thread gathering four features of a neighbour's row issued four load instructions; on
graphs whose rows come from L2 the load instructions, not the bytes, bound the gather.

The caller guarantees alignment: ``a`` C-contiguous float32 with its rows a multiple of 2 (4)
features wide, its data aligned to 8 (16) bytes, and ``j`` a multiple of 2 (4)
(:func:`onyx_rapids.operators.foldmap` checks this before it generates a vector gather).
Under the CUDA simulator they are plain element reads.
"""

from __future__ import annotations

from numba import cuda

from .. import device


def _vector_load(width: int):
    from llvmlite import ir
    from numba.cuda import cgutils, types
    from numba.cuda.extending import intrinsic

    @intrinsic
    def load(typingctx, a, i, j):
        if not (isinstance(a, types.Array) and a.dtype == types.float32 and a.ndim == 2):
            return None
        sig = types.UniTuple(types.float32, width)(a, i, j)

        def codegen(context, builder, signature, args):
            aryty = signature.args[0]
            ary = context.make_array(aryty)(context, builder, args[0])
            index = [context.cast(builder, value, ty, types.intp)
                     for value, ty in zip(args[1:], signature.args[1:])]
            pointer = cgutils.get_item_pointer(context, builder, aryty, ary, index)
            vector = ir.VectorType(ir.FloatType(), width)
            loaded = builder.load(builder.bitcast(pointer, vector.as_pointer()),
                                  align=4 * width)
            values = [builder.extract_element(loaded, ir.Constant(ir.IntType(32), t))
                      for t in range(width)]
            return context.make_tuple(builder, signature.return_type, values)

        return sig, codegen

    return load


if device.is_simulator():

    @cuda.jit(device=True)
    def load2(a, i, j):
        return a[i, j], a[i, j + 1]

    @cuda.jit(device=True)
    def load4(a, i, j):
        return a[i, j], a[i, j + 1], a[i, j + 2], a[i, j + 3]

else:
    load2 = _vector_load(2)
    load4 = _vector_load(4)
