// RUN: dyn-opt %s -split-input-file -dyn-approximate-math -verify-diagnostics

// The f64 erf left for libm would call this module's own @erf (found by the
// fuzzer: invalid IR from convert-math-to-libm): refused where it is defined.
// expected-error @+1 {{'func.func' op is named as the C library function `erf` that the module's math ops are lowered to call}}
func.func @erf(%x: f32, %y: f64) -> (f32, f64) {
  %0 = math.erf %x : f32
  %1 = math.erf %y : f64
  return %0, %1 : f32, f64
}

// -----

// An f32 erf is approximated (no call): a function named erff is fine.
func.func @erff(%x: f32) -> f32 {
  %0 = math.erf %x : f32
  return %0 : f32
}
