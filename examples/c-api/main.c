// Compiles a graph-dialect function through dyn's C API and calls it.
#include "dyn-c/Compiler.h"
#include "dyn-c/Dialects.h"
#include "mlir-c/IR.h"

#include <stdio.h>

static void printError(MlirStringRef text, void *userData) {
  (void)userData;
  fprintf(stderr, "%.*s\n", (int)text.length, text.data);
}

int main(void) {
  MlirDialectRegistry registry = mlirDialectRegistryCreate();
  dynRegisterAllDialects(registry);
  MlirContext ctx = mlirContextCreateWithRegistry(registry, /*threadingEnabled=*/false);
  mlirDialectRegistryDestroy(registry);

  const char *ir = "func.func @axpy(%a: tensor<f32>, %x: tensor<4xf32>, %y: tensor<4xf32>)\n"
                   "    -> tensor<4xf32> {\n"
                   "  %0 = graph.mul %a, %x : tensor<f32>, tensor<4xf32> -> tensor<4xf32>\n"
                   "  %1 = graph.add %0, %y : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>\n"
                   "  return %1 : tensor<4xf32>\n"
                   "}\n";
  MlirModule module = mlirModuleCreateParse(ctx, mlirStringRefCreateFromCString(ir));
  if (mlirModuleIsNull(module))
    return 1;
  DynCompiledFunction axpy =
      dynCompileGraph(module, mlirStringRefCreateFromCString("axpy"), 3, printError, NULL);
  if (dynCompiledFunctionIsNull(axpy))
    return 1;

  float a = 2, x[4] = {1, 2, 3, 4}, y[4] = {10, 20, 30, 40}, out[4];
  void *buffers[] = {&a, x, y, out}; // inputs, then outputs
  dynCompiledFunctionRun(axpy, buffers);
  printf("axpy: %g %g %g %g\n", out[0], out[1], out[2], out[3]);

  dynCompiledFunctionDestroy(axpy);
  mlirModuleDestroy(module);
  mlirContextDestroy(ctx);
  return 0;
}
