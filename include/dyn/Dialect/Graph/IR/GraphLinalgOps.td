//===- GraphLinalgOps.td - linear algebra as library calls ---*- tablegen -*-===//
//
// cholesky, inv, solve, det, eigh, svd, qr, lu, ldl, pinv, norms, ...: graph
// ops computed by ATen's linear algebra (Graph_LibraryOp), included by
// GraphLibraryOps.td where its linalg section is (the registry's order).
//
//===----------------------------------------------------------------------===//
#ifndef DYN_GRAPH_LINALG_OPS
#define DYN_GRAPH_LINALG_OPS

//===----------------------------------------------------------------------===//
// Linear algebra (real f32/f64; LAPACK on the CPU, cuSOLVER/MAGMA on CUDA)
//===----------------------------------------------------------------------===//

def Graph_LinalgCholeskyOp : Graph_LibraryOp<"linalg_cholesky", "linalg_cholesky", "Cholesky factor"> {
  let arguments = (ins Graph_FloatTensor:$A, BoolAttr:$upper);
  let results = (outs Graph_FloatTensor:$L);
  let aten = "at::linalg_cholesky($A, $upper)";
  let torchNames = ["torch.linalg.cholesky"];
  let signature = "A, *, upper=False";
  let eager = "torch.linalg.cholesky({A}, upper={upper})";
}
def Graph_CholeskyOp : Graph_LibraryOp<"cholesky", "cholesky", "Cholesky factor (torch.cholesky)"> {
  let arguments = (ins Graph_FloatTensor:$input, BoolAttr:$upper);
  let results = (outs Graph_FloatTensor:$L);
  let aten = "at::cholesky($input, $upper)";
  let torchNames = ["torch.cholesky", "Tensor.cholesky"];
  let signature = "input, upper=False";
  let eager = "torch.cholesky({input}, upper={upper})";
}
def Graph_LinalgCholeskyExOp : Graph_LibraryOp<"linalg_cholesky_ex", "linalg_cholesky_ex", "Cholesky factor and LAPACK's info"> {
  let arguments = (ins Graph_FloatTensor:$A, BoolAttr:$upper, BoolAttr:$check_errors);
  let results = (outs Graph_FloatTensor:$L, Graph_PivotTensor:$info);
  let aten = "at::linalg_cholesky_ex($A, $upper, $check_errors)";
  let torchNames = ["torch.linalg.cholesky_ex"];
  let signature = "A, *, upper=False, check_errors=False";
  let eager = "torch.linalg.cholesky_ex({A}, upper={upper}, check_errors={check_errors})";
}
def Graph_LinalgInvOp : Graph_LibraryOp<"linalg_inv", "linalg_inv", "matrix inverse"> {
  let arguments = (ins Graph_FloatTensor:$A);
  let results = (outs Graph_FloatTensor:$result);
  let aten = "at::linalg_inv($A)";
  let torchNames = ["torch.linalg.inv", "torch.inverse", "Tensor.inverse"];
  let signature = "A";
  let eager = "torch.linalg.inv({A})";
}
def Graph_LinalgInvExOp : Graph_LibraryOp<"linalg_inv_ex", "linalg_inv_ex", "matrix inverse and LAPACK's info"> {
  let arguments = (ins Graph_FloatTensor:$A, BoolAttr:$check_errors);
  let results = (outs Graph_FloatTensor:$inverse, Graph_PivotTensor:$info);
  let aten = "at::linalg_inv_ex($A, $check_errors)";
  let torchNames = ["torch.linalg.inv_ex"];
  let signature = "A, *, check_errors=False";
  let eager = "torch.linalg.inv_ex({A}, check_errors={check_errors})";
}
def Graph_LinalgSolveOp : Graph_LibraryOp<"linalg_solve", "linalg_solve", "solution of A X = B (X A = B without `left`)"> {
  let arguments = (ins Graph_FloatTensor:$A, Graph_FloatTensor:$B, BoolAttr:$left);
  let results = (outs Graph_FloatTensor:$result);
  let aten = "at::linalg_solve($A, $B, $left)";
  let torchNames = ["torch.linalg.solve"];
  let signature = "A, B, *, left=True";
  let eager = "torch.linalg.solve({A}, {B}, left={left})";
}
def Graph_LinalgSolveExOp : Graph_LibraryOp<"linalg_solve_ex", "linalg_solve_ex", "solution of A X = B and LAPACK's info"> {
  let arguments = (ins Graph_FloatTensor:$A, Graph_FloatTensor:$B, BoolAttr:$left, BoolAttr:$check_errors);
  let results = (outs Graph_FloatTensor:$result, Graph_PivotTensor:$info);
  let aten = "at::linalg_solve_ex($A, $B, $left, $check_errors)";
  let torchNames = ["torch.linalg.solve_ex"];
  let signature = "A, B, *, left=True, check_errors=False";
  let eager = "torch.linalg.solve_ex({A}, {B}, left={left}, check_errors={check_errors})";
}
def Graph_LinalgSolveTriangularOp : Graph_LibraryOp<"linalg_solve_triangular", "linalg_solve_triangular", "triangular solve"> {
  let arguments = (ins Graph_FloatTensor:$A, Graph_FloatTensor:$B, BoolAttr:$upper, BoolAttr:$left,
                       BoolAttr:$unitriangular);
  let results = (outs Graph_FloatTensor:$result);
  let aten = "at::linalg_solve_triangular($A, $B, $upper, $left, $unitriangular)";
  let torchNames = ["torch.linalg.solve_triangular"];
  let signature = "A, B, *, upper, left=True, unitriangular=False";
  let eager = "torch.linalg.solve_triangular({A}, {B}, upper={upper}, left={left}, unitriangular={unitriangular})";
}
def Graph_LinalgDetOp : Graph_LibraryOp<"linalg_det", "linalg_det", "determinant"> {
  let arguments = (ins Graph_FloatTensor:$A);
  let results = (outs Graph_FloatTensor:$result);
  let aten = "at::linalg_det($A)";
  let torchNames = ["torch.linalg.det", "torch.det", "Tensor.det"];
  let signature = "A";
  let eager = "torch.linalg.det({A})";
}
def Graph_LinalgSlogdetOp : Graph_LibraryOp<"linalg_slogdet", "linalg_slogdet", "sign and log |determinant|"> {
  let arguments = (ins Graph_FloatTensor:$A);
  let results = (outs Graph_FloatTensor:$sign, Graph_FloatTensor:$logabsdet);
  let aten = "at::linalg_slogdet($A)";
  let torchNames = ["torch.linalg.slogdet"];
  let signature = "A";
  let eager = "torch.linalg.slogdet({A})";
}
def Graph_SlogdetOp : Graph_LibraryOp<"slogdet", "linalg_slogdet", "sign and log |determinant| (torch.slogdet)"> {
  let arguments = (ins Graph_FloatTensor:$input);
  let results = (outs Graph_FloatTensor:$sign, Graph_FloatTensor:$logabsdet);
  let aten = "at::linalg_slogdet($input)";
  let torchNames = ["torch.slogdet", "Tensor.slogdet"];
  let signature = "input";
  let eager = "torch.slogdet({input})";
}
def Graph_LogdetOp : Graph_LibraryOp<"logdet", "logdet", "log determinant (NaN when negative)"> {
  let arguments = (ins Graph_FloatTensor:$input);
  let results = (outs Graph_FloatTensor:$result);
  let aten = "at::logdet($input)";
  let torchNames = ["torch.logdet", "Tensor.logdet"];
  let signature = "input";
  let eager = "torch.logdet({input})";
}
def Graph_LinalgEighOp : Graph_LibraryOp<"linalg_eigh", "linalg_eigh", "eigenvalues and eigenvectors of a symmetric matrix"> {
  let arguments = (ins Graph_FloatTensor:$A, StrAttr:$UPLO);
  let results = (outs Graph_FloatTensor:$eigenvalues, Graph_FloatTensor:$eigenvectors);
  let aten = "at::linalg_eigh($A, $UPLO)";
  let torchNames = ["torch.linalg.eigh"];
  let signature = "A, UPLO='L'";
  let eager = "torch.linalg.eigh({A}, UPLO={UPLO})";
}
def Graph_LinalgEigvalshOp : Graph_LibraryOp<"linalg_eigvalsh", "linalg_eigvalsh", "eigenvalues of a symmetric matrix"> {
  let arguments = (ins Graph_FloatTensor:$A, StrAttr:$UPLO);
  let results = (outs Graph_FloatTensor:$result);
  let aten = "at::linalg_eigvalsh($A, $UPLO)";
  let torchNames = ["torch.linalg.eigvalsh"];
  let signature = "A, UPLO='L'";
  let eager = "torch.linalg.eigvalsh({A}, UPLO={UPLO})";
}
def Graph_LinalgSvdOp : Graph_LibraryOp<"linalg_svd", "linalg_svd", "singular value decomposition U S Vh"> {
  let arguments = (ins Graph_FloatTensor:$A, BoolAttr:$full_matrices);
  let results = (outs Graph_FloatTensor:$U, Graph_FloatTensor:$S, Graph_FloatTensor:$Vh);
  let aten = "at::linalg_svd($A, $full_matrices)";
  let torchNames = ["torch.linalg.svd"];
  let signature = "A, full_matrices=True";
  let eager = "torch.linalg.svd({A}, full_matrices={full_matrices})";
}
def Graph_SvdOp : Graph_LibraryOp<"svd", "svd", "singular value decomposition U S V (torch.svd)"> {
  let arguments = (ins Graph_FloatTensor:$input, BoolAttr:$some, BoolAttr:$compute_uv);
  let results = (outs Graph_FloatTensor:$U, Graph_FloatTensor:$S, Graph_FloatTensor:$V);
  let aten = "at::svd($input, $some, $compute_uv)";
  let torchNames = ["torch.svd", "Tensor.svd"];
  let signature = "input, some=True, compute_uv=True";
  let eager = "torch.svd({input}, some={some}, compute_uv={compute_uv})";
}
def Graph_LinalgSvdvalsOp : Graph_LibraryOp<"linalg_svdvals", "linalg_svdvals", "singular values"> {
  let arguments = (ins Graph_FloatTensor:$A);
  let results = (outs Graph_FloatTensor:$result);
  let aten = "at::linalg_svdvals($A)";
  let torchNames = ["torch.linalg.svdvals"];
  let signature = "A";
  let eager = "torch.linalg.svdvals({A})";
}
def Graph_LinalgQrOp : Graph_LibraryOp<"linalg_qr", "linalg_qr", "QR decomposition"> {
  let arguments = (ins Graph_FloatTensor:$A, StrAttr:$mode);
  let results = (outs Graph_FloatTensor:$Q, Graph_FloatTensor:$R);
  let aten = "at::linalg_qr($A, $mode)";
  let torchNames = ["torch.linalg.qr"];
  let signature = "A, mode='reduced'";
  let eager = "torch.linalg.qr({A}, mode={mode})";
}
def Graph_QrOp : Graph_LibraryOp<"qr", "qr", "QR decomposition (torch.qr)"> {
  let arguments = (ins Graph_FloatTensor:$input, BoolAttr:$some);
  let results = (outs Graph_FloatTensor:$Q, Graph_FloatTensor:$R);
  let aten = "at::qr($input, $some)";
  let torchNames = ["torch.qr", "Tensor.qr"];
  let signature = "input, some=True";
  let eager = "torch.qr({input}, some={some})";
}
def Graph_LinalgLuOp : Graph_LibraryOp<"linalg_lu", "linalg_lu", "LU decomposition with partial pivoting, P L U"> {
  let arguments = (ins Graph_FloatTensor:$A, BoolAttr:$pivot);
  let results = (outs Graph_FloatTensor:$P, Graph_FloatTensor:$L, Graph_FloatTensor:$U);
  let aten = "at::linalg_lu($A, $pivot)";
  let torchNames = ["torch.linalg.lu"];
  let signature = "A, *, pivot=True";
  let eager = "torch.linalg.lu({A}, pivot={pivot})";
}
def Graph_LinalgLuFactorOp : Graph_LibraryOp<"linalg_lu_factor", "linalg_lu_factor", "compact LU factorization and pivots"> {
  let arguments = (ins Graph_FloatTensor:$A, BoolAttr:$pivot);
  let results = (outs Graph_FloatTensor:$LU, Graph_PivotTensor:$pivots);
  let aten = "at::linalg_lu_factor($A, $pivot)";
  let torchNames = ["torch.linalg.lu_factor"];
  let signature = "A, *, pivot=True";
  let eager = "torch.linalg.lu_factor({A}, pivot={pivot})";
}
def Graph_LinalgLuFactorExOp : Graph_LibraryOp<"linalg_lu_factor_ex", "linalg_lu_factor_ex", "compact LU factorization, pivots and LAPACK's info"> {
  let arguments = (ins Graph_FloatTensor:$A, BoolAttr:$pivot, BoolAttr:$check_errors);
  let results = (outs Graph_FloatTensor:$LU, Graph_PivotTensor:$pivots, Graph_PivotTensor:$info);
  let aten = "at::linalg_lu_factor_ex($A, $pivot, $check_errors)";
  let torchNames = ["torch.linalg.lu_factor_ex"];
  let signature = "A, *, pivot=True, check_errors=False";
  let eager = "torch.linalg.lu_factor_ex({A}, pivot={pivot}, check_errors={check_errors})";
}
def Graph_LinalgLuSolveOp : Graph_LibraryOp<"linalg_lu_solve", "linalg_lu_solve", "solution of A X = B from A's LU factorization"> {
  let arguments = (ins Graph_FloatTensor:$LU, Graph_PivotTensor:$pivots, Graph_FloatTensor:$B,
                       BoolAttr:$left, BoolAttr:$adjoint);
  let results = (outs Graph_FloatTensor:$result);
  let aten = "at::linalg_lu_solve($LU, $pivots, $B, $left, $adjoint)";
  let torchNames = ["torch.linalg.lu_solve"];
  let signature = "LU, pivots, B, *, left=True, adjoint=False";
  let eager = "torch.linalg.lu_solve({LU}, {pivots}, {B}, left={left}, adjoint={adjoint})";
}
def Graph_LuSolveOp : Graph_LibraryOp<"lu_solve", "lu_solve", "solution of A X = B from A's LU factorization (torch.lu_solve)"> {
  let arguments = (ins Graph_FloatTensor:$b, Graph_FloatTensor:$LU_data, Graph_PivotTensor:$LU_pivots);
  let results = (outs Graph_FloatTensor:$result);
  let aten = "at::lu_solve($b, $LU_data, $LU_pivots)";
  let torchNames = ["torch.lu_solve", "Tensor.lu_solve"];
  let signature = "b, LU_data, LU_pivots";
  let eager = "torch.lu_solve({b}, {LU_data}, {LU_pivots})";
}
def Graph_LuUnpackOp : Graph_LibraryOp<"lu_unpack", "lu_unpack", "P, L, U from a compact LU factorization"> {
  let arguments = (ins Graph_FloatTensor:$LU_data, Graph_PivotTensor:$LU_pivots, BoolAttr:$unpack_data,
                       BoolAttr:$unpack_pivots);
  let results = (outs Graph_FloatTensor:$P, Graph_FloatTensor:$L, Graph_FloatTensor:$U);
  let aten = "at::lu_unpack($LU_data, $LU_pivots, $unpack_data, $unpack_pivots)";
  let torchNames = ["torch.lu_unpack"];
  let signature = "LU_data, LU_pivots, unpack_data=True, unpack_pivots=True";
  let eager = "torch.lu_unpack({LU_data}, {LU_pivots}, unpack_data={unpack_data}, unpack_pivots={unpack_pivots})";
}
def Graph_LinalgLdlFactorOp : Graph_LibraryOp<"linalg_ldl_factor", "linalg_ldl_factor", "LDL factorization and pivots"> {
  let arguments = (ins Graph_FloatTensor:$A, BoolAttr:$hermitian);
  let results = (outs Graph_FloatTensor:$LD, Graph_PivotTensor:$pivots);
  let aten = "at::linalg_ldl_factor($A, $hermitian)";
  let torchNames = ["torch.linalg.ldl_factor"];
  let signature = "A, *, hermitian=False";
  let eager = "torch.linalg.ldl_factor({A}, hermitian={hermitian})";
}
def Graph_LinalgLdlFactorExOp : Graph_LibraryOp<"linalg_ldl_factor_ex", "linalg_ldl_factor_ex", "LDL factorization, pivots and LAPACK's info"> {
  let arguments = (ins Graph_FloatTensor:$A, BoolAttr:$hermitian, BoolAttr:$check_errors);
  let results = (outs Graph_FloatTensor:$LD, Graph_PivotTensor:$pivots, Graph_PivotTensor:$info);
  let aten = "at::linalg_ldl_factor_ex($A, $hermitian, $check_errors)";
  let torchNames = ["torch.linalg.ldl_factor_ex"];
  let signature = "A, *, hermitian=False, check_errors=False";
  let eager = "torch.linalg.ldl_factor_ex({A}, hermitian={hermitian}, check_errors={check_errors})";
}
def Graph_LinalgLdlSolveOp : Graph_LibraryOp<"linalg_ldl_solve", "linalg_ldl_solve", "solution of A X = B from A's LDL factorization"> {
  let arguments = (ins Graph_FloatTensor:$LD, Graph_PivotTensor:$pivots, Graph_FloatTensor:$B,
                       BoolAttr:$hermitian);
  let results = (outs Graph_FloatTensor:$result);
  let aten = "at::linalg_ldl_solve($LD, $pivots, $B, $hermitian)";
  let torchNames = ["torch.linalg.ldl_solve"];
  let signature = "LD, pivots, B, *, hermitian=False";
  let eager = "torch.linalg.ldl_solve({LD}, {pivots}, {B}, hermitian={hermitian})";
}
def Graph_LinalgHouseholderProductOp : Graph_LibraryOp<"linalg_householder_product", "linalg_householder_product", "product of Householder reflectors"> {
  let arguments = (ins Graph_FloatTensor:$A, Graph_FloatTensor:$tau);
  let results = (outs Graph_FloatTensor:$result);
  let aten = "at::linalg_householder_product($A, $tau)";
  let torchNames = ["torch.linalg.householder_product", "torch.orgqr", "Tensor.orgqr"];
  let signature = "A, tau";
  let eager = "torch.linalg.householder_product({A}, {tau})";
}
def Graph_LinalgMatrixExpOp : Graph_LibraryOp<"linalg_matrix_exp", "linalg_matrix_exp", "matrix exponential"> {
  let arguments = (ins Graph_FloatTensor:$A);
  let results = (outs Graph_FloatTensor:$result);
  let aten = "at::linalg_matrix_exp($A)";
  let torchNames = ["torch.linalg.matrix_exp", "torch.matrix_exp", "Tensor.matrix_exp"];
  let signature = "A";
  let eager = "torch.linalg.matrix_exp({A})";
}
def Graph_LinalgMatrixPowerOp : Graph_LibraryOp<"linalg_matrix_power", "linalg_matrix_power", "integer matrix power"> {
  let arguments = (ins Graph_FloatTensor:$A, I64Attr:$n);
  let results = (outs Graph_FloatTensor:$result);
  let aten = "at::linalg_matrix_power($A, $n)";
  let torchNames = ["torch.linalg.matrix_power", "torch.matrix_power", "Tensor.matrix_power"];
  let signature = "A, n";
  let eager = "torch.linalg.matrix_power({A}, {n})";
}
// Tolerances given as numbers (`has_atol`, `has_rtol` say which; None: PyTorch's defaults).
def Graph_LinalgPinvOp : Graph_LibraryOp<"linalg_pinv", "linalg_pinv", "pseudo-inverse"> {
  let arguments = (ins Graph_FloatTensor:$A, BoolAttr:$has_atol, F64Attr:$atol, BoolAttr:$has_rtol,
                       F64Attr:$rtol, BoolAttr:$hermitian);
  let results = (outs Graph_FloatTensor:$result);
  let aten = "at::linalg_pinv($A, given($has_atol, $atol), given($has_rtol, $rtol), $hermitian)";
  let torchNames = ["torch.linalg.pinv"];
  let eager = "torch.linalg.pinv({A}, atol={atol} if {has_atol} else None, rtol={rtol} if {has_rtol} else None, "
              "hermitian={hermitian})";
}
def Graph_PinverseOp : Graph_LibraryOp<"pinverse", "pinverse", "pseudo-inverse with a relative cutoff (torch.pinverse)"> {
  let arguments = (ins Graph_FloatTensor:$input, F64Attr:$rcond);
  let results = (outs Graph_FloatTensor:$result);
  let aten = "at::pinverse($input, $rcond)";
  let torchNames = ["torch.pinverse", "Tensor.pinverse"];
  let signature = "input, rcond=1e-15";
  let eager = "torch.pinverse({input}, rcond={rcond})";
}
def Graph_LinalgMatrixRankOp : Graph_LibraryOp<"linalg_matrix_rank", "linalg_matrix_rank", "numerical rank"> {
  let arguments = (ins Graph_FloatTensor:$A, BoolAttr:$has_atol, F64Attr:$atol, BoolAttr:$has_rtol,
                       F64Attr:$rtol, BoolAttr:$hermitian);
  let results = (outs Graph_IndexTensor:$result);
  let aten = "at::linalg_matrix_rank($A, given($has_atol, $atol), given($has_rtol, $rtol), $hermitian)";
  let torchNames = ["torch.linalg.matrix_rank"];
  let eager = "torch.linalg.matrix_rank({A}, atol={atol} if {has_atol} else None, "
              "rtol={rtol} if {has_rtol} else None, hermitian={hermitian})";
}
// ord: a number (`ord`), or 'fro' / 'nuc' (`ord_name`, then `ord` is unused).
def Graph_LinalgMatrixNormOp : Graph_LibraryOp<"linalg_matrix_norm", "linalg_matrix_norm", "matrix norm over two dims"> {
  let arguments = (ins Graph_FloatTensor:$A, StrAttr:$ord_name, F64Attr:$ord, DenseI64ArrayAttr:$dim,
                       BoolAttr:$keepdim);
  let results = (outs Graph_FloatTensor:$result);
  let aten = "$ord_name.empty() "
              "? at::linalg_matrix_norm($A, at::Scalar($ord), $dim, $keepdim) "
              ": at::linalg_matrix_norm($A, $ord_name, $dim, $keepdim)";
  let torchNames = ["torch.linalg.matrix_norm"];
  let eager = "torch.linalg.matrix_norm({A}, {ord_name} or {ord}, dim={dim}, keepdim={keepdim})";
}
// p: a number (`p`), 'fro' / 'nuc' (`p_name`), or None (`p_name` = "none": the 2-norm via SVD).
def Graph_LinalgCondOp : Graph_LibraryOp<"linalg_cond", "linalg_cond", "condition number"> {
  let arguments = (ins Graph_FloatTensor:$A, StrAttr:$p_name, F64Attr:$p);
  let results = (outs Graph_FloatTensor:$result);
  let aten = "$p_name == \"none\" "
              "? at::linalg_cond($A, std::optional<at::Scalar>()) "
              ": $p_name.empty() "
              "? at::linalg_cond($A, std::optional<at::Scalar>(at::Scalar($p))) "
              ": at::linalg_cond($A, $p_name)";
  let torchNames = ["torch.linalg.cond"];
  let eager = "torch.linalg.cond({A}, None if {p_name} == 'none' else ({p_name} or {p}))";
}
def Graph_LinalgTensorinvOp : Graph_LibraryOp<"linalg_tensorinv", "linalg_tensorinv", "tensor inverse"> {
  let arguments = (ins Graph_FloatTensor:$A, I64Attr:$ind);
  let results = (outs Graph_FloatTensor:$result);
  let aten = "at::linalg_tensorinv($A, $ind)";
  let torchNames = ["torch.linalg.tensorinv"];
  let signature = "A, ind=2";
  let eager = "torch.linalg.tensorinv({A}, ind={ind})";
}
def Graph_TriangularSolveOp : Graph_LibraryOp<"triangular_solve", "triangular_solve", "triangular solve (torch.triangular_solve)"> {
  let arguments = (ins Graph_FloatTensor:$b, Graph_FloatTensor:$A, BoolAttr:$upper, BoolAttr:$transpose,
                       BoolAttr:$unitriangular);
  let results = (outs Graph_FloatTensor:$solution, Graph_FloatTensor:$cloned_coefficient);
  let aten = "at::triangular_solve($b, $A, $upper, $transpose, $unitriangular)";
  let torchNames = ["torch.triangular_solve", "Tensor.triangular_solve"];
  let signature = "b, A, upper=True, transpose=False, unitriangular=False";
  let eager = "torch.triangular_solve({b}, {A}, upper={upper}, transpose={transpose}, unitriangular={unitriangular})";
}

#endif // DYN_GRAPH_LINALG_OPS
