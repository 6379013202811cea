// dyn-tblgen -gen-aten-calls on a small registry: each library call's typed parameters decoded in the order
// GraphToPrim encodes its op's attributes, its `aten` expression as the call's body (or the hand-written
// body it names), one registration per callee, and the located errors of a malformed entry.
// RUN: dyn-tblgen -gen-aten-calls -I %dyn_src_root/include -I %mlir_include %s | FileCheck %s
// RUN: not dyn-tblgen -gen-aten-calls -DBAD_NAME -I %dyn_src_root/include -I %mlir_include %s 2>&1 | FileCheck %s --check-prefix=BAD-NAME
// RUN: not dyn-tblgen -gen-aten-calls -DBAD_SHARED -I %dyn_src_root/include -I %mlir_include %s 2>&1 | FileCheck %s --check-prefix=BAD-SHARED

include "dyn/Dialect/Graph/IR/GraphOpRegistry.td"

def Test_TopkOp : Graph_RegisteredOp<"topk", "library", Dyn_MetaRule, Dyn_MetaShape, Dyn_LibraryCall<"topk">> {
  let arguments = (ins Graph_Tensor:$input, I64Attr:$k, I64Attr:$dim, BoolAttr:$largest, F64Attr:$eps,
                       StrAttr:$name, DenseI64ArrayAttr:$sizes);
  let results = (outs Graph_Tensor:$values, Graph_Tensor:$indices);
  let eager = "torch.topk({input}, {k})";
  string aten = "at::topk($input, $k, $dim, $largest)";
}
// Two ops of one callee, their operand counts differing: one hand-written body.
def Test_AttnOp : Graph_RegisteredOp<"attn", "library", Dyn_MetaRule, Dyn_MetaShape, Dyn_LibraryCall<"attn_call">> {
  let arguments = (ins Graph_Tensor:$q, Graph_Tensor:$k, BoolAttr:$is_causal);
  let results = (outs Graph_Tensor:$result);
  let eager = "{q}";
}
def Test_MaskedAttnOp : Graph_RegisteredOp<"masked_attn", "library", Dyn_MetaRule, Dyn_MetaShape,
                                           Dyn_LibraryCall<"attn_call">> {
  let arguments = (ins Graph_Tensor:$q, Graph_Tensor:$k, Graph_Tensor:$mask, BoolAttr:$is_causal);
  let results = (outs Graph_Tensor:$result);
  let eager = "{q}";
}
// Not a library op: no glue.
def Test_SinhOp : Graph_RegisteredOp<"sinh", "unary", Dyn_FloatRule, Dyn_SameShape,
                                     Dyn_ToPrim<"SinhOp", "UnaryToPrim", "Elementwise">> {
  let arguments = (ins Graph_Tensor:$input);
  let results = (outs Dyn_FloatRule.result:$result);
  let eager = "torch.sinh({input})";
}

#ifdef BAD_NAME
def Test_BadOp : Graph_RegisteredOp<"bad", "library", Dyn_MetaRule, Dyn_MetaShape, Dyn_LibraryCall<"bad">> {
  let arguments = (ins Graph_Tensor:$input, I64Attr:$dim);
  let results = (outs Graph_Tensor:$result);
  let eager = "{input}";
  string aten = "at::bad($input, $axis)";
}
#endif

#ifdef BAD_SHARED
def Test_OtherTopkOp : Graph_RegisteredOp<"other_topk", "library", Dyn_MetaRule, Dyn_MetaShape,
                                          Dyn_LibraryCall<"topk">> {
  let arguments = (ins Graph_Tensor:$input, I64Attr:$k);
  let results = (outs Graph_Tensor:$values, Graph_Tensor:$indices);
  let eager = "{input}";
}
#endif

// CHECK:      #ifdef GEN_ATEN_PARAMS
// CHECK-NEXT: /// The parameters of library call `topk` (graph.topk).
// CHECK-NEXT: struct TopkParams {
// CHECK-NEXT:   int64_t k;
// CHECK-NEXT:   int64_t dim;
// CHECK-NEXT:   bool largest;
// CHECK-NEXT:   double eps;
// CHECK-NEXT:   std::string name;
// CHECK-NEXT:   std::vector<int64_t> sizes;
// CHECK-NEXT:   explicit TopkParams(Args &a) : k(a.i()), dim(a.i()), largest(a.b()), eps(a.f()), name(a.s()), sizes(a.ints()) {}
// CHECK-NEXT: };
// CHECK-NEXT: /// The parameters of library call `attn_call` (graph.attn, graph.masked_attn).
// CHECK-NEXT: struct AttnCallParams {
// CHECK-NEXT:   bool is_causal;
// CHECK-NEXT:   explicit AttnCallParams(Args &a) : is_causal(a.b()) {}
// CHECK-NEXT: };
// CHECK-NEXT: #undef GEN_ATEN_PARAMS
// CHECK:      #ifdef GEN_ATEN_CALLS
// CHECK-NEXT: defineCall<TopkParams>("topk", 1, [](Args &a, const TopkParams &p) {
// CHECK-NEXT:   store(a.call, at::topk(a.in[0], p.k, p.dim, p.largest));
// CHECK-NEXT: });
// CHECK-NEXT: defineCall<AttnCallParams>("attn_call", -1, &attnCall);
// CHECK-NEXT: #undef GEN_ATEN_CALLS
// CHECK-NOT:  sinh

// BAD-NAME: aten-calls.td:[[@LINE-42]]:5: error: dyn-tblgen: `aten` names $axis, which is no operand or attribute of graph.bad
// BAD-SHARED: error: dyn-tblgen: library call `topk` is also Test_TopkOp's, with other attributes
