//===- DynTblgen.h - what dyn-tblgen's backends share -----------*- C++ -*-===//
//
// The registered graph ops (Graph_RegisteredOp) and the kinds of their
// attributes, for the backends in dyn-tblgen.cpp and AtenCalls.cpp.
//
//===----------------------------------------------------------------------===//
#ifndef DYN_TBLGEN_H
#define DYN_TBLGEN_H

#include "mlir/TableGen/Attribute.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/TableGen/Record.h"

#include <string>
#include <vector>

namespace dyn_tblgen {

/// The registered ops in definition order (the order of the .td files).
std::vector<const llvm::Record *> registeredOps(const llvm::RecordKeeper &records);

/// An attribute's kind: f64, i64, bool, unit, i64_array, f64_array or str
/// (how capture converts a value to it, and how a library call encodes it).
std::string attrKind(const mlir::tblgen::Attribute &attr);

/// -gen-aten-calls (AtenCalls.cpp).
bool emitAtenCalls(llvm::raw_ostream &os, const llvm::RecordKeeper &records);

} // namespace dyn_tblgen

#endif // DYN_TBLGEN_H
