//===- Passes.td - graph dialect transforms -----------------*- tablegen -*-===//
//
// Passes over the graph dialect itself (before dyn-convert-graph-to-prim):
// reverse-mode differentiation, the forward/backward split and the backward's
// specialization for zero cotangents. Each has a lit
// test named after its flag under test/Dialect/Graph.
//
//===----------------------------------------------------------------------===//
#ifndef DYN_GRAPH_TRANSFORMS_PASSES
#define DYN_GRAPH_TRANSFORMS_PASSES

include "mlir/Pass/PassBase.td"

def GraphAutodiffPass : Pass<"dyn-graph-autodiff", "mlir::func::FuncOp"> {
  let summary = "Reverse-mode differentiation of a graph function into a joint function";
  let description = [{
    Differentiates a function whose arguments marked `dyn.requires_grad`
    are the values to differentiate with respect to. A result is
    differentiable when it is a float tensor computed from such an argument
    through differentiable ops (not through `graph.detach`, integers,
    booleans or comparisons). The function becomes the joint function:

    ```mlir
    func.func @f(%x: tensor<4xf32> {dyn.requires_grad}, %w: tensor<4xf32>)
        -> tensor<4xf32>
    // becomes
    func.func @f(%x: tensor<4xf32> {dyn.requires_grad}, %w: tensor<4xf32>,
                 %ct0: tensor<4xf32> {dyn.cotangent})
        -> (tensor<4xf32>, tensor<4xf32>)
        attributes {dyn.joint = {differentiable = array<i64: 0>, outputs = 1 : i64}}
    ```

    It returns the original results, then one gradient per `dyn.requires_grad`
    argument (zeros where no differentiable result depends on it); the new
    arguments are the cotangents of the differentiable results, in order.
    Each op's gradients come from its rule in GraphDerivatives.td; an op
    that needs a gradient and has none is an error at that op.
  }];
}

def GraphPartitionPass : Pass<"dyn-graph-partition", "mlir::ModuleOp"> {
  let summary = "Split joint functions into a forward and a backward function by a min-cut";
  let description = [{
    Each joint function `@f` (made by dyn-graph-autodiff) becomes `@f_forward`
    (the arguments -> the results, then the saved values) and `@f_backward`
    (the saved values, then the cotangents -> the gradients). Which values
    are saved is a minimum cut over bytes, as AOTAutograd's partitioner
    chooses: pointwise ops, views, conversions and constants may be
    recomputed in the backward when that saves fewer bytes; GEMMs,
    convolutions, attention, reductions, library calls and random draws
    never are. A value that would be saved though the forward's kernels
    never write it (fused away) costs twice its bytes. Ops marked
    `dyn.recompute` (a torch.utils.checkpoint region, marked by
    dyn-graph-autodiff from its function's `dyn.recompute` positions) are
    always recomputed in the backward, whatever they are: the cut saves the
    region's inputs. A saved value that is an argument or a result of the forward
    is not returned again: `dyn.saved` on the backward lists, per saved
    value, the forward argument it is (k >= 0) or the forward result it is
    (-1 - j, j counting all the forward's results).

    `memory-budget` (default 1) trades recomputation for memory, as
    AOTAutograd's activation memory budget does: with b below 1 the backward
    may also recompute reductions, normalizations, gathers and pooling (then
    GEMMs, convolutions and attention too) until the bytes saved beyond the
    arguments are at most S_min + b (S_default - S_min), S_min being the
    cut's with everything recomputable but random draws, opaque calls and
    collectives. b = 0 saves the least; b = 1 is the default choice.
  }];
  let options = [
    Option<"memoryBudget", "memory-budget", "double", "1.0",
           "Fraction of the default cut's saved bytes to keep (0: recompute all it can)">,
  ];
}

def GraphZeroCotangentsPass : Pass<"dyn-graph-zero-cotangents", "mlir::func::FuncOp"> {
  let summary = "Specialize a backward function for outputs that get no cotangent";
  let description = [{
    A backward function made by dyn-graph-partition (`dyn.saved`,
    `dyn.differentiable`) takes one cotangent per differentiable output.
    Where autograd passes none (an LM's logits when only its loss is
    differentiated), that cotangent is zero: the listed outputs' cotangent
    arguments (`outputs`, indices of graph outputs) become splats of -0.0
    and leave the signature; views of them are splats too and an addition
    of one is its other operand (x + -0.0 == x exactly). `dyn.differentiable`
    then lists the outputs whose cotangents remain arguments;
    `dyn.zero_cotangents` the others. A cotangent with `?` dims stays an
    argument for its sizes alone (the splat is a `graph.expand` of a -0.0
    scalar to them; nothing reads its values): it is listed in
    `dyn.differentiable` and in `dyn.sized_cotangents`, and the caller passes
    any tensor of the output's shape.

    ```mlir
    func.func @f_backward(%s: tensor<4xf32>, %ct0: tensor<f32>, %ct1: tensor<4xf32>)
        attributes {dyn.differentiable = array<i64: 0, 1>, dyn.saved = array<i64: 0>}
    // with outputs=1 becomes
    func.func @f_backward(%s: tensor<4xf32>, %ct0: tensor<f32>)
        attributes {dyn.differentiable = array<i64: 0>, dyn.saved = array<i64: 0>,
                    dyn.zero_cotangents = array<i64: 1>}
    ```
  }];
  let options = [
    ListOption<"outputs", "outputs", "int64_t", "Graph outputs whose cotangent is zero">,
  ];
}

#endif // DYN_GRAPH_TRANSFORMS_PASSES
