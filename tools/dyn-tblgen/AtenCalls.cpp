//===- AtenCalls.cpp - -gen-aten-calls: the library ops' ATen glue --------===//
//
// From each library op's record (Dyn_LibraryCall lowering, GraphLibraryOps.td)
// the torch runtime's glue (python/src/aten_calls.cpp):
//
//   GEN_ATEN_INCLUDES the ATen headers of the functions the expressions call;
//   GEN_ATEN_PARAMS  per callee, a struct of the call's parameters, typed and
//                    named as the op's attributes and decoded in their
//                    declaration order: the order GraphToPrim/LibraryCalls.cpp
//                    encodes them in (an i64, a bool, an f64's bits, an i64
//                    array or a string, each with its length first);
//   GEN_ATEN_CALLS   per callee, its registration: the op's `aten` expression
//                    (`$operand` is the operand's tensor, `$attr` the decoded
//                    parameter) stored into the call's outputs, or, without
//                    one, the hand-written body `void camelCallee(Args &,
//                    const CalleeParams &)` of aten_calls.cpp, which must exist
//                    with that signature for the extension to compile.
//
// Ops that share a callee must share its parameters; the runtime checks that
// a call gets the op's operand count and that its body reads every parameter.
//
//===----------------------------------------------------------------------===//
#include "DynTblgen.h"

#include "mlir/TableGen/Operator.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/TableGen/Error.h"
#include "llvm/TableGen/TableGenBackend.h"

#include <map>
#include <set>

using namespace llvm;

namespace {

/// fft_real -> FftReal (upperFirst) or fftReal.
std::string camel(StringRef snake, bool upperFirst) {
  std::string out;
  bool up = upperFirst;
  for (char c : snake) {
    if (c == '_') {
      up = true;
      continue;
    }
    out += up ? toUpper(c) : c;
    up = false;
  }
  return out;
}

struct Param {
  std::string name, type, read;
  bool operator==(const Param &o) const { return name == o.name && type == o.type; }
};

/// The C++ type of an attribute's parameter and the Args call that decodes it.
Param param(const Record *def, const mlir::tblgen::NamedAttribute &attr) {
  std::string kind = dyn_tblgen::attrKind(attr.attr);
  std::string name = attr.name.str();
  if (kind == "i64")
    return {name, "int64_t", "a.i()"};
  if (kind == "bool" || kind == "unit")
    return {name, "bool", "a.b()"};
  if (kind == "f64")
    return {name, "double", "a.f()"};
  if (kind == "str")
    return {name, "std::string", "a.s()"};
  if (kind == "i64_array")
    return {name, "std::vector<int64_t>", "a.ints()"};
  PrintFatalError(def->getLoc(), "dyn-tblgen: attribute " + name + " (" + kind +
                                     ") has no library-call parameter encoding");
}

struct Callee {
  const Record *first = nullptr;
  std::vector<std::string> ops;
  std::vector<Param> params;
  int numInputs = 0; // -1: ops sharing the callee differ
  std::string aten;  // the call's expression with $names substituted, or empty: hand-written
};

/// `aten` with $operand -> a.in[k] and $attr -> p.attr; an unknown name is a located error.
std::string substitute(const Record *def, const mlir::tblgen::Operator &op, StringRef aten) {
  std::string out;
  for (size_t i = 0; i < aten.size();) {
    if (aten[i] != '$') {
      out += aten[i++];
      continue;
    }
    size_t end = i + 1;
    while (end < aten.size() && (isAlnum(aten[end]) || aten[end] == '_'))
      ++end;
    StringRef name = aten.slice(i + 1, end);
    std::string replaced;
    for (int k = 0; k < op.getNumOperands(); ++k)
      if (op.getOperand(k).name == name)
        replaced = "a.in[" + std::to_string(k) + "]";
    for (int k = 0; k < op.getNumNativeAttributes(); ++k)
      if (op.getAttribute(k).name == name)
        replaced = "p." + name.str();
    if (replaced.empty())
      PrintFatalError(def->getLoc(), "dyn-tblgen: `aten` names $" + name.str() + ", which is no operand or "
                                         "attribute of " + op.getOperationName());
    out += replaced;
    i = end;
  }
  return out;
}

} // namespace

bool dyn_tblgen::emitAtenCalls(raw_ostream &os, const RecordKeeper &records) {
  emitSourceFileHeader("ATen glue of the library calls (dyn-tblgen)", os, records);
  std::map<std::string, Callee> callees;
  std::vector<std::string> order;
  for (const Record *def : registeredOps(records)) {
    const Record *lowering = def->getValueAsDef("lowering");
    if (lowering->getValueAsString("kind") != "library")
      continue;
    mlir::tblgen::Operator op(def);
    std::string name = lowering->getValueAsString("pattern").str();
    if (op.getNumVariableLengthOperands())
      PrintFatalError(def->getLoc(), "dyn-tblgen: a library op's operands are one tensor each");
    std::vector<Param> params;
    for (int k = 0; k < op.getNumNativeAttributes(); ++k)
      params.push_back(param(def, op.getAttribute(k)));
    StringRef aten = def->getValue("aten") ? def->getValueAsString("aten") : StringRef();
    std::string call = aten.empty() ? "" : substitute(def, op, aten);
    auto [it, fresh] = callees.try_emplace(name);
    Callee &c = it->second;
    if (fresh) {
      order.push_back(name);
      c = {def, {}, params, op.getNumOperands(), call};
    } else {
      if (params != c.params)
        PrintFatalError(def->getLoc(), "dyn-tblgen: library call `" + name + "` is also " +
                                           c.first->getName().str() + "'s, with other attributes");
      if (call != c.aten)
        PrintFatalError(def->getLoc(), "dyn-tblgen: library call `" + name + "` has another `aten` in " +
                                           c.first->getName().str());
      if (c.numInputs != op.getNumOperands()) {
        if (!call.empty())
          PrintFatalError(def->getLoc(), "dyn-tblgen: library call `" + name +
                                             "` takes varying operands: a hand-written body, not `aten`");
        c.numInputs = -1;
      }
    }
    c.ops.push_back("graph." + def->getValueAsString("opName").str());
  }

  // The ATen functions the expressions call (at::name(...)): their headers.
  std::set<std::string> headers;
  for (const std::string &name : order) {
    StringRef rest = callees[name].aten;
    for (size_t at; (at = rest.find("at::")) != StringRef::npos;) {
      rest = rest.drop_front(at + 4);
      StringRef fn = rest.take_while([](char c) { return isAlnum(c) || c == '_'; });
      if (!fn.empty() && !isUpper(fn.front()) && rest.drop_front(fn.size()).starts_with("("))
        headers.insert(fn.str());
    }
  }
  os << "#ifdef GEN_ATEN_INCLUDES\n";
  for (const std::string &h : headers)
    os << "#include <ATen/ops/" << h << ".h>\n";
  os << "#undef GEN_ATEN_INCLUDES\n#endif\n\n";

  os << "#ifdef GEN_ATEN_PARAMS\n";
  for (const std::string &name : order) {
    const Callee &c = callees[name];
    std::string type = camel(name, true) + "Params";
    os << "/// The parameters of library call `" << name << "` (" << join(c.ops, ", ") << ").\n"
       << "struct " << type << " {\n";
    for (const Param &p : c.params)
      os << "  " << p.type << " " << p.name << ";\n";
    os << "  explicit " << type << "(Args &" << (c.params.empty() ? "" : "a") << ")";
    for (size_t k = 0; k < c.params.size(); ++k)
      os << (k ? ", " : " : ") << c.params[k].name << "(" << c.params[k].read << ")";
    os << " {}\n};\n";
  }
  os << "#undef GEN_ATEN_PARAMS\n#endif\n\n";

  os << "#ifdef GEN_ATEN_CALLS\n";
  for (const std::string &name : order) {
    const Callee &c = callees[name];
    std::string type = camel(name, true) + "Params";
    os << "defineCall<" << type << ">(\"" << name << "\", " << c.numInputs << ", ";
    if (c.aten.empty())
      os << "&" << camel(name, false) << ");\n";
    else
      os << "[](Args &a, const " << type << " &" << (StringRef(c.aten).contains("p.") ? "p" : "") << ") {\n  store(a.call, "
         << c.aten << ");\n});\n";
  }
  os << "#undef GEN_ATEN_CALLS\n#endif\n";
  return false;
}
