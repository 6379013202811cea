//===- Constraints.td - element types and traits shared by dyn's dialects -*- tablegen -*-===//
//
// The verifiers admit only what the passes lower: the element types below are
// the ones every lowering (CPU and GPU) handles, and tensors have static
// shapes (buffers, kernel domains and launch geometry are computed from them).
//
//===----------------------------------------------------------------------===//
#ifndef DYN_DIALECT_COMMON_CONSTRAINTS
#define DYN_DIALECT_COMMON_CONSTRAINTS

include "mlir/IR/OpBase.td"

def Dyn_Float : AnyTypeOf<[F16, BF16, F32, F64], "floating-point">;
// Signless integers are signed (PyTorch's int8...int64); ui8 is torch.uint8.
def Dyn_Integer : AnyTypeOf<[I1, I8, I16, I32, I64, UI8], "integer">;
// Arithmetic that PyTorch does not define on booleans.
def Dyn_Numeric : AnyTypeOf<[F16, BF16, F32, F64, I8, I16, I32, I64, UI8], "non-boolean">;
def Dyn_Element : AnyTypeOf<[F16, BF16, F32, F64, I1, I8, I16, I32, I64, UI8],
                            "supported element type">;
// What loop buffers hold: arith takes signless integers only, so a ui8 tensor
// is stored as i8 and its kernels compute in i32 (PrimToLoop).
def Dyn_StoredElement : AnyTypeOf<[F16, BF16, F32, F64, I1, I8, I16, I32, I64],
                                  "stored element type">;

// Every tensor operand and result has a static shape.
def Dyn_StaticShapes : NativeOpTrait<"StaticShapes"> {
  let cppNamespace = "::dyn::OpTrait";
}

// A dynamic (`?`) dim of an operand is dynamic in the result too (right-aligned):
// a `?` is never broadcast, so its size is the result's.
def Dyn_DynamicDimsStay : NativeOpTrait<"DynamicDimsStay"> {
  let cppNamespace = "::dyn::OpTrait";
}

#endif // DYN_DIALECT_COMMON_CONSTRAINTS
