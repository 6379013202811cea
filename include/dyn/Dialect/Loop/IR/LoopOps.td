//===- LoopOps.td - loop dialect ops ------------------------*- tablegen -*-===//
#ifndef DYN_LOOP_OPS
#define DYN_LOOP_OPS

include "dyn/Dialect/Loop/IR/LoopBase.td"
include "dyn/Dialect/Loop/IR/LoopInterfaces.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/Interfaces/ControlFlowInterfaces.td"

def Loop_YieldOp : Loop_Op<"yield", [Pure, Terminator, ReturnLike,
    ParentOneOf<["KernelOp", "ForOp", "ReduceOp"]>]> {
  let summary = "ends a loop body; in loop.reduce, yields the value to combine";
  let arguments = (ins Variadic<AnyType>:$values);
  let assemblyFormat = "($values^ `:` type($values))? attr-dict";
  let builders = [OpBuilder<(ins), [{ build($_builder, $_state, ::mlir::ValueRange()); }]>];
}

// Iteration ops: a domain and one index block argument per dim. A domain dim
// is a constant or `?`, whose size is an `index` operand (`[%n, 8]`): one per
// `?`, in order (the sizes of dynamic dims are known only when it runs).
class Loop_IterOp<string mnemonic, list<Trait> traits = []>
    : Loop_Op<mnemonic, !listconcat(traits, [
        SingleBlockImplicitTerminator<"YieldOp">, RecursiveMemoryEffects])> {
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    ::mlir::Block &getBodyBlock() { return getBody().front(); }
    ::mlir::Block::BlockArgListType getIndices() { return getBodyBlock().getArguments(); }
    /// Whether every domain dim is a constant.
    bool hasStaticDomain() { return getDynamicSizes().empty(); }
    /// Each domain dim's size: a constant or the `index` operand of a `?` dim.
    ::llvm::SmallVector<::mlir::OpFoldResult> getMixedDomain() {
      return ::mlir::getMixedValues(getDomain(), getDynamicSizes(), getContext());
    }
  }];
}

def Loop_KernelOp : Loop_IterOp<"kernel"> {
  let summary = "a parallel kernel over an iteration domain";
  let description = [{
    Runs its body once for every point of `domain` (all points are
    independent). The entry block takes one `index` per domain dim. A kernel
    is the unit of parallelism and of launch: one OpenMP loop on the CPU,
    one GPU launch.

    ```mlir
    loop.kernel "add" [4, 8] {
    ^bb0(%i: index, %j: index):
      %a = loop.load %A[%i, %j] : memref<4x8xf32>
      ...
    }
    ```
  }];
  let arguments = (ins StrAttr:$name, DenseI64ArrayAttr:$domain, Variadic<Index>:$dynamic_sizes);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = "$name custom<DynamicIndexList>($dynamic_sizes, $domain) attr-dict-with-keyword $body";
  let builders = [OpBuilder<(ins "::mlir::StringAttr":$name, "::mlir::DenseI64ArrayAttr":$domain), [{
    build($_builder, $_state, name, domain, ::mlir::ValueRange());
  }]>];
}

def Loop_ForOp : Loop_IterOp<"for"> {
  let summary = "a serial loop nest inside a kernel";
  let description = "Runs its body for every point of `domain`, in row-major order.";
  let arguments = (ins DenseI64ArrayAttr:$domain, Variadic<Index>:$dynamic_sizes);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = "custom<DynamicIndexList>($dynamic_sizes, $domain) attr-dict-with-keyword $body";
  let builders = [OpBuilder<(ins "::mlir::DenseI64ArrayAttr":$domain), [{
    build($_builder, $_state, domain, ::mlir::ValueRange());
  }]>];
}

def Loop_ReduceOp : Loop_IterOp<"reduce"> {
  let summary = "a reduction over an inner domain";
  let description = [{
    Combines the value its body yields at every point of `domain` with
    `kind`, starting from the identity of `kind`; the order of combination is
    unspecified (floating-point sums may be reassociated).
  }];
  let arguments = (ins Loop_ReduceKind:$kind, DenseI64ArrayAttr:$domain, Variadic<Index>:$dynamic_sizes);
  let results = (outs Dyn_StoredElement:$result);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = "$kind custom<DynamicIndexList>($dynamic_sizes, $domain) attr-dict `:` type($result) $body";
  let builders = [OpBuilder<(ins "::mlir::Type":$result, "::dyn::loop::ReduceKind":$kind,
                                 "::mlir::DenseI64ArrayAttr":$domain), [{
    build($_builder, $_state, result, kind, domain, ::mlir::ValueRange());
  }]>];
}

def Loop_LoadOp : Loop_Op<"load", [TypesMatchWith<"result is the memref's element type",
    "memref", "result", "::llvm::cast<::mlir::MemRefType>($_self).getElementType()">]> {
  let summary = "load one element of a buffer";
  let arguments = (ins Arg<Loop_Buffer, "", [MemRead]>:$memref, Variadic<Index>:$indices);
  let results = (outs AnyType:$result);
  let assemblyFormat = "$memref `[` $indices `]` attr-dict `:` type($memref)";
  let builders = [OpBuilder<(ins "::mlir::Value":$memref, "::mlir::ValueRange":$indices), [{
    build($_builder, $_state, ::llvm::cast<::mlir::MemRefType>(memref.getType()).getElementType(),
          memref, indices);
  }]>];
  let hasVerifier = 1;
}

def Loop_StoreOp : Loop_Op<"store", [TypesMatchWith<"value is the memref's element type",
    "memref", "value", "::llvm::cast<::mlir::MemRefType>($_self).getElementType()">]> {
  let summary = "store one element of a buffer";
  let arguments = (ins AnyType:$value, Arg<Loop_Buffer, "", [MemWrite]>:$memref,
                       Variadic<Index>:$indices);
  let assemblyFormat = "$value `,` $memref `[` $indices `]` attr-dict `:` type($memref)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Library calls (LibraryCallOpInterface; docs/library_calls.md)
//===----------------------------------------------------------------------===//

class Loop_LibraryCallOp<string mnemonic, list<Trait> traits = []>
    : Loop_Op<mnemonic, !listconcat(traits, [DeclareOpInterfaceMethods<Loop_LibraryCallOpInterface>])> {
  let hasVerifier = 1;
}

def Loop_MatmulOp : Loop_LibraryCallOp<"matmul"> {
  let summary = "library call: out = lhs @ rhs, with either operand transposed (2-D, or batched 3-D)";
  let description = [{
    Operands are contiguous buffers of one element type: [M,K] x [K,N] ->
    [M,N], or the same with a leading batch dim on all three. Integer
    products (eager's CPU kernels take them) wrap as eager's do; the
    `unsigned_buffers` of a uint8 product are all of them.

    With `transpose_b`, the rhs buffer holds B transposed, [N,K] (or
    [batch,N,K]) row-major, and out = lhs @ rhs^T: a linear layer's weight
    is read in place instead of being copied into [K,N] first. With
    `transpose_a`, the lhs buffer holds A transposed, [K,M] (a weight
    gradient's x^T @ grad reads x in place).

    With an `addend` (broadcasting to out, right-aligned), out = addend +
    lhs @ rhs in one rounding: the library adds it in its epilogue, as
    eager's addmm does.

    On the CPU, f32 and f64 without an addend call dyn's runtime matmul;
    every other case, and the GPU, calls the registered `matmul` library
    implementation.
  }];
  let arguments = (ins Arg<AnyMemRef, "", [MemRead]>:$lhs, Arg<AnyMemRef, "", [MemRead]>:$rhs,
                       Arg<AnyMemRef, "", [MemWrite]>:$out, Arg<Optional<AnyMemRef>, "", [MemRead]>:$addend,
                       UnitAttr:$transpose_b, OptionalAttr<DenseI64ArrayAttr>:$unsigned_buffers,
                       UnitAttr:$transpose_a);
  let assemblyFormat = [{
    $lhs `,` $rhs `,` $out (`addend` $addend^)? (`transpose_a` $transpose_a^)? (`transpose_b` $transpose_b^)?
    attr-dict `:` type(operands)
  }];
}

def Loop_ConvolutionOp : Loop_LibraryCallOp<"convolution"> {
  let summary = "library call: out = convolution(input, weight) (+ bias)";
  let description = [{
    `prim.convolution` on buffers; shape rules as `graph.convolution`; the
    optional bias (`[C_out]`) is added by the library; `unsigned_buffers`
    of a uint8 convolution are all of them. With `channels_last`,
    input and out are `[N, *spatial, C]` buffers (torch's channels-last
    memory format).
  }];
  let arguments = (ins Arg<AnyMemRef, "", [MemRead]>:$input, Arg<AnyMemRef, "", [MemRead]>:$weight,
                       Arg<AnyMemRef, "", [MemWrite]>:$out, Arg<Optional<AnyMemRef>, "", [MemRead]>:$bias,
                       DenseI64ArrayAttr:$stride, DenseI64ArrayAttr:$padding,
                       DenseI64ArrayAttr:$dilation, I64Attr:$groups, UnitAttr:$transposed,
                       OptionalAttr<DenseI64ArrayAttr>:$output_padding, UnitAttr:$channels_last,
                       OptionalAttr<DenseI64ArrayAttr>:$unsigned_buffers);
  let assemblyFormat = [{
    $input `,` $weight `,` $out (`bias` $bias^)? `stride` $stride `padding` $padding
    `dilation` $dilation `groups` $groups (`transposed` $transposed^)?
    (`output_padding` $output_padding^)? (`channels_last` $channels_last^)? attr-dict `:` type(operands)
  }];
}

def Loop_AttentionOp : Loop_LibraryCallOp<"attention"> {
  let summary = "library call: out = softmax(q k^T * scale + mask) v";
  let description = [{
    `prim.attention` on buffers: query, key, value, the output, and the
    optional mask last. Unlike the other library calls it takes strided
    views (static strides and offset): q, k and v read in place from a
    QKV projection's buffer, a mask broadcast with zero strides, the
    output written into the buffer of the transpose that follows it.
  }];
  let arguments = (ins Arg<AnyMemRef, "", [MemRead]>:$query, Arg<AnyMemRef, "", [MemRead]>:$key,
                       Arg<AnyMemRef, "", [MemRead]>:$value, Arg<AnyMemRef, "", [MemWrite]>:$out,
                       Arg<Optional<AnyMemRef>, "", [MemRead]>:$mask,
                       UnitAttr:$is_causal, F64Attr:$scale);
  let assemblyFormat = [{
    $query `,` $key `,` $value `,` $out (`mask` $mask^)? (`causal` $is_causal^)? `scale` $scale
    attr-dict `:` type(operands)
  }];
}

def Loop_LibraryCallOp : Loop_LibraryCallOp<"library_call", [AttrSizedOperandSegments]> {
  let summary = "library call by name: inputs read, every output written";
  let description = [{
    `prim.library_call` on buffers: the implementation registered under
    `callee` reads the `ins` buffers and writes every `outs` buffer (a sort
    writes its values and its indices), given the integer `params`
    (docs/library_calls.md lists the names and their parameters). Buffers
    are contiguous, or, with `strided`, views with static strides whose
    innermost stride is 1; element types are the implementation's concern (it
    raises at run time on one it does not handle). `unsigned_buffers` lists
    the (i8) buffers that hold uint8, counting inputs then outputs.

    ```mlir
    loop.library_call "sort" ins(%x : memref<4x8xf32>)
        outs(%v, %i : memref<4x8xf32>, memref<4x8xi64>) params [1, 0, 1]
    ```
  }];
  let arguments = (ins StrAttr:$callee, Arg<Variadic<AnyMemRef>, "", [MemRead]>:$ins,
                       Arg<Variadic<AnyMemRef>, "", [MemWrite]>:$outs,
                       DenseI64ArrayAttr:$params, OptionalAttr<DenseI64ArrayAttr>:$unsigned_buffers,
                       UnitAttr:$strided);
  let assemblyFormat = [{
    $callee (`ins` `(` $ins^ `:` type($ins) `)`)? `outs` `(` $outs `:` type($outs) `)`
    `params` $params attr-dict
  }];
}

#endif // DYN_LOOP_OPS
