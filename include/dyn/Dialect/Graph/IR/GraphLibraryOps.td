//===- GraphLibraryOps.td - ops computed by a library call ---*- tablegen -*-===//
//
// Selection (sort, topk, kthvalue, median, mode, quantile) and linear algebra
// (cholesky, inv, solve, det, eigh, svd, qr, lu, ldl, ...), included by
// GraphOps.td. Each is one graph op whose lowering is a library call
// (Dyn_LibraryCall): dyn-convert-graph-to-prim makes it `prim.library_call`
// of its callee with its attributes, in declaration order, as the integer
// parameters (a bool as 0/1, an f64 as its bits, a string as its length then
// its characters); the fusion pass gives every result a buffer and the call
// writes them all. The torch runtime registers ATen's kernels for the callees
// (python/src/aten_calls.cpp, its glue generated from each op's `aten`), so
// results are eager's to the bit.
// docs/library_calls.md says why these ops are calls and not decompositions.
//
// Result types and shapes are PyTorch's (its meta function, at capture); real
// floating-point linalg only (complex results are not graph types).
//
//===----------------------------------------------------------------------===//
#ifndef DYN_GRAPH_LIBRARY_OPS
#define DYN_GRAPH_LIBRARY_OPS

// `strided`: the call takes strided views of its operands and results
// (Dyn_Lowering's stridedOperands).
// `aten`: the call as one C++ expression over ATen (`$operand` the operand's
// tensor, `$attr` the attribute's value), whose result (a tensor or a tuple of
// them) is stored into the op's results; dyn-tblgen -gen-aten-calls generates
// the torch runtime's glue from it. Without one, python/src/aten_calls.cpp
// defines the callee's body by hand (see AtenCalls.cpp in tools/dyn-tblgen).
class Graph_LibraryOp<string mnemonic, string callee, string desc, bit strided = 0>
    : Graph_RegisteredOp<mnemonic, "library", Dyn_MetaRule, Dyn_MetaShape,
                         Dyn_LibraryCall<callee, strided>> {
  string aten = "";
  let summary = desc # " (library call `" # callee # "`)";
  let description = "Computed by the library call `" # callee # "` with the op's attributes as "
                    "its parameters, in declaration order (docs/library_calls.md).";
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
}

// A library op whose operands may have dynamic (`?`) dims, its results sized
// at run time by prim::libraryResultDim: the backward ops whose result k is the
// gradient of operand k + 1 (its type and runtime sizes), attention with its
// log-sum-exp (the query's rows, the value's columns), an embedding's weight gradient (static).
class Graph_DynamicLibraryOp<string mnemonic, string callee, string desc, bit strided = 0>
    : Graph_RegisteredOp<mnemonic, "library", Dyn_MetaRule, Dyn_MetaShape,
                         Dyn_DynamicLibraryCall<callee, strided>> {
  string aten = "";
  let summary = desc # " (library call `" # callee # "`)";
  let description = "Computed by the library call `" # callee # "` with the op's attributes as "
                    "its parameters, in declaration order (docs/library_calls.md).";
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
}

def Graph_IndexTensor : RankedTensorOf<[I64]>;
def Graph_PivotTensor : RankedTensorOf<[I32]>;

//===----------------------------------------------------------------------===//
// Selection: values and their indices (torch.return_types at capture)
//===----------------------------------------------------------------------===//

def Graph_SortOp : Graph_LibraryOp<"sort", "sort", "values sorted along `dim` and their indices"> {
  let arguments = (ins Graph_Tensor:$input, I64Attr:$dim, BoolAttr:$descending, BoolAttr:$stable);
  let results = (outs Graph_Tensor:$values, Graph_IndexTensor:$indices);
  let aten = "at::sort($input, std::optional<bool>($stable), $dim, $descending)";
  let torchNames = ["torch.sort", "Tensor.sort"];
  let signature = "input, dim=-1, descending=False, stable=False";
  let eager = "torch.sort({input}, dim={dim}, descending={descending}, stable={stable})";
}
def Graph_ArgsortOp : Graph_LibraryOp<"argsort", "argsort", "the indices that sort `dim`"> {
  let arguments = (ins Graph_Tensor:$input, I64Attr:$dim, BoolAttr:$descending, BoolAttr:$stable);
  let results = (outs Graph_IndexTensor:$indices);
  let aten = "at::argsort($input, $stable, $dim, $descending)";
  let torchNames = ["torch.argsort", "Tensor.argsort"];
  let signature = "input, dim=-1, descending=False, stable=False";
  let eager = "torch.argsort({input}, dim={dim}, descending={descending}, stable={stable})";
}
def Graph_MsortOp : Graph_LibraryOp<"msort", "msort", "values sorted along dim 0"> {
  let arguments = (ins Graph_Tensor:$input);
  let results = (outs Graph_Tensor:$values);
  let aten = "at::msort($input)";
  let torchNames = ["torch.msort", "Tensor.msort"];
  let signature = "input";
  let eager = "torch.msort({input})";
}
def Graph_TopkOp : Graph_LibraryOp<"topk", "topk", "the `k` largest (smallest) values along `dim` and their indices"> {
  let arguments = (ins Graph_Tensor:$input, I64Attr:$k, I64Attr:$dim, BoolAttr:$largest, BoolAttr:$sorted);
  let results = (outs Graph_Tensor:$values, Graph_IndexTensor:$indices);
  let aten = "at::topk($input, $k, $dim, $largest, $sorted)";
  let torchNames = ["torch.topk", "Tensor.topk"];
  let signature = "input, k, dim=-1, largest=True, sorted=True";
  let eager = "torch.topk({input}, {k}, dim={dim}, largest={largest}, sorted={sorted})";
}
def Graph_KthvalueOp : Graph_LibraryOp<"kthvalue", "kthvalue", "the `k`-th smallest value along `dim` and its index"> {
  let arguments = (ins Graph_Tensor:$input, I64Attr:$k, I64Attr:$dim, BoolAttr:$keepdim);
  let results = (outs Graph_Tensor:$values, Graph_IndexTensor:$indices);
  let aten = "at::kthvalue($input, $k, $dim, $keepdim)";
  let torchNames = ["torch.kthvalue", "Tensor.kthvalue"];
  let signature = "input, k, dim=-1, keepdim=False";
  let eager = "torch.kthvalue({input}, {k}, dim={dim}, keepdim={keepdim})";
}
def Graph_ModeOp : Graph_LibraryOp<"mode", "mode", "the most frequent value along `dim` and an index of it"> {
  let arguments = (ins Graph_Tensor:$input, I64Attr:$dim, BoolAttr:$keepdim);
  let results = (outs Graph_Tensor:$values, Graph_IndexTensor:$indices);
  let aten = "at::mode($input, $dim, $keepdim)";
  let torchNames = ["torch.mode", "Tensor.mode"];
  let signature = "input, dim=-1, keepdim=False";
  let eager = "torch.mode({input}, dim={dim}, keepdim={keepdim})";
}
// torch.median/nanmedian without a dim (the lower median of every element)
// and with one (values and indices): one op each, one capture handler.
def Graph_MedianOp : Graph_LibraryOp<"median", "median", "the lower median of all elements"> {
  let arguments = (ins Graph_Tensor:$input);
  let results = (outs Graph_Tensor:$result);
  let aten = "at::median($input)";
  let torchNames = ["torch.median", "Tensor.median"];
  let eager = "torch.median({input})";
}
def Graph_MedianDimOp : Graph_LibraryOp<"median_dim", "median_dim", "the lower median along `dim` and its index"> {
  let arguments = (ins Graph_Tensor:$input, I64Attr:$dim, BoolAttr:$keepdim);
  let results = (outs Graph_Tensor:$values, Graph_IndexTensor:$indices);
  let aten = "at::median($input, $dim, $keepdim)";
  let torchNames = ["torch.median", "Tensor.median"];
  let eager = "torch.median({input}, {dim}, keepdim={keepdim})";
}
def Graph_NanmedianOp : Graph_LibraryOp<"nanmedian", "nanmedian", "the lower median of all elements, NaNs ignored"> {
  let arguments = (ins Graph_Tensor:$input);
  let results = (outs Graph_Tensor:$result);
  let aten = "at::nanmedian($input)";
  let torchNames = ["torch.nanmedian", "Tensor.nanmedian"];
  let eager = "torch.nanmedian({input})";
}
def Graph_NanmedianDimOp : Graph_LibraryOp<"nanmedian_dim", "nanmedian_dim", "the lower median along `dim`, NaNs ignored, and its index"> {
  let arguments = (ins Graph_Tensor:$input, I64Attr:$dim, BoolAttr:$keepdim);
  let results = (outs Graph_Tensor:$values, Graph_IndexTensor:$indices);
  let aten = "at::nanmedian($input, $dim, $keepdim)";
  let torchNames = ["torch.nanmedian", "Tensor.nanmedian"];
  let eager = "torch.nanmedian({input}, {dim}, keepdim={keepdim})";
}
// q is a tensor operand (a number q is captured as a constant of the input's
// type, as ATen makes it); without `has_dim` the quantiles of all elements.
def Graph_QuantileOp : Graph_LibraryOp<"quantile", "quantile", "the `q`-th quantiles along `dim`"> {
  let arguments = (ins Graph_FloatTensor:$input, Graph_FloatTensor:$q, BoolAttr:$has_dim, I64Attr:$dim,
                       BoolAttr:$keepdim, StrAttr:$interpolation, BoolAttr:$ignore_nan);
  let results = (outs Graph_FloatTensor:$result);
  let aten = "$ignore_nan "
              "? at::nanquantile($input, $q, given($has_dim, $dim), $keepdim, $interpolation) "
              ": at::quantile($input, $q, given($has_dim, $dim), $keepdim, $interpolation)";
  // torch.nanquantile is the same op with `ignore_nan` (its handler is its own).
  let torchNames = ["torch.quantile", "Tensor.quantile"];
  let eager = "(torch.nanquantile if {ignore_nan} else torch.quantile)({input}, {q}, "
              "{dim} if {has_dim} else None, keepdim={keepdim}, interpolation={interpolation})";
}

// Linear algebra (real f32/f64; LAPACK on the CPU, cuSOLVER/MAGMA on CUDA)
include "dyn/Dialect/Graph/IR/GraphLinalgOps.td"

//===----------------------------------------------------------------------===//
// Fourier transforms with real results (pocketfft/MKL on the CPU, cuFFT on CUDA)
//===----------------------------------------------------------------------===//

// torch.fft's irfft, hfft and their 2-d and n-d forms (`kind`), of a real
// input (eager reads it as complex with zero imaginary parts). The 1-d forms'
// `n` and `dim` are one-element `s` and `dim`; `has_s`/`has_dim` false is
// None; `norm` "" is None. Transforms with complex results are not graph ops
// (no complex element type).
def Graph_FftRealOp : Graph_LibraryOp<"fft_real", "fft_real", "a torch.fft transform with a real result"> {
  let arguments = (ins Graph_FloatTensor:$input, StrAttr:$kind, BoolAttr:$has_s, DenseI64ArrayAttr:$s,
                       BoolAttr:$has_dim, DenseI64ArrayAttr:$dim, StrAttr:$norm);
  let results = (outs Graph_FloatTensor:$result);
  let torchNames = ["torch.fft.irfft", "torch.fft.hfft", "torch.fft.irfft2", "torch.fft.hfft2",
                    "torch.fft.irfftn", "torch.fft.hfftn"];
  let eager = "_rt.fft_real({input}, {kind}, {has_s}, {s}, {has_dim}, {dim}, {norm})";
}

//===----------------------------------------------------------------------===//
// Pointwise functions computed by a loop over a value (ATen's kernels)
//===----------------------------------------------------------------------===//

// torch.special's orthogonal polynomials P_n(x): eager runs the three-term
// recurrence n times (or a closed form for some n and x); prim has no loops,
// so the op is ATen's kernel, with eager's branches and rounding.
class Graph_PolynomialOp<string mnemonic>
    : Graph_LibraryOp<mnemonic, mnemonic, "torch.special." # mnemonic # "(x, n)"> {
  let aten = "at::special_" # mnemonic # "($x, $n)";
  let arguments = (ins Graph_Tensor:$x, Graph_Tensor:$n);
  let results = (outs Graph_Tensor:$result);
  let torchNames = ["torch.special." # mnemonic];
  let signature = "x, n";
  let eager = "torch.special." # mnemonic # "({x}, {n})";
}
def Graph_ChebyshevTOp : Graph_PolynomialOp<"chebyshev_polynomial_t">;
def Graph_ChebyshevUOp : Graph_PolynomialOp<"chebyshev_polynomial_u">;
def Graph_ChebyshevVOp : Graph_PolynomialOp<"chebyshev_polynomial_v">;
def Graph_ChebyshevWOp : Graph_PolynomialOp<"chebyshev_polynomial_w">;
def Graph_ShiftedChebyshevTOp : Graph_PolynomialOp<"shifted_chebyshev_polynomial_t">;
def Graph_ShiftedChebyshevUOp : Graph_PolynomialOp<"shifted_chebyshev_polynomial_u">;
def Graph_ShiftedChebyshevVOp : Graph_PolynomialOp<"shifted_chebyshev_polynomial_v">;
def Graph_ShiftedChebyshevWOp : Graph_PolynomialOp<"shifted_chebyshev_polynomial_w">;
def Graph_HermiteHOp : Graph_PolynomialOp<"hermite_polynomial_h">;
def Graph_HermiteHeOp : Graph_PolynomialOp<"hermite_polynomial_he">;
def Graph_LaguerreLOp : Graph_PolynomialOp<"laguerre_polynomial_l">;
def Graph_LegendrePOp : Graph_PolynomialOp<"legendre_polynomial_p">;

// The regularized incomplete gamma functions: Cephes' series and continued
// fractions run until they converge (a data-dependent loop).
def Graph_IgammaOp : Graph_LibraryOp<"igamma", "igamma", "regularized lower incomplete gamma P(input, other)"> {
  let arguments = (ins Graph_FloatTensor:$input, Graph_FloatTensor:$other);
  let results = (outs Graph_FloatTensor:$result);
  let aten = "at::igamma($input, $other)";
  let torchNames = ["torch.igamma", "Tensor.igamma", "torch.special.gammainc"];
  let signature = "input, other";
  let eager = "torch.igamma({input}, {other})";
}
def Graph_IgammacOp : Graph_LibraryOp<"igammac", "igammac", "regularized upper incomplete gamma Q(input, other)"> {
  let arguments = (ins Graph_FloatTensor:$input, Graph_FloatTensor:$other);
  let results = (outs Graph_FloatTensor:$result);
  let aten = "at::igammac($input, $other)";
  let torchNames = ["torch.igammac", "Tensor.igammac", "torch.special.gammaincc"];
  let signature = "input, other";
  let eager = "torch.igammac({input}, {other})";
}

//===----------------------------------------------------------------------===//
// Grouped GEMM (a mixture of experts' expert layers)
//===----------------------------------------------------------------------===//

def Graph_OffsetsTensor : RankedTensorOf<[I32, I64]>;

// Rows offs[g-1] <= s < offs[g] of `input` (offs[-1] = 0) times weight[g]; rows
// past the last offset are zero. The offsets are data (counts of the tokens
// routed to each expert), the shapes are not: one library call, which reads
// the offsets (on CUDA: one copy to the host) and calls a GEMM per group, as
// transformers' grouped_mm_fallback and torch._grouped_mm's 2-d x 3-d form.
def Graph_GroupedMmOp : Graph_LibraryOp<"grouped_mm", "grouped_mm", "rows of `input` by groups, each group times its matrix of `weight`"> {
  let arguments = (ins Graph_FloatTensor:$input, Graph_FloatTensor:$weight, Graph_OffsetsTensor:$offs);
  let results = (outs Graph_FloatTensor:$result);
  let torchNames = ["torch._grouped_mm", "torch.nn.functional.grouped_mm",
                    "torch.ops.transformers.grouped_mm_fallback"];
  let eager = "_rt.grouped_mm({input}, {weight}, {offs})";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Recurrent layers (nn.LSTM, nn.GRU, nn.RNN): one layer, one direction each
//===----------------------------------------------------------------------===//

// A recurrence over time is a loop the prim dialect has no form for: one
// library call per layer and direction (ATen's lstm/gru/rnn_* with one layer;
// cuDNN on CUDA), capture chaining the layers and running a reverse direction
// on the input flipped in time. h0/c0 are [1, B, H]; biases always given
// (zeros where the module has none: the same sums).
class Graph_RecurrentOp<string mnemonic, string desc> : Graph_LibraryOp<mnemonic, mnemonic, desc> {
  let hasVerifier = 1;
}
def Graph_LstmOp : Graph_RecurrentOp<"lstm", "one LSTM layer over time: output, h_n, c_n"> {
  let arguments = (ins Graph_FloatTensor:$input, Graph_FloatTensor:$h0, Graph_FloatTensor:$c0,
                       Graph_FloatTensor:$w_ih, Graph_FloatTensor:$w_hh, Graph_FloatTensor:$b_ih,
                       Graph_FloatTensor:$b_hh, BoolAttr:$batch_first);
  let results = (outs Graph_FloatTensor:$output, Graph_FloatTensor:$h_n, Graph_FloatTensor:$c_n);
  let eager = "torch.lstm({input}, ({h0}, {c0}), [{w_ih}, {w_hh}, {b_ih}, {b_hh}], True, 1, 0.0, False, False, "
              "{batch_first})";
}
def Graph_GruOp : Graph_RecurrentOp<"gru", "one GRU layer over time: output, h_n"> {
  let arguments = (ins Graph_FloatTensor:$input, Graph_FloatTensor:$h0, Graph_FloatTensor:$w_ih,
                       Graph_FloatTensor:$w_hh, Graph_FloatTensor:$b_ih, Graph_FloatTensor:$b_hh,
                       BoolAttr:$batch_first);
  let results = (outs Graph_FloatTensor:$output, Graph_FloatTensor:$h_n);
  let eager = "torch.gru({input}, {h0}, [{w_ih}, {w_hh}, {b_ih}, {b_hh}], True, 1, 0.0, False, False, {batch_first})";
}
def Graph_RnnOp : Graph_RecurrentOp<"rnn", "one Elman RNN layer (tanh, or ReLU with `relu`) over time: output, h_n"> {
  let arguments = (ins Graph_FloatTensor:$input, Graph_FloatTensor:$h0, Graph_FloatTensor:$w_ih,
                       Graph_FloatTensor:$w_hh, Graph_FloatTensor:$b_ih, Graph_FloatTensor:$b_hh,
                       BoolAttr:$relu, BoolAttr:$batch_first);
  let results = (outs Graph_FloatTensor:$output, Graph_FloatTensor:$h_n);
  let eager = "(torch.rnn_relu if {relu} else torch.rnn_tanh)({input}, {h0}, [{w_ih}, {w_hh}, {b_ih}, {b_hh}], True, "
              "1, 0.0, False, False, {batch_first})";
}

//===----------------------------------------------------------------------===//
// Segments and histograms (shapes from the operands' shapes, values counted)
//===----------------------------------------------------------------------===//

// torch.segment_reduce along `axis` over segments given by `lengths` (or by
// `offsets` with `use_offsets`); `has_initial` false is None.
def Graph_SegmentReduceOp : Graph_LibraryOp<"segment_reduce", "segment_reduce", "reduction of consecutive segments"> {
  let arguments = (ins Graph_FloatTensor:$data, Graph_IndexTensor:$segments, StrAttr:$reduce,
                       BoolAttr:$use_offsets, I64Attr:$axis, BoolAttr:$unsafe, BoolAttr:$has_initial,
                       F64Attr:$initial);
  let results = (outs Graph_FloatTensor:$result);
  let torchNames = ["torch.segment_reduce"];
  let eager = "_rt.segment_reduce({data}, {segments}, {reduce}, {use_offsets}, {axis}, {unsafe}, {has_initial}, "
              "{initial})";
}
// torch.histogram with `bins` bins over [lo, hi] (`has_range` false: the
// input's min and max).
def Graph_HistogramOp : Graph_LibraryOp<"histogram", "histogram", "histogram with a bin count, and its bin edges"> {
  let arguments = (ins Graph_FloatTensor:$input, I64Attr:$bins, BoolAttr:$has_range, F64Attr:$lo, F64Attr:$hi,
                       BoolAttr:$density);
  let results = (outs Graph_FloatTensor:$hist, Graph_FloatTensor:$bin_edges);
  let torchNames = ["torch.histogram", "Tensor.histogram"];
  let eager = "torch.histogram({input}, {bins}, range=({lo}, {hi}) if {has_range} else None, density={density})";
}
def Graph_HistogramEdgesOp : Graph_LibraryOp<"histogram_edges", "histogram_edges", "histogram over given bin edges"> {
  let arguments = (ins Graph_FloatTensor:$input, Graph_FloatTensor:$bins, BoolAttr:$density);
  let results = (outs Graph_FloatTensor:$hist, Graph_FloatTensor:$bin_edges);
  let aten = "at::histogram($input, $bins, /*weight=*/std::nullopt, $density)";
  let torchNames = ["torch.histogram", "Tensor.histogram"];
  let eager = "torch.histogram({input}, {bins}, density={density})";
}

//===----------------------------------------------------------------------===//
// More LAPACK: Householder QR in LAPACK's form, and its application
//===----------------------------------------------------------------------===//

def Graph_GeqrfOp : Graph_LibraryOp<"geqrf", "geqrf", "QR factorization in LAPACK's compact form (torch.geqrf)"> {
  let arguments = (ins Graph_FloatTensor:$input);
  let results = (outs Graph_FloatTensor:$a, Graph_FloatTensor:$tau);
  let aten = "at::geqrf($input)";
  let torchNames = ["torch.geqrf", "Tensor.geqrf"];
  let eager = "torch.geqrf({input})";
}
def Graph_OrmqrOp : Graph_LibraryOp<"ormqr", "ormqr", "product with Q of a compact QR factorization (torch.ormqr)"> {
  let arguments = (ins Graph_FloatTensor:$input, Graph_FloatTensor:$input2, Graph_FloatTensor:$input3,
                       BoolAttr:$left, BoolAttr:$transpose);
  let results = (outs Graph_FloatTensor:$result);
  let aten = "at::ormqr($input, $input2, $input3, $left, $transpose)";
  let torchNames = ["torch.ormqr", "Tensor.ormqr"];
  let signature = "input, input2, input3, left=True, transpose=False";
  let eager = "torch.ormqr({input}, {input2}, {input3}, left={left}, transpose={transpose})";
}
// torch.lu's implementation: LU, pivots and LAPACK's info.
def Graph_LuWithInfoOp : Graph_LibraryOp<"lu_with_info", "lu_with_info", "LU factorization, pivots and info (torch.lu)"> {
  let arguments = (ins Graph_FloatTensor:$input, BoolAttr:$pivot, BoolAttr:$check_errors);
  let results = (outs Graph_FloatTensor:$LU, Graph_PivotTensor:$pivots, Graph_PivotTensor:$info);
  let aten = "at::_lu_with_info($input, $pivot, $check_errors)";
  let torchNames = ["torch._lu_with_info"];
  let signature = "input, pivot=True, check_errors=True";
  let eager = "torch._lu_with_info({input}, pivot={pivot}, check_errors={check_errors})";
}

//===----------------------------------------------------------------------===//
// Random numbers as eager PyTorch draws them from a seed
//===----------------------------------------------------------------------===//

// What torch.testing's wrapper_set_seed asks of a random op: eager's numbers
// from torch's default generator of the op's device seeded with `seed`, and
// that generator's state restored after the draw (docs/random.md). `kind`
// names the draw: the fills uniform, normal, exponential, integers, cauchy,
// geometric, log_normal (parameters `a`, `b`; `input` gives only the result's
// shape and dtype), bernoulli, dropout(_), feature_dropout(_) (`n` the
// feature dims), alpha_dropout, feature_alpha_dropout (`a` = p), rrelu (`a`,
// `b` the bounds), multinomial (`n` draws, `b` != 0 with replacement).
def Graph_SeededRandomOp : Graph_LibraryOp<"seeded_random", "seeded_random", "eager's random numbers from a seed"> {
  let arguments = (ins Graph_Tensor:$input, StrAttr:$kind, I64Attr:$seed, F64Attr:$a, F64Attr:$b, I64Attr:$n);
  let results = (outs Graph_Tensor:$result);
  let aten = "withSeed($input.device(), $seed, [&] { return seededDraw($kind, $a, $b, $n, $input); })";
  let eager = "_rt.seeded_random({kind}, {seed}, {a}, {b}, {n}, {input})";
}
// torch.normal(mean, std) of two tensors, drawn as seeded_random draws.
def Graph_SeededNormalOp : Graph_LibraryOp<"seeded_normal", "seeded_normal", "eager's normal(mean, std) from a seed"> {
  let arguments = (ins Graph_FloatTensor:$mean, Graph_FloatTensor:$std, I64Attr:$seed);
  let results = (outs Graph_FloatTensor:$result);
  let aten = "withSeed($mean.device(), $seed, [&] { return at::normal($mean, $std); })";
  let eager = "_rt.seeded_random('normal_tensors', {seed}, 0.0, 0.0, 0, {mean}, {std})";
}

// scaled_dot_product_attention with dropout inside wrapper_set_seed (no mask).
def Graph_SeededAttentionOp : Graph_LibraryOp<"seeded_attention", "seeded_attention", "eager's attention with dropout from a seed"> {
  let arguments = (ins Graph_FloatTensor:$query, Graph_FloatTensor:$key, Graph_FloatTensor:$value, F64Attr:$dropout_p,
                       BoolAttr:$is_causal, BoolAttr:$has_scale, F64Attr:$scale, BoolAttr:$enable_gqa, I64Attr:$seed);
  let results = (outs Graph_FloatTensor:$result);
  let aten = "withSeed($query.device(), $seed, [&] { return at::scaled_dot_product_attention($query, $key, $value, "
              "std::nullopt, $dropout_p, $is_causal, given($has_scale, $scale), $enable_gqa); })";
  let eager = "_rt.seeded_attention({query}, {key}, {value}, {dropout_p}, {is_causal}, {has_scale}, {scale}, "
              "{enable_gqa}, {seed})";
}

//===----------------------------------------------------------------------===//
// Pooling and resampling that eager computes with data-dependent windows
//===----------------------------------------------------------------------===//

// Fractional max pooling (2-d or 3-d by the length of `kernel_size`) with
// its window offsets given by `samples` (F.fractional_max_pool draws them).
def Graph_FractionalMaxPoolOp : Graph_LibraryOp<"fractional_max_pool", "fractional_max_pool", "fractional max pooling and its indices"> {
  let arguments = (ins Graph_FloatTensor:$input, Graph_FloatTensor:$samples, DenseI64ArrayAttr:$kernel_size,
                       DenseI64ArrayAttr:$output_size);
  let results = (outs Graph_FloatTensor:$output, Graph_IndexTensor:$indices);
  let aten = "$kernel_size.size() == 2 "
              "? at::fractional_max_pool2d($input, $kernel_size, $output_size, $samples) "
              ": at::fractional_max_pool3d($input, $kernel_size, $output_size, $samples)";
  let eager = "(torch._C._nn.fractional_max_pool2d if len({kernel_size}) == 2 else torch._C._nn.fractional_max_pool3d)("
              "{input}, {kernel_size}, {output_size}, {samples})";
}
// The gradient of max_pool2d with indices (aten.max_pool2d_with_indices_backward); its result has the
// input's sizes (`?` ones too).
def Graph_MaxPool2dBackwardOp : Graph_DynamicLibraryOp<"max_pool2d_backward", "max_pool2d_backward", "max_pool2d's input gradient from its indices"> {
  let arguments = (ins Graph_FloatTensor:$grad_output, Graph_FloatTensor:$input, Graph_IndexTensor:$indices,
                       DenseI64ArrayAttr:$kernel_size, DenseI64ArrayAttr:$stride, DenseI64ArrayAttr:$padding,
                       DenseI64ArrayAttr:$dilation, BoolAttr:$ceil_mode);
  let results = (outs Graph_FloatTensor:$grad_input);
  let eager = "torch.ops.aten.max_pool2d_with_indices_backward.default({grad_output}, {input}, {kernel_size}, "
              "{stride}, {padding}, {dilation}, {ceil_mode}, {indices})";
}
// The input and weight gradients of graph.convolution (aten.convolution_backward; the bias gradient is
// a sum dyn fuses): made by dyn-graph-autodiff. `output_mask` says which of the two are computed; a
// result not asked for is left unwritten (the backward does not read it).
def Graph_ConvolutionBackwardOp : Graph_DynamicLibraryOp<"convolution_backward", "convolution_backward",
                                                  "a convolution's input and weight gradients"> {
  let arguments = (ins Graph_LibraryFloatTensor:$grad_output, Graph_LibraryFloatTensor:$input,
                       Graph_LibraryFloatTensor:$weight, DenseI64ArrayAttr:$stride, DenseI64ArrayAttr:$padding,
                       DenseI64ArrayAttr:$dilation, I64Attr:$groups, BoolAttr:$transposed,
                       DenseI64ArrayAttr:$output_padding, DenseI64ArrayAttr:$output_mask);
  let results = (outs Graph_LibraryFloatTensor:$grad_input, Graph_LibraryFloatTensor:$grad_weight);
  let eager = "tuple(torch.ops.aten.convolution_backward({grad_output}, {input}, {weight}, None, {stride}, "
              "{padding}, {dilation}, {transposed}, {output_padding}, {groups}, "
              "[bool(m) for m in {output_mask}] + [False])[:2])";
}
// The query, key and value gradients of graph.scaled_dot_product_attention (made by dyn-graph-autodiff):
// eager's attention kernel (flash, memory-efficient or math, as SDPA's dispatch picks) run again and
// differentiated by ATen, so no [L, S] probabilities are saved or materialized by the backward. With a
// mask (boolean, or float without a gradient of its own) the second form.
def Graph_AttentionBackwardOp : Graph_DynamicLibraryOp<"attention_backward", "attention_backward",
                                                "scaled_dot_product_attention's query, key and value gradients", 1> {
  let arguments = (ins Graph_LibraryFloatTensor:$grad_output, Graph_LibraryFloatTensor:$query,
                       Graph_LibraryFloatTensor:$key, Graph_LibraryFloatTensor:$value, BoolAttr:$is_causal,
                       F64Attr:$scale);
  let results = (outs Graph_LibraryFloatTensor:$grad_query, Graph_LibraryFloatTensor:$grad_key,
                      Graph_LibraryFloatTensor:$grad_value);
  let eager = "_rt.attention_backward({grad_output}, {query}, {key}, {value}, None, {is_causal}, {scale})";
}
def Graph_MaskedAttentionBackwardOp : Graph_DynamicLibraryOp<"masked_attention_backward", "attention_backward",
                                                      "masked scaled_dot_product_attention's query, key and value gradients", 1> {
  let arguments = (ins Graph_LibraryFloatTensor:$grad_output, Graph_LibraryFloatTensor:$query,
                       Graph_LibraryFloatTensor:$key, Graph_LibraryFloatTensor:$value,
                       RankedTensorOf<[I1, F16, BF16, F32, F64]>:$mask, BoolAttr:$is_causal, F64Attr:$scale);
  let results = (outs Graph_LibraryFloatTensor:$grad_query, Graph_LibraryFloatTensor:$grad_key,
                      Graph_LibraryFloatTensor:$grad_value);
  let eager = "_rt.attention_backward({grad_output}, {query}, {key}, {value}, {mask}, {is_causal}, {scale})";
}
// Attention of a training graph (dyn-graph-autodiff makes it from graph.scaled_dot_product_attention
// without a mask): eager's fused kernel (flash or memory-efficient, as SDPA's dispatch picks; the math
// formula where neither applies) that also returns what its backward kernel reads: the rows'
// log-sum-exp (`lse`, padded to a multiple of 32 columns, the memory-efficient kernel's layout) and
// `rng` (the Philox seed and offset of a dropout: dyn makes the op with `dropout_p` 0, where the
// kernels draw nothing). The backward then runs once, without running the forward kernel again.
def Graph_AttentionLseOp : Graph_DynamicLibraryOp<"attention_lse", "attention_lse",
                                           "attention with its log-sum-exp, for its backward", 1> {
  let arguments = (ins Graph_LibraryFloatTensor:$query, Graph_LibraryFloatTensor:$key,
                       Graph_LibraryFloatTensor:$value, F64Attr:$dropout_p, BoolAttr:$is_causal, F64Attr:$scale);
  let results = (outs Graph_LibraryFloatTensor:$result, Graph_LibraryFloatTensor:$lse, Graph_IndexTensor:$rng);
  let eager = "_rt.attention_lse({query}, {key}, {value}, {dropout_p}, {is_causal}, {scale})";
}
// The query, key and value gradients of graph.attention_lse: eager's backward kernel of the same
// backend, from the forward's result, log-sum-exp and random state.
def Graph_AttentionLseBackwardOp : Graph_DynamicLibraryOp<"attention_lse_backward", "attention_lse_backward",
                                                   "graph.attention_lse's query, key and value gradients", 1> {
  let arguments = (ins Graph_LibraryFloatTensor:$grad_output, Graph_LibraryFloatTensor:$query,
                       Graph_LibraryFloatTensor:$key, Graph_LibraryFloatTensor:$value,
                       Graph_LibraryFloatTensor:$result, Graph_LibraryFloatTensor:$lse, Graph_IndexTensor:$rng,
                       F64Attr:$dropout_p, BoolAttr:$is_causal, F64Attr:$scale);
  let results = (outs Graph_LibraryFloatTensor:$grad_query, Graph_LibraryFloatTensor:$grad_key,
                      Graph_LibraryFloatTensor:$grad_value);
  let eager = "_rt.attention_lse_backward({grad_output}, {query}, {key}, {value}, {result}, {lse}, {rng}, "
              "{dropout_p}, {is_causal}, {scale})";
}
// Masked attention with dropout of a training graph on CUDA (capture makes it where SDPA's dispatch picks
// the memory-efficient kernel): that kernel with the mask as its additive bias (a boolean mask as 0 / -inf),
// drawing the dropout itself; `lse` and `rng` as graph.attention_lse's. The mask takes no gradient.
def Graph_MaskedAttentionLseOp : Graph_LibraryOp<"masked_attention_lse", "masked_attention_lse",
                                                 "masked attention with its log-sum-exp, for its backward", 1> {
  let arguments = (ins Graph_LibraryFloatTensor:$query, Graph_LibraryFloatTensor:$key,
                       Graph_LibraryFloatTensor:$value, RankedTensorOf<[I1, F16, BF16, F32, F64]>:$mask,
                       F64Attr:$dropout_p, BoolAttr:$is_causal, F64Attr:$scale);
  let results = (outs Graph_LibraryFloatTensor:$result, Graph_LibraryFloatTensor:$lse, Graph_IndexTensor:$rng);
  let eager = "_rt.masked_attention_lse({query}, {key}, {value}, {mask}, {dropout_p}, {is_causal}, {scale})";
}
// The query, key and value gradients of graph.masked_attention_lse: the memory-efficient backward kernel, from
// the forward's result, log-sum-exp and random state.
def Graph_MaskedAttentionLseBackwardOp : Graph_LibraryOp<"masked_attention_lse_backward",
                                                         "masked_attention_lse_backward",
                                                         "graph.masked_attention_lse's query, key and value gradients", 1> {
  let arguments = (ins Graph_LibraryFloatTensor:$grad_output, Graph_LibraryFloatTensor:$query,
                       Graph_LibraryFloatTensor:$key, Graph_LibraryFloatTensor:$value,
                       RankedTensorOf<[I1, F16, BF16, F32, F64]>:$mask, Graph_LibraryFloatTensor:$result,
                       Graph_LibraryFloatTensor:$lse, Graph_IndexTensor:$rng, F64Attr:$dropout_p, BoolAttr:$is_causal,
                       F64Attr:$scale);
  let results = (outs Graph_LibraryFloatTensor:$grad_query, Graph_LibraryFloatTensor:$grad_key,
                      Graph_LibraryFloatTensor:$grad_value);
  let eager = "_rt.masked_attention_lse_backward({grad_output}, {query}, {key}, {value}, {mask}, {result}, {lse}, "
              "{rng}, {dropout_p}, {is_causal}, {scale})";
}
// The weight gradient of an embedding's row gather (aten.embedding_dense_backward): the rows of
// `grad_output` [N, F] summed into the rows of a [V, F] zero matrix that `indices` [N] (in [0, V)) name;
// `weight` gives only V and the type. Made by dyn-graph-autodiff where the one-hot GEMM would be large;
// N may be `?` (a batch of tokens of any length).
def Graph_EmbeddingBackwardOp : Graph_DynamicLibraryOp<"embedding_backward", "embedding_backward",
                                                       "an embedding's weight gradient"> {
  let arguments = (ins Graph_LibraryFloatTensor:$grad_output, Graph_LibraryFloatTensor:$weight,
                       RankedTensorOf<[I32, I64]>:$indices);
  let results = (outs Graph_LibraryFloatTensor:$grad_weight);
  let eager = "torch.ops.aten.embedding_dense_backward.default({grad_output}, {indices}, {weight}.shape[0], -1, "
              "False)";
}
// The input gradient of 2-d adaptive average pooling (aten._adaptive_avg_pool2d_backward).
def Graph_AdaptiveAvgPool2dBackwardOp : Graph_DynamicLibraryOp<"adaptive_avg_pool2d_backward", "adaptive_avg_pool2d_backward",
                                                        "2-d adaptive average pooling's input gradient"> {
  let arguments = (ins Graph_LibraryFloatTensor:$grad_output, Graph_LibraryFloatTensor:$input);
  let results = (outs Graph_LibraryFloatTensor:$grad_input);
  let aten = "at::_adaptive_avg_pool2d_backward($grad_output, $input)";
  let eager = "torch.ops.aten._adaptive_avg_pool2d_backward.default({grad_output}, {input})";
}
// Bilinear or bicubic resampling (`mode`) by ATen's kernel: interpolate(antialias=True), whose
// output reads a window whose width depends on the scale, and uint8 images, which ATen resamples
// with its own integer rounding (both on the CPU and CUDA).
def Graph_Upsample2dOp : Graph_LibraryOp<"upsample2d", "upsample2d", "bilinear/bicubic resampling of images, optionally anti-aliased"> {
  let arguments = (ins RankedTensorOf<[F16, BF16, F32, F64, UI8]>:$input, StrAttr:$mode,
                       DenseI64ArrayAttr:$output_size, BoolAttr:$align_corners, BoolAttr:$antialias,
                       BoolAttr:$has_scales, F64Attr:$scale_h, F64Attr:$scale_w);
  let results = (outs RankedTensorOf<[F16, BF16, F32, F64, UI8]>:$result);
  let eager = "getattr(torch.ops.aten, ('_upsample_' if {antialias} else 'upsample_') + {mode} + "
              "('2d_aa' if {antialias} else '2d')).default({input}, {output_size}, {align_corners}, "
              "{scale_h} if {has_scales} else None, {scale_w} if {has_scales} else None)";
}

//===----------------------------------------------------------------------===//
// Collectives (torch.distributed): the process group's own collective, run by
// c10d's functional ops (_c10d_functional) on the group named `group_name` and
// waited for on the compiled code's stream. Every rank compiles the same graph,
// so the ranks issue the same collectives in the same order (docs/distributed.md).
//===----------------------------------------------------------------------===//

def Graph_AllReduceOp : Graph_LibraryOp<"all_reduce", "all_reduce", "the elementwise `reduce_op` of `input` over the ranks of a process group"> {
  let arguments = (ins Graph_Tensor:$input, StrAttr:$reduce_op, StrAttr:$group_name);
  let results = (outs Graph_Tensor:$result);
  let torchNames = ["torch.distributed._functional_collectives.all_reduce", "torch.distributed.all_reduce"];
  let eager = "torch.ops._c10d_functional.wait_tensor(torch.ops._c10d_functional.all_reduce({input}, {reduce_op}, "
              "{group_name}))";
}
def Graph_AllGatherIntoTensorOp : Graph_LibraryOp<"all_gather_into_tensor", "all_gather_into_tensor", "every rank's `input` concatenated along dim 0, in rank order"> {
  let arguments = (ins Graph_Tensor:$input, I64Attr:$group_size, StrAttr:$group_name);
  let results = (outs Graph_Tensor:$result);
  let torchNames = ["torch.distributed._functional_collectives.all_gather_tensor",
                    "torch.distributed.all_gather_into_tensor"];
  let eager = "torch.ops._c10d_functional.wait_tensor(torch.ops._c10d_functional.all_gather_into_tensor({input}, "
              "{group_size}, {group_name}))";
}
def Graph_ReduceScatterTensorOp : Graph_LibraryOp<"reduce_scatter_tensor", "reduce_scatter_tensor", "this rank's block (along dim 0) of the `reduce_op` of every rank's `input`"> {
  let arguments = (ins Graph_Tensor:$input, StrAttr:$reduce_op, I64Attr:$group_size, StrAttr:$group_name);
  let results = (outs Graph_Tensor:$result);
  let torchNames = ["torch.distributed._functional_collectives.reduce_scatter_tensor",
                    "torch.distributed.reduce_scatter_tensor"];
  let eager = "torch.ops._c10d_functional.wait_tensor(torch.ops._c10d_functional.reduce_scatter_tensor({input}, "
              "{reduce_op}, {group_size}, {group_name}))";
}

#endif // DYN_GRAPH_LIBRARY_OPS
