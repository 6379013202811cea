//===- GraphOpRegistry.td - what every layer knows of a graph op -*- tablegen -*-===//
//
// The op registry. A graph op derived from Graph_RegisteredOp is declared once,
// in GraphOps.td, and carries everything each layer needs:
//
//   - its ODS definition (operands, attributes, result type constraint and
//     traits come from the type and shape rules below, so the verifier checks
//     the result type against the registry's type rule);
//   - `torchNames`: the PyTorch callables capture maps to it (`torch.sinh`,
//     `Tensor.sinh`, `F.elu`, `aten.elu`);
//   - `signature`: for ops captured by a generated handler, the Python
//     parameters of the PyTorch function (operands and attributes by their ODS
//     names; other parameters such as `inplace` are handled by capture);
//   - `eager`: a Python expression of the op's semantics over its operands,
//     attributes, `dtype`, `shape` and `device` (the result's) and `capture`
//     (what capture recorded beyond the attributes: eager's own random draws
//     need it): the eager backend runs it;
//   - `lowering`: a 1:1 prim op, a named C++ composite pattern (in the
//     GraphToPrim file of its family) or a library call;
//   - its derivative: a record of GraphDerivatives.td (dyn-graph-autodiff).
//
// tools/dyn-tblgen reads these records and generates the GraphToPrim pattern
// tables (-gen-graph-to-prim-table), python/dyn/_ops_generated.py
// (-gen-ops-py) and the op list of docs/ops.md (-gen-ops-doc).
//
//===----------------------------------------------------------------------===//
#ifndef DYN_GRAPH_OP_REGISTRY
#define DYN_GRAPH_OP_REGISTRY

include "dyn/Dialect/Graph/IR/GraphBase.td"

//===----------------------------------------------------------------------===//
// Type rules: the result element type from the operands' (PyTorch promotion).
//===----------------------------------------------------------------------===//

class Dyn_TypeRule<string ruleName, Type resultType, string ruleDesc,
                   list<Trait> ruleTraits = []> {
  string name = ruleName;
  Type result = resultType;
  string description = ruleDesc;
  list<Trait> traits = ruleTraits;
}

def Dyn_PromoteRule : Dyn_TypeRule<"promote", Graph_Tensor,
    "the operands' promoted type; operands are converted to it">;
def Dyn_PromoteNumericRule : Dyn_TypeRule<"promote_numeric", Graph_NumericTensor,
    "the operands' promoted type, not bool; operands are converted to it">;
def Dyn_FloatRule : Dyn_TypeRule<"float", Graph_FloatTensor,
    "a float type: the operands' promoted type, integers and bool become the default float">;
def Dyn_BoolRule : Dyn_TypeRule<"bool", Graph_BoolTensor, "bool (i1)">;
def Dyn_PromoteIntegerRule : Dyn_TypeRule<"promote_integer", Graph_IntegerTensor,
    "the operands' promoted type, an integer or bool; operands are converted to it">;
def Dyn_KeepsIntegerRule : Dyn_TypeRule<"keeps_integer", Graph_IntegerTensor,
    "the operand's integer or bool type", [AllTypesMatch<["input", "result"]>]>;
def Dyn_KeepsTypeRule : Dyn_TypeRule<"keeps_type", Graph_NumericTensor,
    "the operand's type, not bool", [AllTypesMatch<["input", "result"]>]>;
def Dyn_KeepsFloatRule : Dyn_TypeRule<"keeps_float", Graph_FloatTensor,
    "the operand's float type", [AllTypesMatch<["input", "result"]>]>;
def Dyn_KeepsElementRule : Dyn_TypeRule<"keeps_element", Graph_Tensor,
    "the operand's element type", [AllElementTypesMatch<["input", "result"]>]>;
def Dyn_MetaRule : Dyn_TypeRule<"meta", Graph_Tensor,
    "PyTorch's, from its meta function at capture (library calls)">;
def Dyn_FreeRule : Dyn_TypeRule<"free", Graph_Tensor,
    "any type (an explicit dtype argument); the operand is converted to it">;
def Dyn_IndexRule : Dyn_TypeRule<"index", Index, "an `index` (a size)">;

//===----------------------------------------------------------------------===//
// Shape rules
//===----------------------------------------------------------------------===//

class Dyn_ShapeRule<string ruleName, string ruleDesc, list<Trait> ruleTraits = []> {
  string name = ruleName;
  string description = ruleDesc;
  list<Trait> traits = ruleTraits;
}

def Dyn_SameShape : Dyn_ShapeRule<"elementwise", "the operand's shape",
                                  [SameOperandsAndResultShape]>;
def Dyn_Broadcast : Dyn_ShapeRule<"broadcast", "the operands broadcast (numpy rules)",
                                  [ResultsBroadcastableShape]>;
def Dyn_MetaShape : Dyn_ShapeRule<"meta", "PyTorch's, from its meta function at capture">;
def Dyn_Reduce : Dyn_ShapeRule<"reduction", "`dims` removed, or kept as size 1 with `keepdim`">;

//===----------------------------------------------------------------------===//
// Lowerings: how dyn-convert-graph-to-prim decomposes the op.
//===----------------------------------------------------------------------===//

class Dyn_Lowering<string lowerKind> {
  string kind = lowerKind;
  // The pattern template (kind "prim") or class (kind "composite").
  string pattern = "";
  // The prim op of a 1:1 lowering (its C++ class in ::dyn::prim).
  string primOp = "";
  // The GraphToPrim family whose populate function registers the pattern:
  // GEN_<FAMILY>_PATTERNS in the generated table.
  string family = "";
  // Whether the pattern lowers operands and results with dynamic (`?`) dims;
  // other ops need static shapes (docs/dynamic_shapes.md).
  bit dynamicShapes = 0;
  // The verifier of those dims: the elementwise rule, or none where the op's
  // own verifier checks them.
  list<Trait> dynamicShapeTraits = [Dyn_DynamicDimsStay];
  // A library call that reads its operands as strided views (a unit innermost
  // stride) and may write its results so: the fusion reads them in place
  // from other buffers (q, k and v sliced from one projection) instead of
  // copying each into a buffer of its own.
  bit stridedOperands = 0;
}

// One prim op on the result type (operands converted and broadcast first):
// registered as `pattern<graph::Op, prim::primOp>`.
class Dyn_ToPrim<string prim, string template, string fam> : Dyn_Lowering<"prim"> {
  let primOp = prim;
  let pattern = template;
  let family = fam;
}

// A composite: a C++ pattern class of its own in lib/Conversion/GraphToPrim.
class Dyn_Composite<string cls, string fam> : Dyn_Lowering<"composite"> {
  let pattern = cls;
  let family = fam;
}

// A library call (docs/library_calls.md): the op becomes prim.library_call of
// `callee` with the op's operands and results, its attributes in declaration
// order as the integer parameters (GraphToPrim/LibraryCalls.cpp encodes them).
class Dyn_LibraryCall<string callee, bit strided = 0> : Dyn_Lowering<"library"> {
  let pattern = callee;
  let family = "LibraryCalls";
  let stridedOperands = strided;
}

// A library call whose operands and results may have dynamic dims (a
// backward's gradients, sized at run time as the operands they are the
// gradients of: PrimToLoop's sizing of library calls).
class Dyn_DynamicLibraryCall<string callee, bit strided = 0> : Dyn_LibraryCall<callee, strided> {
  let dynamicShapes = 1;
  let dynamicShapeTraits = [];
}

// A composite that takes dynamic dims, checked by the op's own verifier.
class Dyn_DynamicComposite<string cls, string fam> : Dyn_Composite<cls, fam> {
  let dynamicShapes = 1;
  let dynamicShapeTraits = [];
}

// Registered by hand (ops with more than one lowering shape or that are not
// elementwise: constant, convert).
def Dyn_HandWritten : Dyn_Lowering<"hand-written">;

//===----------------------------------------------------------------------===//
// The registered op
//===----------------------------------------------------------------------===//

class Graph_RegisteredOp<string mnemonic, string opFamily, Dyn_TypeRule rule,
                         Dyn_ShapeRule shape, Dyn_Lowering lower, list<Trait> traits = []>
    : Graph_Op<mnemonic, !listconcat(traits, rule.traits, shape.traits),
               !if(lower.dynamicShapes, lower.dynamicShapeTraits, [Dyn_StaticShapes])> {
  string opName = mnemonic;
  string family = opFamily;
  Dyn_TypeRule typeRule = rule;
  Dyn_ShapeRule shapeRule = shape;
  Dyn_Lowering lowering = lower;
  list<string> torchNames = [];
  string signature = "";
  string eager = "";
  // Whether `eager` may return a view of an operand (or the operand itself):
  // the eager backend then copies what it returns.
  bit eagerView = 0;
}

#endif // DYN_GRAPH_OP_REGISTRY
