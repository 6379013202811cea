"""Stack manipulation, building containers and strings, unpacking, match statements (Frame mixin)."""
import torch

from ...ops import TensorVar
from ..values import Opaque, holds_internal, is_constant

# the type flags a match statement's sequence and mapping patterns test (CPython's Py_TPFLAGS_*)
_TPFLAGS_SEQUENCE, _TPFLAGS_MAPPING = 1 << 5, 1 << 6


class BuildOps:
    # -- stack manipulation
    def op_POP_TOP(self, inst):
        self.pop()

    def op_COPY(self, inst):
        self.push(self.stack[-inst.arg])

    def op_SWAP(self, inst):
        i = inst.arg
        self.stack[-1], self.stack[-i] = self.stack[-i], self.stack[-1]

    def op_END_FOR(self, inst):
        self.popn(2)

    # -- match statements: the subject's kind, length and keys
    def op_GET_LEN(self, inst):
        self.push(self.call(len, [self.stack[-1]], {}))

    def op_MATCH_SEQUENCE(self, inst):
        self.push(self._matches_kind(self.stack[-1], _TPFLAGS_SEQUENCE))

    def op_MATCH_MAPPING(self, inst):
        self.push(self._matches_kind(self.stack[-1], _TPFLAGS_MAPPING))

    def _matches_kind(self, v, flag):
        if isinstance(v, Opaque):
            self.fail(f"match on a {type(v.value).__name__}")
        cls = torch.Tensor if isinstance(v, TensorVar) else type(v)
        return bool(cls.__flags__ & flag)

    def op_MATCH_KEYS(self, inst):
        keys, subject = self.stack[-1], self.stack[-2]
        if type(subject) is not dict or id(subject) not in self.tr.created or not all(is_constant(k) for k in keys):
            self.fail("match on the keys of a mapping not made here")
        self.push(tuple(subject[k] for k in keys) if all(k in subject for k in keys) else None)

    # -- building containers
    def _created(self, v):
        self.tr.created.add(id(v))
        self.tr.keep.append(v)
        return v

    def op_BUILD_TUPLE(self, inst):
        self.push(tuple(self.popn(inst.arg)))

    def op_BUILD_LIST(self, inst):
        self.push(self._created(list(self.popn(inst.arg))))

    def op_BUILD_SET(self, inst):
        items = self.popn(inst.arg)
        self.tr.uses_identity(*items)
        self.push(self._created(set(items)))

    def op_BUILD_MAP(self, inst):
        items = self.popn(2 * inst.arg)
        self.tr.uses_identity(*items[::2])
        self.push(self._created({items[i]: items[i + 1] for i in range(0, len(items), 2)}))

    def op_BUILD_CONST_KEY_MAP(self, inst):
        keys = self.pop()
        vals = self.popn(inst.arg)
        self.push(self._created(dict(zip(keys, vals))))

    def op_BUILD_SLICE(self, inst):
        self.push(slice(*self.popn(inst.arg)))

    def op_BUILD_STRING(self, inst):
        self.push("".join(self.popn(inst.arg)))

    def op_FORMAT_VALUE(self, inst):
        spec = self.pop() if (inst.arg & 0x04) else ""
        v = self.pop()
        if isinstance(v, TensorVar):
            self.fail("formatting a tensor")
        if holds_internal(v, self.tr):
            self.fail(f"formatting a {type(v).__name__} holding tensors (or values of the capture)")
        conv = inst.arg & 0x03
        v = {0: lambda x: x, 1: str, 2: repr, 3: ascii}[conv](v)
        self.push(format(v, spec))

    def op_LIST_APPEND(self, inst):
        v = self.pop()
        self.stack[-inst.arg].append(v)

    def op_LIST_EXTEND(self, inst):
        v = self.pop()
        if isinstance(v, TensorVar):
            v = self.tensor_items(v)
        self.stack[-inst.arg].extend(v)

    def op_SET_UPDATE(self, inst):
        v = self.pop()
        self.stack[-inst.arg].update(v)

    def op_SET_ADD(self, inst):
        v = self.pop()
        self.tr.uses_identity(v)
        self.stack[-inst.arg].add(v)

    def op_DICT_UPDATE(self, inst):
        v = self.pop()
        self.stack[-inst.arg].update(v)

    op_DICT_MERGE = op_DICT_UPDATE

    def op_MAP_ADD(self, inst):
        v = self.pop()
        k = self.pop()
        self.tr.uses_identity(k)
        self.stack[-inst.arg][k] = v

    def op_LIST_TO_TUPLE(self, inst):
        self.push(tuple(self.pop()))

    def op_CALL_INTRINSIC_1(self, inst):
        name = inst.argrepr
        if name == "INTRINSIC_LIST_TO_TUPLE":
            self.push(tuple(self.pop()))
        elif name == "INTRINSIC_UNARY_POSITIVE":
            self.push(self.unary("+", self.pop()))
        else:
            self.fail(f"CALL_INTRINSIC_1 {name}")

    def op_UNPACK_SEQUENCE(self, inst):
        seq = self.pop()
        items = self.tensor_items(seq) if isinstance(seq, TensorVar) else list(seq)
        if len(items) != inst.arg:
            self.fail("unpack length mismatch")
        self.stack.extend(reversed(items))

    def op_UNPACK_EX(self, inst):
        seq = self.pop()
        items = self.tensor_items(seq) if isinstance(seq, TensorVar) else list(seq)
        before, after = inst.arg & 0xFF, inst.arg >> 8
        if len(items) < before + after:
            self.fail("unpack length mismatch")
        mid = items[before:len(items) - after]
        vals = items[:before] + [self._created(mid)] + items[len(items) - after:]
        self.stack.extend(reversed(vals))
