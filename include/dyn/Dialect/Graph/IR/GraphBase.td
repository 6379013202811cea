//===- GraphBase.td - graph dialect definition --------------*- tablegen -*-===//
#ifndef DYN_GRAPH_BASE
#define DYN_GRAPH_BASE

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "dyn/Dialect/Common/Constraints.td"

def Graph_Dialect : Dialect {
  let name = "graph";
  let cppNamespace = "::dyn::graph";
  let summary = "Tensor-level PyTorch-like ops with value semantics";
  let description = [{
    The graph dialect is what frame capture produces and what autograd
    differentiates. Ops take and return ranked tensors (static shapes, but
    for the elementwise ops, which take dynamic dims) and follow PyTorch
    semantics: elementwise ops broadcast their operands and
    promote their types, reductions take `dims` and `keepdim`, and each op's
    result type is written out (it is the type eager PyTorch would produce).
    Composite ops (softmax) stay whole here so that IR dumps read like the
    user's program; `dyn-convert-graph-to-prim` decomposes every op into the
    closed primitive set of the prim dialect.
  }];
  let hasConstantMaterializer = 1;
}

def Graph_Tensor : RankedTensorOf<[Dyn_Element]>;
def Graph_FloatTensor : RankedTensorOf<[Dyn_Float]>;
def Graph_NumericTensor : RankedTensorOf<[Dyn_Numeric]>;
def Graph_IntegerTensor : RankedTensorOf<[Dyn_Integer]>;
def Graph_BoolTensor : RankedTensorOf<[I1]>;

// Every graph op is side-effect free. `shapeTraits` say where its tensors may
// have dynamic (`?`) dims: nowhere (Dyn_StaticShapes, the default), as the
// elementwise ops broadcast them (Dyn_DynamicDimsStay), or, with no trait, where
// the op's own verifier admits them; families add their own traits.
class Graph_Op<string mnemonic, list<Trait> traits = [], list<Trait> shapeTraits = [Dyn_StaticShapes]>
    : Op<Graph_Dialect, mnemonic, !listconcat(traits, [Pure], shapeTraits)>;

#endif // DYN_GRAPH_BASE
