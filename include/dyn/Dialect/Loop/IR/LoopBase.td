//===- LoopBase.td - loop dialect definition ----------------*- tablegen -*-===//
#ifndef DYN_LOOP_BASE
#define DYN_LOOP_BASE

include "mlir/IR/OpBase.td"
include "mlir/IR/EnumAttr.td"
include "dyn/Dialect/Common/Constraints.td"

def Loop_Dialect : Dialect {
  let name = "loop";
  let cppNamespace = "::dyn::loop";
  let summary = "Kernels over iteration domains, on buffers";
  let description = [{
    The loop dialect is where fusion has happened and buffers exist. A
    `loop.kernel` is one pass over a parallel iteration domain; its body loads
    from and stores to memrefs, computes with upstream `arith` and `math`
    scalar ops, and runs serial inner loops (`loop.for`) and reductions
    (`loop.reduce`) per point. One kernel is one parallel loop on the CPU
    (OpenMP) and one launch on the GPU. Library calls are explicit ops
    (`loop.matmul`).
  }];
}

def Loop_ReduceKind : I32EnumAttr<"ReduceKind", "how loop.reduce combines values", [
    I32EnumAttrCase<"add", 0>, I32EnumAttrCase<"mul", 1>,
    I32EnumAttrCase<"max", 2>, I32EnumAttrCase<"min", 3>]> {
  let cppNamespace = "::dyn::loop";
}

// Buffers hold the element types every lowering handles.
def Loop_Buffer : MemRefOf<[Dyn_StoredElement]>;

class Loop_Op<string mnemonic, list<Trait> traits = []>
    : Op<Loop_Dialect, mnemonic, traits>;

#endif // DYN_LOOP_BASE
