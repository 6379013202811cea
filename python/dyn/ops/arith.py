"""Elementwise ops: unary, binary, division and rounding, where, convert, clamp (Ops mixin)."""
import math
import operator

import torch

from ..errors import Unsupported
from .tensor import SCALARS, TensorVar, _fits_int64, _meta
from ..dynamic.symbolic import meta_empty


def torch_fn(op):
    """PyTorch's function of the elementwise op `op`: torch.<op>, else torch.special.<op> (entr, xlog1py)."""
    fn = getattr(torch, op, None)
    return fn if fn is not None else getattr(torch.special, op)


def _same_device(op, *vals):
    """Eager refuses an elementwise op on a CPU tensor of several elements and a CUDA one (0-d CPU tensors
    mix as scalars): so does capture (graph.Node.host, Node.on_device), for floating CPU tensors. Integer and
    boolean ones are left alone: handlers' decompositions mix CPU indices and masks (x[idx] = v with idx on
    the CPU, which eager allows) with CUDA values in these same ops."""
    ts = [v for v in vals if isinstance(v, TensorVar) and v.meta.dim() > 0]
    if any(t.node.host and t.meta.is_floating_point() for t in ts) and \
            any(t.node.on_device and not t.node.host for t in ts):
        raise Unsupported(f"{op} of a tensor on the CPU and one on CUDA (eager raises)")


def _wrapped(v, dtype):
    """A Python int v as an integer dtype holds it after eager's conversion (modulo 2**bits)."""
    if not isinstance(v, int) or isinstance(v, bool) or dtype is None or dtype.is_floating_point or \
            dtype.is_complex or dtype == torch.bool:
        return v
    info = torch.iinfo(dtype)
    if info.min <= v <= info.max:
        return v
    return (v - info.min) % (1 << info.bits) + info.min


class ArithOps:
    # -- elementwise ------------------------------------------------------------------------------
    def unary(self, op, x):
        self.check(x)
        fn = torch_fn(op)
        meta = fn(x.meta)
        self.accepts(op, fn, x)
        return self.node(op, [x], meta)

    _ARITH = {"add": operator.add, "sub": operator.sub, "mul": operator.mul, "div": operator.truediv,
              "pow": operator.pow, "remainder": operator.mod, "maximum": torch.maximum,
              "minimum": torch.minimum}
    _BITWISE = ("bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_left_shift", "bitwise_right_shift")
    # eager's results on booleans: max is or, min is and, heaviside(x, v) is x where x is true, else v
    _BOOL_AS_LOGICAL = {"fmax": "logical_or", "fmin": "logical_and", "heaviside": "logical_or"}
    _CMP = {"eq": operator.eq, "ne": operator.ne, "lt": operator.lt, "le": operator.le,
            "gt": operator.gt, "ge": operator.ge}

    def binary(self, op, a, b):
        if not isinstance(a, TensorVar) and not isinstance(b, TensorVar):
            raise Unsupported(f"{op} without a tensor operand")
        _same_device(op, a, b)
        # a symbolic size as a number (a capture with dynamic dims): a 0-d int64 tensor of its runtime
        # value, which promotes as a Python int does (a 0-d operand does not widen the other's type)
        a, b = (self.size_tensor(v) if isinstance(v, torch.SymInt) else v for v in (a, b))
        for v in (a, b):
            if not isinstance(v, (TensorVar,) + SCALARS):
                raise Unsupported(f"unsupported operand {type(v).__name__} for {op}")
        _fits_int64(a, b)
        metas = self.tr.session.metas
        if op in self._CMP:
            meta = metas.call(self._CMP[op], _meta(a), _meta(b))
        elif op in ("logical_and", "logical_or", "logical_xor"):
            ma, mb = _meta(a), _meta(b)
            if not isinstance(ma, torch.Tensor):
                ma = torch.tensor(ma, device="meta")
            if not isinstance(mb, torch.Tensor):
                mb = torch.tensor(mb, device="meta")
            meta = getattr(torch, op)(ma, mb)
        elif op in ("maximum", "minimum") and not (isinstance(a, TensorVar) and isinstance(b, TensorVar)):
            t = a if isinstance(a, TensorVar) else b
            s = b if t is a else a
            meta = meta_empty(t.meta.shape, dtype=torch.result_type(t.meta, s), device="meta")
        elif op in self._ARITH:
            meta = metas.call(self._ARITH[op], _meta(a), _meta(b))
        elif op in self._BITWISE:  # they take a Python number on either side (a uint8 tensor << 3 stays uint8)
            try:
                meta = metas.call(getattr(torch, op), _meta(a), _meta(b))
            except (RuntimeError, TypeError) as e:
                raise Unsupported(f"{op}: {e}")
        else:  # the registry's other binary ops (atan2, hypot, xlogy, ...): PyTorch's own function
            try:
                meta = torch_fn(op)(*(v if isinstance(v, torch.Tensor) else torch.tensor(v, device="meta")
                                            for v in (_meta(a), _meta(b))))
            except (RuntimeError, TypeError) as e:
                raise Unsupported(f"{op}: {e}")
        if op == "pow" and meta.dtype == torch.bool:
            raise Unsupported("pow with a bool result")
        if meta.dtype == torch.bool and op in self._BOOL_AS_LOGICAL:  # the graph ops take numbers
            op = self._BOOL_AS_LOGICAL[op]
        if op in self._CMP or op in ("logical_and", "logical_or", "logical_xor"):
            t = a if isinstance(a, TensorVar) else b
            s = b if t is a else a
            cdt = torch.result_type(t.meta, s) if not isinstance(s, TensorVar) else None
        else:
            cdt = meta.dtype
        if op == "remainder" and not meta.dtype.is_floating_point:
            self._int_divisor(op, b)
        if op in ("maximum", "minimum", "logical_and", "logical_or", "logical_xor"):  # they take tensors only: scalars as 0-d
            pa, pb = (v if isinstance(v, TensorVar) else torch.tensor(v) for v in (a, b))
            self.accepts(op, getattr(torch, op), pa, pb)
        elif op in self._BITWISE:
            self.accepts(op, getattr(torch, op), a, b)
        else:
            self.accepts(op, self._CMP.get(op) or self._ARITH.get(op) or torch_fn(op), a, b)
        if op in self._WRAPS:
            a, b = _wrapped(a, cdt), _wrapped(b, cdt)
        if op == "div" and meta.dtype.is_floating_point and self.tr.device.type == "cuda" and \
                self._cpu_scalar(b, meta.dtype):
            # CUDA's true division by a CPU scalar multiplies by its reciprocal, computed in the opmath type
            ct = torch.float32 if meta.dtype in (torch.float16, torch.bfloat16) else meta.dtype
            if isinstance(b, TensorVar):
                return self.binary("mul", a, self.unary("reciprocal", self.convert(b, ct)))
            inv = (torch.tensor(1.0, dtype=ct) / torch.tensor(b, dtype=ct)).item()
            return self.binary("mul", a, inv)
        if op in self._OPMATH_SCALAR and meta.dtype in (torch.float16, torch.bfloat16) and \
                self._opmath_scalar(op, a, b, meta.dtype):
            r = self.binary(op, *(self.convert(v, torch.float32) if isinstance(v, TensorVar)
                                  else self.const(v, torch.float32) for v in (a, b)))
            return self.convert(r, meta.dtype)
        if meta.dtype in (torch.float16, torch.bfloat16):
            # a 0-d tensor of a wider float type is cast to the common dtype first, as TensorIterator does
            a, b = (self.convert(v, meta.dtype) if isinstance(v, TensorVar) and v.meta.dim() == 0 and
                    v.meta.dtype.is_floating_point and v.meta.dtype != meta.dtype else v for v in (a, b))
        if not isinstance(a, TensorVar):
            a = self.const(a, cdt)
        if not isinstance(b, TensorVar):
            b = self.const(b, cdt)
        return self.node(op, [a, b], meta)

    # eager converts a Python int to an integer tensor's type, wrapping (uint8: x == -1 is x == 255,
    # x + 300 is x + 44), in these ops; the others compute in another type or raise
    _WRAPS = frozenset(("add", "sub", "mul", "bitwise_and", "bitwise_or", "bitwise_xor") + tuple(_CMP))

    _OPMATH_SCALAR = frozenset(("add", "sub", "mul", "div"))

    def _opmath_scalar(self, op, a, b, dt):
        """Whether eager's float16/bfloat16 kernel reads a scalar operand at float32 precision (its
        `original_scalar_value`, not rounded to dt; the op then computes in float32 and rounds once). CUDA's
        kernels do for add, sub, mul and div with a Python number or a 0-d CPU tensor on either side; the
        CPU's for mul and div with a Python number, or a 0-d tensor as the second operand (add and sub round
        the scalar to dt there)."""
        cuda = self.tr.device.type == "cuda"
        if cuda:
            return self._cpu_scalar(a, dt) or self._cpu_scalar(b, dt)
        return op in ("mul", "div") and (self._cpu_scalar(b, dt) or
                                         (isinstance(a, (int, float)) and not isinstance(a, bool)))

    def _cpu_scalar(self, v, dt):
        """A Python number, or a 0-d tensor of another dtype than dt that eager holds on the CPU (on the
        CPU: any 0-d tensor): what eager's kernels read as a scalar."""
        if isinstance(v, bool):
            return False
        if isinstance(v, (int, float)):
            return True
        return isinstance(v, TensorVar) and v.meta.dim() == 0 and v.meta.dtype != dt and \
            not v.meta.dtype.is_complex and v.meta.dtype != torch.bool and \
            (v.node.host or self.tr.device.type != "cuda")

    def _int_divisor(self, op, b):
        """Integer division and remainder by zero: eager's CPU kernels raise ZeroDivisionError, where
        compiled integer division would trap. A tensor divisor is checked before each run of the graph on
        the CPU (check_values: computed from the inputs again); on CUDA eager does not raise (the quotient
        is the hardware's), nor does dyn."""
        if isinstance(b, TensorVar):
            if self.tr.device.type != "cpu":
                return
            try:
                self.check_values(self.binary("ne", b, 0), "ZeroDivisionError")
            except Unsupported:
                raise Unsupported(f"integer {op} by a tensor computed in the graph (a zero divisor raises in "
                                  "eager; dyn checks divisors computed from the inputs only)") from None
            return
        if b == 0:
            raise Unsupported(f"integer {op} by zero (eager raises ZeroDivisionError)")

    def trunc(self, x):
        """Rounding toward zero (floor of positives, ceil of negatives)."""
        self.check(x)
        if not x.meta.dtype.is_floating_point:
            return x
        return self.unary("trunc", x)

    def truediv_operator(self, a, b):
        """Python's a / b with a tensor operand: number / tensor is Tensor.__rtruediv__, which eager
        computes as b.reciprocal() * a."""
        if not isinstance(a, TensorVar) and isinstance(a, (int, float)) and not isinstance(a, bool):
            return self.binary("mul", self.unary("reciprocal", b), a)
        return self.binary("div", a, b)

    def div(self, a, b, rounding_mode=None, grad="raise"):
        """torch.div: true division, or with rounding_mode 'trunc' / 'floor' (the result keeps the
        promoted type of a and b: integers stay integers). grad: eager's autograd for a rounded division
        of tensors that require grad: 'raise' (floor_divide and the // operator: the backward raises, so
        not captured) or 'zero' (torch.div(rounding_mode=...): zero gradients)."""
        if rounding_mode is None:
            return self.binary("div", a, b)
        if rounding_mode not in ("trunc", "floor"):
            raise Unsupported(f"div rounding_mode={rounding_mode!r}")
        grads = [v for v in (a, b) if isinstance(v, TensorVar) and self.needs_grad(v)]
        if not grads:
            return self._div_rounded(a, b, rounding_mode)
        if grad == "raise":
            raise Unsupported("floor division of a tensor that requires grad (eager's backward raises)")
        r = self._div_rounded(*(self.detach(v) if v in grads else v for v in (a, b)), rounding_mode)
        return self.zero_grad_to(r, *grads)

    def zero_grad_to(self, r, *vals):
        """r's value, computed by autograd from vals with zero gradients (r itself cut from them)."""
        for v in vals:
            r = self.where(self.full(tuple(r.meta.shape), True, torch.bool), r, v)
        return r

    def sqrt0(self, s):
        """sqrt(s) whose gradient is zero where s == 0, as eager's backward of norm and std makes it (sqrt's
        own is infinite there, and times a zero gives NaN), when s needs a gradient."""
        if not self.needs_grad(s):
            return self.unary("sqrt", s)
        zero = self.binary("eq", s, 0)
        return self.where(zero, 0.0, self.unary("sqrt", self.where(zero, 1.0, s)))

    def _div_rounded(self, a, b, rounding_mode):
        if not isinstance(a, TensorVar) and not isinstance(b, TensorVar):
            raise Unsupported("div without a tensor operand")
        for v in (a, b):
            if not isinstance(v, (TensorVar,) + SCALARS):
                raise Unsupported(f"unsupported operand {type(v).__name__} for div")
        ma, mb = _meta(a), _meta(b)
        if not isinstance(ma, torch.Tensor):
            ma = torch.tensor(ma, device="meta")
        try:
            meta = torch.div(ma, mb, rounding_mode=rounding_mode)
        except (RuntimeError, TypeError) as e:
            raise Unsupported(f"div: {e}")
        dt = meta.dtype
        if dt == torch.bool:
            raise Unsupported("div with rounding of booleans")
        if dt.is_floating_point:
            # float16 / bfloat16 compute in float32 as eager's kernels do, the result rounded once to dt;
            # with a tensor divisor (a Python number dividend is then rounded to dt) trunc rounds the
            # quotient to dt and, on the CPU, floor rounds every step (graph.div_rounded's round_steps)
            low, tensor_divisor = dt in (torch.float16, torch.bfloat16), isinstance(b, TensorVar)
            ct = torch.float32 if low else dt
            round_steps = low and tensor_divisor and (rounding_mode == "trunc" or self.tr.device.type == "cpu")

            def operand(v):
                if isinstance(v, TensorVar):
                    return self.convert(v, dt)
                return self.full((), v, dt if tensor_divisor else ct)  # a Python number divisor stays unrounded
            a, b = operand(a), operand(b)
        else:
            self._int_divisor(f"div (rounding_mode={rounding_mode!r})", b)
            a = self.convert(a, dt) if isinstance(a, TensorVar) else self.const(a, dt)
            b = self.convert(b, dt) if isinstance(b, TensorVar) else self.const(b, dt)
            round_steps = False
        return self.node("div_rounded", [a, b], meta, rounding_mode=rounding_mode, round_steps=round_steps)

    def fmod(self, a, b):
        """torch.fmod: the C remainder (the sign of a)."""
        self.check(a)
        if not isinstance(b, (TensorVar,) + SCALARS):
            raise Unsupported(f"unsupported operand {type(b).__name__} for fmod")
        try:
            meta = torch.fmod(a.meta, _meta(b))
        except (RuntimeError, TypeError) as e:
            raise Unsupported(f"fmod: {e}")
        dt = meta.dtype
        if dt == torch.bool:
            raise Unsupported("fmod of booleans")
        if not dt.is_floating_point:
            self._int_divisor("fmod", b)
        # graph.fmod: exact (C fmod); eager's own gradients from the eager backend's torch.fmod
        if not isinstance(b, TensorVar):
            b = self.const(b, dt)
        return self.node("fmod", [a, b], meta)

    def where(self, c, a, b):
        self.check(c)
        _same_device("where", c, a, b)
        _fits_int64(a, b)
        if c.meta.dtype != torch.bool:
            c = self.convert(c, torch.bool)
        meta = torch.where(c.meta, _meta(a), _meta(b))
        a = self.const(a, meta.dtype)
        b = self.const(b, meta.dtype)
        return self.node("where", [c, a, b], meta)

    def convert(self, x, dtype):
        self.check(x)
        if x.meta.dtype == dtype:
            return x
        if x.meta.dtype == torch.float64 and dtype in (torch.bfloat16, torch.float16):
            # eager rounds float64 to float32, then to the half type (c10's conversions): one rounding
            # directly from the double differs at ties of the second rounding
            x = self.node("convert", [x], x.meta.to(torch.float32))
        return self.node("convert", [x], x.meta.to(dtype))

    def clamp(self, x, lo=None, hi=None):
        """torch.clamp as graph.clamp: the operands in eager's promoted type, a missing bound as the type's
        extreme. The eager backend runs torch.clamp on them (eager's values and subgradient)."""
        self.check(x)
        for v in (lo, hi):
            if v is not None and not isinstance(v, (TensorVar,) + SCALARS):
                raise Unsupported(f"clamp bound of type {type(v).__name__}")
        _fits_int64(lo, hi)
        _same_device("clamp", x, lo, hi)
        try:
            meta = torch.clamp(x.meta, _meta(lo), _meta(hi))
        except (RuntimeError, TypeError, ValueError) as e:
            raise Unsupported(f"clamp: {e}")  # eager raises
        self.accepts("clamp", torch.clamp, x, lo, hi)  # booleans raise
        dt = meta.dtype
        if dt == torch.bool:  # clamp_min/max of bool tensors (graph.clamp is numeric): or, and
            r = x if lo is None else self.binary("maximum", x, lo)
            return r if hi is None else self.binary("minimum", r, hi)
        if dt.is_floating_point:
            least, greatest = -math.inf, math.inf
        else:
            least, greatest = torch.iinfo(dt).min, torch.iinfo(dt).max

        def operand(v, extreme):
            v = extreme if v is None else v
            return self.convert(v, dt) if isinstance(v, TensorVar) else self.const(v, dt)
        return self.node("clamp", [self.convert(x, dt), operand(lo, least), operand(hi, greatest)], meta)
