//===- PrimBase.td - prim dialect definition ----------------*- tablegen -*-===//
#ifndef DYN_PRIM_BASE
#define DYN_PRIM_BASE

include "mlir/IR/OpBase.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "dyn/Dialect/Common/Constraints.td"

def Prim_Dialect : Dialect {
  let name = "prim";
  let cppNamespace = "::dyn::prim";
  let summary = "The closed set of primitives everything decomposes into";
  let description = [{
    Prim ops are explicit: elementwise ops take operands of one type and shape
    (no implicit broadcasting or promotion), broadcasting is
    `prim.broadcast_in_dim`, type changes are `prim.convert_element_type`,
    reductions name the dims they remove, and contractions are
    `prim.dot_general`. The set is closed and small on purpose: a backend
    that handles every prim op handles every program. Families are TableGen
    classes so the set can grow without copy-paste.
  }];
  let hasConstantMaterializer = 1;
  // a folded prim.dim is an arith.constant
  let dependentDialects = ["::mlir::arith::ArithDialect"];
}

def Prim_Tensor : RankedTensorOf<[Dyn_Element]>;
def Prim_FloatTensor : RankedTensorOf<[Dyn_Float]>;
def Prim_IntTensor : RankedTensorOf<[Dyn_Integer]>;
def Prim_BoolTensor : RankedTensorOf<[I1]>;

class Prim_Op<string mnemonic, list<Trait> traits = []>
    : Op<Prim_Dialect, mnemonic, !listconcat(traits, [Pure, Dyn_StaticShapes])>;

// Ops whose tensors may have dynamic (`?`) dims (docs/dynamic_shapes.md). A `?`
// dim is never a broadcast dim: a size that may be 1 is a constant.
class Prim_DynamicOp<string mnemonic, list<Trait> traits = []>
    : Op<Prim_Dialect, mnemonic, !listconcat(traits, [Pure])>;

#endif // DYN_PRIM_BASE
