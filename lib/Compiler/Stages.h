//===- Stages.h - what the CPU and GPU compilers share ----------*- C++ -*-===//
#ifndef DYN_COMPILER_STAGES_H
#define DYN_COMPILER_STAGES_H

#include "dyn/Compiler/Compiler.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/Support/raw_ostream.h"

#include <optional>
#include <string>
#include <vector>

namespace dyn::detail {

/// Every dialect and extension the pipelines use.
const mlir::DialectRegistry &registry();
/// Registers dyn's passes and pipelines once (pipeline text names them).
void ensurePassesRegistered();

/// Collects a context's diagnostics as located text.
struct DiagnosticCollector {
  std::string text;
  /// `what`, followed by the collected diagnostics, into `*error` (if given).
  void report(const std::string &what, std::string *error) const {
    if (error)
      *error = what + (text.empty() ? "" : ":\n" + text);
  }
  mlir::ScopedDiagnosticHandler handler;
  explicit DiagnosticCollector(mlir::MLIRContext &ctx)
      : handler(&ctx, [this](mlir::Diagnostic &diag) {
          llvm::raw_string_ostream os(text);
          os << diag.getLocation() << ": ";
          switch (diag.getSeverity()) {
          case mlir::DiagnosticSeverity::Error: os << "error: "; break;
          case mlir::DiagnosticSeverity::Warning: os << "warning: "; break;
          default: os << "note: "; break;
          }
          os << diag << "\n";
          for (mlir::Diagnostic &note : diag.getNotes())
            os << note.getLocation() << ": note: " << note << "\n";
          return mlir::success();
        }) {}
};

/// The graph text as a module, or null with an error diagnostic.
mlir::OwningOpRef<mlir::ModuleOp> parseGraph(const std::string &graphIR, mlir::MLIRContext &ctx);
std::string print(mlir::ModuleOp module);
/// What the stages decided about a function's buffers, for its caller.
struct BufferFacts {
  std::vector<int64_t> inPlace;             // dyn.in_place: (output, input) pairs
  std::vector<int64_t> channelsLastResults; // dyn.channels_last_results: results written [N, *spatial, C]
};

/// Runs the CPU (or GPU) pipeline's stages up to (not including) `stopBefore`,
/// recording the IR after each when asked; returns the failing stage's name.
std::optional<std::string> runStages(mlir::ModuleOp module, llvm::StringRef stopBefore, bool keep,
                                     std::vector<StageIR> &stages, BufferFacts &facts, bool gpu = false);

} // namespace dyn::detail

#endif // DYN_COMPILER_STAGES_H
