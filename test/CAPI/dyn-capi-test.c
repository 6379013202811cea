// RUN: dyn-capi-test 2>&1 | FileCheck %s
// REQUIRES: shared-mlir

// A C program using dyn through its C API and MLIR's: dialect registration
// (all at once into a registry, one by one through a handle),
// pipelines built into a pass manager (by the builders and by name), and a
// graph compiled to a callable CPU function, with its errors reported.

#include "dyn-c/Compiler.h"
#include "dyn-c/Dialects.h"
#include "dyn-c/Passes.h"
#include "mlir-c/IR.h"
#include "mlir-c/Pass.h"

#include <stdio.h>
#include <string.h>

static void printOut(MlirStringRef text, void *userData) {
  (void)userData;
  fwrite(text.data, 1, text.length, stdout);
}

static void printOp(MlirOperation op) {
  mlirOperationPrint(op, printOut, NULL);
  printf("\n");
}

// y = relu(x @ w + b): a matmul (a runtime library call), a broadcast add and
// an elementwise op, all exact in f32 for these values.
static const char *kGraph =
    "func.func @linear_relu(%x: tensor<2x3xf32>, %w: tensor<3x2xf32>, %b: tensor<2xf32>)\n"
    "    -> tensor<2x2xf32> {\n"
    "  %0 = graph.matmul %x, %w : tensor<2x3xf32>, tensor<3x2xf32> -> tensor<2x2xf32>\n"
    "  %1 = graph.add %0, %b : tensor<2x2xf32>, tensor<2xf32> -> tensor<2x2xf32>\n"
    "  %2 = graph.relu %1 : tensor<2x2xf32> -> tensor<2x2xf32>\n"
    "  return %2 : tensor<2x2xf32>\n"
    "}\n";

static int runPipeline(MlirContext ctx, MlirModule module, int byName) {
  MlirOperation copy = mlirOperationClone(mlirModuleGetOperation(module));
  MlirPassManager pm = mlirPassManagerCreate(ctx);
  MlirOpPassManager opm = mlirPassManagerGetAsOpPassManager(pm);
  if (byName) {
    MlirLogicalResult parsed = mlirParsePassPipeline(
        opm, mlirStringRefCreateFromCString("builtin.module(dyn-cpu)"), printOut, NULL);
    if (mlirLogicalResultIsFailure(parsed))
      return 1;
  } else {
    dynBuildGraphToPrimPipeline(opm);
    dynBuildPrimToLoopPipeline(opm);
  }
  MlirLogicalResult ran = mlirPassManagerRunOnOp(pm, copy);
  printf("pipeline %s: %s\n", byName ? "dyn-cpu" : "graph-to-prim,prim-to-loop",
         mlirLogicalResultIsSuccess(ran) ? "ok" : "failed");
  printOp(copy);
  mlirPassManagerDestroy(pm);
  mlirOperationDestroy(copy);
  return mlirLogicalResultIsSuccess(ran) ? 0 : 1;
}

int main(void) {
  MlirDialectRegistry registry = mlirDialectRegistryCreate();
  dynRegisterAllDialects(registry);
  MlirContext ctx = mlirContextCreateWithRegistry(registry, /*threadingEnabled=*/false);
  mlirDialectRegistryDestroy(registry);
  dynRegisterAllPasses();
  dynRegisterAllPasses(); // idempotent

  // A dialect handle registers one dialect into a bare context.
  MlirDialectHandle graph = mlirGetDialectHandle__graph__();
  MlirStringRef ns = mlirDialectHandleGetNamespace(graph);
  MlirContext bare = mlirContextCreate();
  int before = !mlirDialectIsNull(mlirContextGetOrLoadDialect(bare, ns));
  mlirDialectHandleRegisterDialect(graph, bare);
  int after = !mlirDialectIsNull(mlirContextGetOrLoadDialect(bare, ns));
  printf("dialect handle %.*s: loadable before %d, after %d\n", (int)ns.length, ns.data, before,
         after);
  mlirContextDestroy(bare);
  // CHECK: dialect handle graph: loadable before 0, after 1

  MlirModule module = mlirModuleCreateParse(ctx, mlirStringRefCreateFromCString(kGraph));
  if (mlirModuleIsNull(module))
    return 1;
  printOp(mlirModuleGetOperation(module));
  // CHECK-LABEL: func.func @linear_relu
  // CHECK: graph.matmul

  if (runPipeline(ctx, module, /*byName=*/0))
    return 1;
  // CHECK-LABEL: pipeline graph-to-prim,prim-to-loop: ok
  // CHECK-NOT: graph.
  // CHECK: loop.kernel

  if (runPipeline(ctx, module, /*byName=*/1))
    return 1;
  // CHECK-LABEL: pipeline dyn-cpu: ok
  // CHECK-NOT: graph.
  // CHECK: llvm.func @linear_relu

  DynCompiledFunction fn = dynCompileGraph(
      module, mlirStringRefCreateFromCString("linear_relu"), 3, printOut, NULL);
  if (dynCompiledFunctionIsNull(fn))
    return 1;
  float x[6] = {1, 2, 3, -4, -5, -6};
  float w[6] = {1, 0, 0, 1, 1, 1};
  float b[2] = {0.5f, -1};
  float y[4];
  memset(y, 0, sizeof(y));
  void *buffers[4] = {x, w, b, y};
  dynCompiledFunctionRun(fn, buffers);
  printf("y = [[%g, %g], [%g, %g]]\n", y[0], y[1], y[2], y[3]);
  // x @ w = [[4, 5], [-10, -11]]; + b = [[4.5, 4], [-9.5, -12]]; relu:
  // CHECK: y = {{\[\[}}4.5, 4], [0, 0]]
  // Called again on other data.
  x[0] = -1;
  x[3] = 10;
  dynCompiledFunctionRun(fn, buffers);
  printf("y = [[%g, %g], [%g, %g]]\n", y[0], y[1], y[2], y[3]);
  // x @ w = [[2, 5], [4, -11]]; + b = [[2.5, 4], [4.5, -12]]; relu:
  // CHECK: y = {{\[\[}}2.5, 4], [4.5, 0]]
  double seconds = dynCompiledFunctionGetCompileSeconds(fn);
  printf("compile seconds plausible: %d\n", seconds > 0 && seconds < 600);
  // CHECK: compile seconds plausible: 1
  dynCompiledFunctionDestroy(fn);

  // The caller's module is left as it was.
  printOp(mlirModuleGetOperation(module));
  // CHECK-LABEL: func.func @linear_relu
  // CHECK: graph.matmul

  // Errors come back through the callback, and no function.
  printf("missing function:\n");
  fn = dynCompileGraph(module, mlirStringRefCreateFromCString("missing"), 3, printOut, NULL);
  printf("\nnull: %d\n", dynCompiledFunctionIsNull(fn));
  // CHECK-LABEL: missing function:
  // CHECK-NEXT: no function @missing in the graph
  // CHECK-NEXT: null: 1
  // A graph the pipeline rejects (no GEMM of booleans): the diagnostic keeps
  // its place in the caller's source (line 3, column 8).
  MlirModule dynamic = mlirModuleCreateParse(
      ctx, mlirStringRefCreateFromCString(
               "\nfunc.func @dynamic(%a: tensor<4x8xi1>, %b: tensor<8x2xi1>) -> tensor<4x2xi1> {\n"
               "  %0 = prim.dot_general %a, %b batch [], [] contract [1], [0] : tensor<4x8xi1>, "
               "tensor<8x2xi1> -> tensor<4x2xi1>\n"
               "  return %0 : tensor<4x2xi1>\n"
               "}\n"));
  if (mlirModuleIsNull(dynamic))
    return 1;
  printf("rejected graph:\n");
  fn = dynCompileGraph(dynamic, mlirStringRefCreateFromCString("dynamic"), 3, printOut, NULL);
  printf("\nnull: %d\n", dynCompiledFunctionIsNull(fn));
  // CHECK-LABEL: rejected graph:
  // CHECK-NEXT: stage 'loop' failed:
  // CHECK-NEXT: loc("-":3:8): error: 'prim.dot_general' op has no loop.matmul lowering
  // CHECK: null: 1
  mlirModuleDestroy(dynamic);
  fn = dynCompileGraph(module, mlirStringRefCreateFromCString("linear_relu"), 9, printOut, NULL);
  printf("\nnull: %d\n", dynCompiledFunctionIsNull(fn));
  // CHECK: optimization level 9 is not in 0-3
  // CHECK-NEXT: null: 1

  mlirModuleDestroy(module);
  mlirContextDestroy(ctx);
  printf("done\n");
  // CHECK: done
  return 0;
}
