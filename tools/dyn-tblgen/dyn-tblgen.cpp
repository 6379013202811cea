//===- dyn-tblgen.cpp - TableGen backends of dyn's op registry ------------===//
//
// Reads the graph ops derived from Graph_RegisteredOp
// (include/dyn/Dialect/Graph/IR/GraphOpRegistry.td) and generates:
//
//   -gen-graph-to-prim-table  the GraphToPrim pattern registrations, one
//                             GEN_<FAMILY>_PATTERNS section per pattern file
//                             (as Triton's ElementwiseOpConversion tables);
//   -gen-prim-math-table      the prim ops that lower to one math/arith op
//                             (PrimToLoop's scalar emission);
//   -gen-graph-derivatives    the reverse-mode rules of GraphDerivatives.td as
//                             C++ builders and their dispatch
//                             (dyn-graph-autodiff);
//   -gen-ops-py               python/dyn/_ops_generated.py;
//   -gen-ops-doc              the op list of docs/ops.md;
//   -gen-aten-calls           the library calls' typed parameters and ATen
//                             calls (AtenCalls.cpp).
//
// A light TU on purpose: LLVM's TableGen records and MLIR's Operator view.
//
//===----------------------------------------------------------------------===//
#include "mlir/TableGen/Argument.h"
#include "mlir/TableGen/Operator.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/TableGen/Error.h"
#include "llvm/TableGen/Main.h"
#include "llvm/TableGen/Record.h"
#include "llvm/TableGen/TableGenBackend.h"

#include "DynTblgen.h"

#include <map>
#include <set>

using namespace llvm;

std::vector<const Record *> dyn_tblgen::registeredOps(const RecordKeeper &records) {
  std::vector<const Record *> ops;
  if (!records.getClass("Graph_RegisteredOp"))
    return ops;
  for (const Record *r : records.getAllDerivedDefinitions("Graph_RegisteredOp"))
    ops.push_back(r);
  llvm::sort(ops, [](const Record *a, const Record *b) { return a->getID() < b->getID(); });
  return ops;
}

std::string dyn_tblgen::attrKind(const mlir::tblgen::Attribute &attr) {
  mlir::tblgen::Attribute base = attr;
  while (base.getDef().isSubClassOf("DefaultValuedAttr") || base.getDef().isSubClassOf("OptionalAttr"))
    base = base.getBaseAttr();
  StringRef name = base.getDef().getName();
  if (name == "F64Attr" || name == "F32Attr")
    return "f64";
  if (name == "I64Attr" || name == "SI64Attr")
    return "i64";
  if (name == "BoolAttr")
    return "bool";
  if (name == "UnitAttr")
    return "unit";
  if (name == "DenseI64ArrayAttr")
    return "i64_array";
  if (name == "DenseF64ArrayAttr")
    return "f64_array";
  if (name == "StrAttr")
    return "str";
  if (base.getDef().isSubClassOf("EnumAttrInfo"))
    return "enum";
  if (name == "ElementsAttr")
    return "elements";
  PrintFatalError(attr.getDef().getLoc(), "dyn-tblgen: attribute kind " + name.str() +
                                              " has no Python form (add it to attrKind)");
}

namespace {

using dyn_tblgen::attrKind;
using dyn_tblgen::registeredOps;

enum Action { GenGraphToPrim, GenPrimMath, GenDerivatives, GenPython, GenDoc, GenAtenCalls };

cl::opt<Action> action(
    cl::desc("what to generate"),
    cl::values(clEnumValN(GenGraphToPrim, "gen-graph-to-prim-table",
                          "GraphToPrim pattern registrations"),
               clEnumValN(GenPrimMath, "gen-prim-math-table",
                          "prim ops lowered to one scalar op"),
               clEnumValN(GenDerivatives, "gen-graph-derivatives",
                          "reverse-mode rules as C++ builders"),
               clEnumValN(GenPython, "gen-ops-py", "python/dyn/_ops_generated.py"),
               clEnumValN(GenDoc, "gen-ops-doc", "the op list of docs/ops.md"),
               clEnumValN(GenAtenCalls, "gen-aten-calls",
                          "the library calls' ATen glue (python/src/aten_calls.cpp)")));

cl::opt<std::string> sourceName("source-name",
                                cl::desc("the .td path named in the generated header"),
                                cl::init("include/dyn/Dialect/Graph/IR/GraphOps.td"));

std::string pyString(StringRef s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\')
      out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out + "\"";
}

std::string upper(StringRef s) { return s.upper(); }

/// A Python tuple of already-formatted items.
std::string pyTuple(ArrayRef<std::string> items) {
  if (items.size() == 1)
    return "(" + items[0] + ",)";
  return "(" + llvm::join(items, ", ") + ")";
}

std::string lowering(const Record *op) {
  const Record *l = op->getValueAsDef("lowering");
  StringRef kind = l->getValueAsString("kind");
  if (kind == "prim")
    return "prim::" + l->getValueAsString("primOp").str() + " (" +
           l->getValueAsString("pattern").str() + ")";
  if (kind == "composite")
    return l->getValueAsString("pattern").str() + " (GraphToPrim/" +
           l->getValueAsString("family").str() + ".cpp)";
  if (kind == "library") {
    std::string call = "library call `" + l->getValueAsString("pattern").str() + "`";
    StringRef aten = op->getValue("aten") ? op->getValueAsString("aten") : StringRef();
    return aten.empty() ? call : call + " (`" + aten.split('(').first.str() + "`)";
  }
  return kind.str();
}

//===----------------------------------------------------------------------===//
// -gen-graph-to-prim-table
//===----------------------------------------------------------------------===//

bool emitGraphToPrim(raw_ostream &os, const RecordKeeper &records) {
  emitSourceFileHeader("GraphToPrim pattern registrations (dyn-tblgen)", os, records);
  std::map<std::string, std::vector<std::string>> byFamily;
  for (const Record *def : registeredOps(records)) {
    mlir::tblgen::Operator op(def);
    const Record *l = def->getValueAsDef("lowering");
    StringRef kind = l->getValueAsString("kind");
    std::string family = upper(l->getValueAsString("family"));
    std::string graphOp = "::dyn::graph::" + op.getCppClassName().str();
    if (kind == "prim")
      byFamily[family].push_back(l->getValueAsString("pattern").str() + "<" + graphOp +
                                 ", ::dyn::prim::" + l->getValueAsString("primOp").str() + ">");
    else if (kind == "composite" && !llvm::is_contained(byFamily[family], l->getValueAsString("pattern")))
      byFamily[family].push_back(l->getValueAsString("pattern").str());
    else if (kind == "library") {
      // The graph op becomes prim.library_call of the callee, its attributes
      // (in declaration order) the call's parameters.
      std::string attrs;
      for (int i = 0; i < op.getNumNativeAttributes(); ++i)
        attrs += (i ? ", \"" : "\"") + op.getAttribute(i).name.str() + "\"";
      byFamily[family].push_back("LibraryCallToPrim>(patterns.getContext(), " + graphOp +
                                 "::getOperationName(), \"" + l->getValueAsString("pattern").str() +
                                 "\", ::llvm::ArrayRef<::llvm::StringRef>{" + attrs + "}, " +
                                 (l->getValueAsBit("stridedOperands") ? "true" : "false"));
    }
  }
  for (auto &[family, patterns] : byFamily) {
    os << "#ifdef GEN_" << family << "_PATTERNS\n";
    for (const std::string &p : patterns)
      if (StringRef(p).starts_with("LibraryCallToPrim>"))
        os << "patterns.add<" << p << ");\n";
      else
        os << "patterns.add<" << p << ">(patterns.getContext());\n";
    os << "#undef GEN_" << family << "_PATTERNS\n#endif\n\n";
  }
  return false;
}

//===----------------------------------------------------------------------===//
// -gen-prim-math-table
//===----------------------------------------------------------------------===//

// PRIM_MATH(PrimOp, FloatOp): prim ops with a `mathOp` lowering to one op on
// floats, for PrimToLoop's TypeSwitch.
bool emitPrimMath(raw_ostream &os, const RecordKeeper &records) {
  emitSourceFileHeader("prim ops lowered to one scalar op (dyn-tblgen)", os, records);
  os << "#ifndef PRIM_MATH\n#error define PRIM_MATH(PrimOp, ScalarOp)\n#endif\n";
  std::vector<const Record *> ops;
  for (const Record *r : records.getAllDerivedDefinitions("Op"))
    if (r->getValue("mathOp") && !r->getValueAsString("mathOp").empty())
      ops.push_back(r);
  llvm::sort(ops, [](const Record *a, const Record *b) { return a->getID() < b->getID(); });
  for (const Record *r : ops) {
    mlir::tblgen::Operator op(r);
    os << "PRIM_MATH(" << op.getCppClassName() << ", " << r->getValueAsString("mathOp") << ")\n";
  }
  os << "#undef PRIM_MATH\n";
  return false;
}

//===----------------------------------------------------------------------===//
// -gen-graph-derivatives
//===----------------------------------------------------------------------===//

/// The derivative records (Graph_Derivative, Graph_DerivativeFn) by graph op.
std::map<const Record *, const Record *> derivativesByOp(const RecordKeeper &records) {
  std::map<const Record *, const Record *> out;
  for (StringRef cls : {"Graph_Derivative", "Graph_DerivativeFn"}) {
    if (!records.getClass(cls))
      continue;
    for (const Record *r : records.getAllDerivedDefinitions(cls)) {
      const Record *op = r->getValueAsDef("op");
      if (!out.emplace(op, r).second)
        PrintFatalError(r->getLoc(), "dyn-tblgen: a second derivative of " + op->getName().str());
    }
  }
  return out;
}

/// C++ that builds one DAG node's value (DerivativeBuilder `b`, the op `op`,
/// the cotangent `grad`).
std::string derivativeExpr(const Record *rule, const mlir::tblgen::Operator &target, const Init *node,
                           StringRef argName) {
  if (!isa<DagInit>(node)) {
    if (!isa<UnsetInit>(node) || argName.empty())
      PrintFatalError(rule->getLoc(), "dyn-tblgen: a derivative leaf must be $name");
    if (argName == "grad")
      return "grad";
    if (argName == "result")
      return "op->getResult(0)";
    for (int i = 0; i < target.getNumOperands(); ++i)
      if (target.getOperand(i).name == argName) {
        if (target.getOperand(i).isVariableLength())
          PrintFatalError(rule->getLoc(), "dyn-tblgen: $" + argName.str() +
                                              " is optional or variadic (use Graph_DerivativeFn)");
        return "op->getOperand(" + std::to_string(i) + ")";
      }
    PrintFatalError(rule->getLoc(), "dyn-tblgen: $" + argName.str() + " is no operand of " +
                                        target.getOperationName());
  }
  const auto *dag = cast<DagInit>(node);
  const Record *callee = cast<DefInit>(dag->getOperator())->getDef();
  std::vector<std::string> args;
  for (unsigned i = 0; i < dag->getNumArgs(); ++i)
    args.push_back(derivativeExpr(rule, target, dag->getArg(i), dag->getArgNameStr(i)));
  std::string list = "{" + llvm::join(args, ", ") + "}";
  if (callee->isSubClassOf("Const"))
    return "b.constant(grad, " + callee->getValueAsString("literal").str() + ")";
  if (callee->isSubClassOf("Dyn_DerivFn")) {
    StringRef fn = callee->getValueAsString("fn");
    if (fn.empty())
      PrintFatalError(rule->getLoc(), "dyn-tblgen: " + callee->getName().str() + " stands only for a whole gradient");
    return "b." + fn.str() + "(op, grad, " + list + ")";
  }
  if (callee->isSubClassOf("Graph_RegisteredOp")) {
    mlir::tblgen::Operator built(callee);
    if (built.getNumNativeAttributes() || built.getNumVariableLengthOperands() ||
        built.getNumOperands() != static_cast<int>(args.size()))
      PrintFatalError(rule->getLoc(), "dyn-tblgen: " + callee->getName().str() +
                                          " in a derivative needs every operand and no attribute");
    return "b.build<" + built.getQualCppClassName() + ">(\"" +
           callee->getValueAsDef("shapeRule")->getValueAsString("name").str() + "\", \"" +
           callee->getValueAsDef("typeRule")->getValueAsString("name").str() + "\", " + list + ")";
  }
  PrintFatalError(rule->getLoc(), "dyn-tblgen: " + callee->getName().str() +
                                      " is neither a registered graph op nor a Dyn_DerivFn");
}

bool emitDerivatives(raw_ostream &os, const RecordKeeper &records) {
  emitSourceFileHeader("reverse-mode rules of the graph ops (dyn-tblgen)", os, records);
  std::vector<std::pair<const Record *, const Record *>> rules;
  for (auto &[op, rule] : derivativesByOp(records))
    rules.push_back({op, rule});
  llvm::sort(rules, [](auto &a, auto &b) { return a.second->getID() < b.second->getID(); });
  for (auto &[opDef, rule] : rules) {
    mlir::tblgen::Operator op(opDef);
    os << "// " << op.getOperationName() << "\n";
    os << "static void derive_" << op.getCppClassName() << "(DerivativeBuilder &b, ::mlir::Operation *op, "
       << "::mlir::Value grad, ::llvm::SmallVectorImpl<::mlir::Value> &grads) {\n";
    os << "  grads.assign(op->getNumOperands(), ::mlir::Value());\n";
    if (rule->isSubClassOf("Graph_DerivativeFn")) {
      os << "  b." << rule->getValueAsString("fn") << "(op, grad, grads);\n}\n\n";
      continue;
    }
    std::vector<const Init *> grads;
    for (const Init *g : rule->getValueAsListInit("grads")->getElements())
      grads.push_back(g);
    if (static_cast<int>(grads.size()) != op.getNumOperands() || op.getNumVariableLengthOperands())
      PrintFatalError(rule->getLoc(), "dyn-tblgen: one gradient DAG per operand of " +
                                          op.getOperationName() + " (variadic or optional: Graph_DerivativeFn)");
    for (size_t i = 0; i < grads.size(); ++i) {
      const auto *dag = dyn_cast<DagInit>(grads[i]);
      if (!dag)
        PrintFatalError(rule->getLoc(), "dyn-tblgen: a gradient must be a DAG");
      const Record *callee = cast<DefInit>(dag->getOperator())->getDef();
      if (callee->getName() == "NoGrad")
        continue;
      if (callee->getName() == "NotDifferentiable") {
        os << "  if (b.wants(op, " << i << "))\n    b.notDifferentiable(op, " << i << ");\n";
        continue;
      }
      os << "  if (b.wants(op, " << i << "))\n    grads[" << i
         << "] = " << derivativeExpr(rule, op, dag, "") << ";\n";
    }
    os << "}\n\n";
  }
  os << "/// The gradients of op's operands from its result's cotangent; false when\n"
     << "/// the op has no derivative rule.\n"
     << "static bool deriveOp(DerivativeBuilder &b, ::mlir::Operation *op, ::mlir::Value grad,\n"
     << "                     ::llvm::SmallVectorImpl<::mlir::Value> &grads) {\n";
  for (auto &[opDef, rule] : rules) {
    mlir::tblgen::Operator op(opDef);
    os << "  if (::llvm::isa<" << op.getQualCppClassName() << ">(op))\n    return derive_"
       << op.getCppClassName() << "(b, op, grad, grads), true;\n";
  }
  os << "  return false;\n}\n";
  return false;
}

/// What the registry says of an op's derivative (the Python table's and the
/// docs' `derivative`): "rule", "builder `fn`" or "".
std::string derivativeKind(const std::map<const Record *, const Record *> &rules, const Record *op) {
  auto it = rules.find(op);
  if (it == rules.end())
    return "";
  if (it->second->isSubClassOf("Graph_DerivativeFn"))
    return "builder " + it->second->getValueAsString("fn").str();
  return "rule";
}

//===----------------------------------------------------------------------===//
// -gen-ops-py
//===----------------------------------------------------------------------===//

/// The op's assembly format as a Python tuple of tokens, for the Python
/// printer (python/dyn/graph/mlir.py): ("lit", text), ("operand", name),
/// ("attr", name), ("attrs",) for attr-dict, ("operands",), ("type", name),
/// ("types", "operands" | "results"), ("functional",) and
/// ("opt", anchor, (tokens...)) for an optional group.
class FormatTokens {
public:
  FormatTokens(const Record *def, const mlir::tblgen::Operator &op, StringRef text)
      : def(def), op(op), text(text) {}

  std::string parse() {
    if (text.trim().empty())
      fail("a registered op needs one (python/dyn/graph/mlir.py prints the op by it)");
    std::string out = group(/*nested=*/false);
    skipSpace();
    if (pos != text.size())
      fail("unexpected `" + text.substr(pos, 10).str() + "`");
    return out;
  }

private:
  const Record *def;
  const mlir::tblgen::Operator &op;
  StringRef text;
  size_t pos = 0;
  std::string anchor;

  [[noreturn]] void fail(const std::string &why) {
    PrintFatalError(def->getLoc(), "dyn-tblgen: assembly format of the Python printer: " + why);
  }
  void skipSpace() {
    while (pos < text.size() && isspace(static_cast<unsigned char>(text[pos])))
      ++pos;
  }
  bool take(StringRef word) {
    skipSpace();
    if (!text.substr(pos).starts_with(word))
      return false;
    pos += word.size();
    return true;
  }
  std::string identifier() {
    size_t start = pos;
    while (pos < text.size() && (isalnum(static_cast<unsigned char>(text[pos])) || text[pos] == '_'))
      ++pos;
    return text.slice(start, pos).str();
  }
  std::string kindOf(const std::string &name) {
    for (int i = 0; i < op.getNumOperands(); ++i)
      if (op.getOperand(i).name == name)
        return "operand";
    for (int i = 0; i < op.getNumNativeAttributes(); ++i)
      if (op.getAttribute(i).name == name)
        return "attr";
    fail("$" + name + " is no operand or attribute");
  }
  // `$x`, `operands` or `results` inside type(...)
  std::string typeArg() {
    if (take("$"))
      return "(\"type\", " + pyString(identifier()) + ")";
    if (take("operands"))
      return "(\"types\", \"operands\")";
    if (take("results"))
      return "(\"types\", \"results\")";
    fail("type() of something other than $x, operands or results");
  }
  std::string group(bool nested) {
    std::vector<std::string> tokens;
    while (true) {
      skipSpace();
      if (pos >= text.size() || (nested && text[pos] == ')'))
        break;
      if (text[pos] == '`') {
        size_t close = text.find('`', pos + 1);
        if (close == StringRef::npos)
          fail("unbalanced `");
        tokens.push_back("(\"lit\", " + pyString(text.slice(pos + 1, close)) + ")");
        pos = close + 1;
      } else if (take("$")) {
        std::string name = identifier();
        tokens.push_back("(" + pyString(kindOf(name)) + ", " + pyString(name) + ")");
        if (take("^"))
          anchor = name;
      } else if (take("attr-dict-with-keyword") || take("attr-dict")) {
        tokens.push_back("(\"attrs\",)");
      } else if (take("functional-type")) {
        if (!take("(") || !take("operands") || !take(",") || !take("results") || !take(")"))
          fail("functional-type of something other than (operands, results)");
        tokens.push_back("(\"functional\",)");
      } else if (take("type")) {
        if (!take("("))
          fail("type without (");
        tokens.push_back(typeArg());
        if (!take(")"))
          fail("type() of more than one thing");
      } else if (take("operands")) {
        tokens.push_back("(\"operands\",)");
      } else if (take("(")) {
        std::string saved = anchor;
        anchor.clear();
        std::string inner = group(/*nested=*/true);
        if (!take(")") || !take("?"))
          fail("a group that is not optional, `(...)?`");
        if (anchor.empty())
          fail("an optional group without an anchor `^`");
        tokens.push_back("(\"opt\", " + pyString(anchor) + ", " + inner + ")");
        anchor = saved;
      } else {
        fail("`" + text.substr(pos, 20).str() + "` (add it to FormatTokens)");
      }
    }
    return pyTuple(tokens);
  }
};

/// An attribute's default value as a Python literal (DefaultValuedAttr), or None.
std::string attrDefault(const mlir::tblgen::Attribute &attr) {
  if (!attr.hasDefaultValue())
    return "None";
  std::string kind = attrKind(attr);
  StringRef v = attr.getDefaultValue().trim();
  if (kind == "f64" || kind == "i64")
    return v.str();
  if (kind == "bool")
    return v == "true" ? "True" : "False";
  return "None";
}

/// Each attribute's default value (None where it has none).
std::string defaults(const mlir::tblgen::Operator &op) {
  std::vector<std::string> values;
  for (int i = 0; i < op.getNumNativeAttributes(); ++i)
    values.push_back(attrDefault(op.getAttribute(i).attr));
  return values.empty() ? "()" : pyTuple(values);
}

/// "", "optional" or "variadic" per operand.
std::string operandKinds(const mlir::tblgen::Operator &op) {
  std::vector<std::string> kinds;
  for (int i = 0; i < op.getNumOperands(); ++i) {
    const mlir::tblgen::NamedTypeConstraint &o = op.getOperand(i);
    kinds.push_back(pyString(o.isOptional() ? "optional" : o.isVariadic() ? "variadic" : ""));
  }
  return kinds.empty() ? "()" : pyTuple(kinds);
}

/// `template` with {name} replaced by `subst[name]`; {dtype} included.
std::string substitute(const Record *def, StringRef tmpl, const std::map<std::string, std::string> &subst) {
  std::string out;
  size_t i = 0;
  while (i < tmpl.size()) {
    if (tmpl[i] == '{') {
      size_t close = tmpl.find('}', i);
      if (close == StringRef::npos)
        PrintFatalError(def->getLoc(), "dyn-tblgen: unbalanced { in eager");
      std::string name = tmpl.slice(i + 1, close).str();
      auto it = subst.find(name);
      if (it == subst.end())
        PrintFatalError(def->getLoc(), "dyn-tblgen: eager names {" + name +
                                           "}, which is no operand or attribute of the op");
      out += it->second;
      i = close + 1;
    } else {
      out += tmpl[i++];
    }
  }
  return out;
}

bool emitPython(raw_ostream &os, const RecordKeeper &records) {
  std::vector<const Record *> ops = registeredOps(records);
  // Every graph op is a registry record: Python prints and runs ops from it alone.
  if (records.getClass("Graph_Op"))
    for (const Record *r : records.getAllDerivedDefinitions("Graph_Op"))
      if (!r->isSubClassOf("Graph_RegisteredOp"))
        PrintFatalError(r->getLoc(), "dyn-tblgen: graph op " + r->getName().str() +
                                         " is not a Graph_RegisteredOp (every graph op is in the registry)");
  std::map<const Record *, const Record *> rules = derivativesByOp(records);
  os << "\"\"\"generated by dyn-tblgen from " << sourceName << "; do not edit.\n\n"
     << "The graph dialect's registered ops (include/dyn/Dialect/Graph/IR/GraphOpRegistry.td): for each, its\n"
     << "operands and attributes, the PyTorch callables capture maps to it, its type and shape rules, its lowering,\n"
     << "and its semantics as one eager function (EAGER; EXPR is the same expression as a template for the eager\n"
     << "backend's generated code). Ops with a `signature` have a generated capture handler (HANDLERS). Regenerate\n"
     << "with `ninja -C build dyn-update-generated`.\"\"\"\n"
     << "import collections\n\nimport torch\nimport torch.nn.functional as F\n\n"
     << "from . import _eager_support as _rt\n\n"
     << "OpDef = collections.namedtuple(\"OpDef\", \"name family operands attrs torch_names signature type_rule \"\n"
     << "                               \"shape_rule lowering derivative operand_kinds defaults format view\")\n\n";
  os << "OPS = {\n";
  std::map<std::string, std::vector<std::string>> families;
  std::vector<std::string> familyOrder;
  for (const Record *def : ops) {
    mlir::tblgen::Operator op(def);
    std::string name = def->getValueAsString("opName").str();
    std::string family = def->getValueAsString("family").str();
    if (!families.count(family))
      familyOrder.push_back(family);
    families[family].push_back(name);
    std::vector<std::string> operands, attrs, torchNames;
    for (int i = 0; i < op.getNumOperands(); ++i)
      operands.push_back(pyString(op.getOperand(i).name));
    for (int i = 0; i < op.getNumNativeAttributes(); ++i)
      attrs.push_back("(" + pyString(op.getAttribute(i).name) + ", " +
                      pyString(attrKind(op.getAttribute(i).attr)) + ")");
    for (StringRef t : def->getValueAsListOfStrings("torchNames"))
      torchNames.push_back(pyString(t));
    os << "    " << pyString(name) << ": OpDef(\n        " << pyString(name) << ", " << pyString(family)
       << ", " << pyTuple(operands) << ", " << pyTuple(attrs) << ",\n        " << pyTuple(torchNames) << ", "
       << pyString(def->getValueAsString("signature")) << ",\n        "
       << pyString(def->getValueAsDef("typeRule")->getValueAsString("name")) << ", "
       << pyString(def->getValueAsDef("shapeRule")->getValueAsString("name")) << ", "
       << pyString(lowering(def)) << ", " << pyString(derivativeKind(rules, def)) << ",\n        "
       << operandKinds(op) << ", " << defaults(op) << ",\n        "
       << FormatTokens(def, op, def->getValueAsString("assemblyFormat")).parse() << ",\n        "
       << (def->getValueAsBit("eagerView") ? "True" : "False") << "),\n";
  }
  os << "}\n\n";
  os << "# op names by family, in registry order\nFAMILIES = {\n";
  for (const std::string &f : familyOrder) {
    std::vector<std::string> names;
    for (const std::string &n : families[f])
      names.push_back(pyString(n));
    os << "    " << pyString(f) << ": " << pyTuple(names) << ",\n";
  }
  os << "}\n\n";

  // EXPR templates and EAGER functions: one expression per op.
  os << "# each op's semantics over its operands, attributes and result dtype ({dtype})\nEXPR = {\n";
  for (const Record *def : ops) {
    StringRef eager = def->getValueAsString("eager");
    if (eager.empty())
      PrintFatalError(def->getLoc(), "dyn-tblgen: registered op without `eager`");
    os << "    " << pyString(def->getValueAsString("opName")) << ": " << pyString(eager) << ",\n";
  }
  os << "}\n\n";
  for (const Record *def : ops) {
    mlir::tblgen::Operator op(def);
    // dtype, shape and device: the result's; capture: the node's capture-time details (eager's own random
    // draws need them, python/dyn/graph/eager.py)
    std::map<std::string, std::string> subst{
        {"dtype", "dtype"}, {"shape", "shape"}, {"device", "device"}, {"capture", "capture"}};
    std::string params;
    for (int i = 0; i < op.getNumOperands(); ++i) {
      std::string n = op.getOperand(i).name.str();
      subst[n] = n;
      params += n + ", ";
    }
    for (int i = 0; i < op.getNumNativeAttributes(); ++i) {
      std::string n = op.getAttribute(i).name.str();
      subst[n] = n;
      params += n + ", ";
    }
    os << "\ndef _" << def->getValueAsString("opName") << "(" << params
       << "*, dtype, shape=None, device=None, capture=None):\n"
       << "    return " << substitute(def, def->getValueAsString("eager"), subst) << "\n\n";
  }
  os << "\nEAGER = {\n";
  for (const Record *def : ops)
    os << "    " << pyString(def->getValueAsString("opName")) << ": _" << def->getValueAsString("opName")
       << ",\n";
  os << "}\n\n";

  // Capture handlers of ops with a signature.
  os << "# capture handlers: handler(ops, *args, **kwargs) as PyTorch calls torch_names[0]\n";
  std::vector<std::pair<std::string, std::string>> handlers;
  for (const Record *def : ops) {
    StringRef signature = def->getValueAsString("signature");
    if (signature.empty())
      continue;
    mlir::tblgen::Operator op(def);
    std::vector<StringRef> torchNames = def->getValueAsListOfStrings("torchNames");
    if (torchNames.empty())
      PrintFatalError(def->getLoc(), "dyn-tblgen: a signature without torchNames");
    std::set<std::string> operands, attrs;
    for (int i = 0; i < op.getNumOperands(); ++i)
      operands.insert(op.getOperand(i).name.str());
    for (int i = 0; i < op.getNumNativeAttributes(); ++i)
      attrs.insert(op.getAttribute(i).name.str());
    // The parameter names, in order (defaults stripped).
    SmallVector<StringRef> params;
    SplitString(signature, params, ",");
    std::string operandList, attrList, extraList;
    std::set<std::string> seen;
    for (StringRef p : params) {
      StringRef pname = p.split('=').first.trim();
      if (pname == "*")
        continue;
      std::string n = pname.str();
      seen.insert(n);
      if (operands.count(n))
        operandList += n + ", ";
      else if (attrs.count(n))
        attrList += pyString(n) + ": " + n + ", ";
      else
        extraList += ", " + n + "=" + n;
    }
    for (const std::string &n : operands)
      if (!seen.count(n))
        PrintFatalError(def->getLoc(), "dyn-tblgen: operand " + n + " missing from the signature");
    for (const std::string &n : attrs)
      if (!seen.count(n))
        PrintFatalError(def->getLoc(), "dyn-tblgen: attribute " + n + " missing from the signature");
    std::string fn = "_capture_" + def->getValueAsString("opName").str();
    os << "\ndef " << fn << "(o, " << signature << "):\n"
       << "    return o.registered(" << pyString(def->getValueAsString("opName")) << ", " << torchNames[0]
       << ", (" << operandList << "), {" << attrList << "}" << extraList << ")\n\n";
    for (StringRef t : torchNames)
      handlers.push_back({t.str(), fn});
  }
  os << "\nHANDLERS = {\n";
  for (auto &[name, fn] : handlers)
    os << "    " << pyString(name) << ": " << fn << ",\n";
  os << "}\n";
  return false;
}

//===----------------------------------------------------------------------===//
// -gen-ops-doc
//===----------------------------------------------------------------------===//

bool emitDoc(raw_ostream &os, const RecordKeeper &records) {
  std::vector<const Record *> ops = registeredOps(records);
  std::map<const Record *, const Record *> rules = derivativesByOp(records);
  os << "<!-- generated by dyn-tblgen -gen-ops-doc from " << sourceName << "; do not edit -->\n\n"
     << ops.size() << " registered graph ops.\n\n"
     << "| op | family | PyTorch | result type | shape | lowering | derivative |\n|---|---|---|---|---|---|---|\n";
  for (const Record *def : ops) {
    std::string torchNames;
    for (StringRef t : def->getValueAsListOfStrings("torchNames"))
      torchNames += (torchNames.empty() ? "`" : ", `") + t.str() + "`";
    os << "| `graph." << def->getValueAsString("opName") << "` | " << def->getValueAsString("family") << " | "
       << torchNames << " | " << def->getValueAsDef("typeRule")->getValueAsString("name") << " | "
       << def->getValueAsDef("shapeRule")->getValueAsString("name") << " | " << lowering(def) << " | "
       << derivativeKind(rules, def) << " |\n";
  }
  return false;
}

bool dispatch(raw_ostream &os, const RecordKeeper &records) {
  switch (action) {
  case GenGraphToPrim:
    return emitGraphToPrim(os, records);
  case GenPrimMath:
    return emitPrimMath(os, records);
  case GenDerivatives:
    return emitDerivatives(os, records);
  case GenPython:
    return emitPython(os, records);
  case GenDoc:
    return emitDoc(os, records);
  case GenAtenCalls:
    return dyn_tblgen::emitAtenCalls(os, records);
  }
  return true;
}

} // namespace

int main(int argc, char **argv) {
  InitLLVM y(argc, argv);
  cl::ParseCommandLineOptions(argc, argv);
  return TableGenMain(argv[0], TableGenMainFn(&dispatch));
}
