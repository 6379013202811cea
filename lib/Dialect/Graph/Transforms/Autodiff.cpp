//===- Autodiff.cpp - dyn-graph-autodiff: reverse mode into a joint function ===//
//
// Activity analysis (values computed from a `dyn.requires_grad` argument that
// reach a differentiable result), then one sweep over the ops in reverse:
// each op's operand gradients come from its rule (GraphDerivatives.td),
// gradients of a value used several times are summed.
//
//===----------------------------------------------------------------------===//
#include "DerivativeBuilder.h"
#include "dyn/Dialect/Graph/Transforms/Passes.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"

namespace dyn::graph {
#define GEN_PASS_DEF_GRAPHAUTODIFFPASS
#include "dyn/Dialect/Graph/Transforms/Passes.h.inc"

#include "dyn/Dialect/Graph/IR/GraphDerivatives.inc"
} // namespace dyn::graph

using namespace mlir;
using namespace dyn::graph;

namespace {

bool isFloatTensor(Value v) {
  auto t = dyn_cast<RankedTensorType>(v.getType());
  return t && isa<FloatType>(t.getElementType());
}

/// Results that carry a gradient: float ones, but not the running statistics a norm returns (eager
/// updates them in place, outside autograd).
bool differentiableResult(Operation *op, unsigned k) {
  if (k > 0 && isa<BatchNormOp, InstanceNormOp>(op))
    return false;
  return isFloatTensor(op->getResult(k));
}

struct GraphAutodiffPass : dyn::graph::impl::GraphAutodiffPassBase<GraphAutodiffPass> {
  void runOnOperation() override {
    func::FuncOp f = getOperation();
    if (f.isExternal() || !f.getBody().hasOneBlock())
      return;
    Block &body = f.getBody().front();
    auto ret = dyn_cast<func::ReturnOp>(body.getTerminator());
    if (!ret)
      return;
    SmallVector<unsigned> wrt;
    for (unsigned i = 0; i < f.getNumArguments(); ++i)
      if (f.getArgAttr(i, "dyn.requires_grad"))
        wrt.push_back(i);
    if (wrt.empty())
      return;
    // Checkpoint regions: the function lists its ops to recompute by position (the frontend's text
    // has no attribute of its own on each op); each gets `dyn.recompute`, which dyn-graph-partition reads.
    if (auto positions = f->getAttrOfType<DenseI64ArrayAttr>("dyn.recompute")) {
      SmallVector<Operation *> ops;
      for (Operation &op : body.without_terminator())
        ops.push_back(&op);
      for (int64_t k : positions.asArrayRef())
        if (k >= 0 && k < static_cast<int64_t>(ops.size()))
          ops[k]->setAttr("dyn.recompute", UnitAttr::get(f.getContext()));
      f->removeAttr("dyn.recompute");
    }

    // Forward activity: float values computed from a requires_grad argument.
    DenseSet<Value> active;
    for (unsigned i : wrt) {
      if (!isFloatTensor(f.getArgument(i))) {
        f.emitError() << "dyn-graph-autodiff: argument " << i << " requires grad but is not a float tensor";
        return signalPassFailure();
      }
      active.insert(f.getArgument(i));
    }
    for (Operation &op : body.without_terminator()) {
      if (isa<DetachOp, ConstantOp>(op))
        continue;
      if (llvm::any_of(op.getOperands(), [&](Value v) { return active.contains(v); }))
        for (unsigned k = 0; k < op.getNumResults(); ++k)
          if (differentiableResult(&op, k))
            active.insert(op.getResult(k));
    }
    SmallVector<unsigned> diffOutputs;
    for (unsigned k = 0; k < ret.getNumOperands(); ++k)
      if (active.contains(ret.getOperand(k)))
        diffOutputs.push_back(k);

    // Backward usefulness: active values a differentiable result depends on.
    DenseSet<Value> useful;
    SmallVector<Value> work;
    for (unsigned k : diffOutputs)
      work.push_back(ret.getOperand(k));
    while (!work.empty()) {
      Value v = work.pop_back_val();
      if (!useful.insert(v).second)
        continue;
      if (Operation *def = v.getDefiningOp())
        for (Value o : def->getOperands())
          if (active.contains(o))
            work.push_back(o);
    }
    auto needs = [&](Value v) { return active.contains(v) && useful.contains(v); };

    OpBuilder b(ret);
    DerivativeBuilder db(b, needs);
    DenseMap<Value, Value> adjoint;
    auto accumulate = [&](Value v, Value g, Operation *at) -> bool {
      if (g.getType() != v.getType()) {
        at->emitError() << "dyn-graph-autodiff: the gradient of operand has type " << g.getType() << ", expected "
                        << v.getType();
        return false;
      }
      auto [it, fresh] = adjoint.try_emplace(v, g);
      if (!fresh)
        it->second = db.accumulate(it->second, g);
      return true;
    };
    SmallVector<Type> cotangentTypes;
    for (unsigned k : diffOutputs) {
      Value out = ret.getOperand(k);
      cotangentTypes.push_back(out.getType());
      BlockArgument ct = body.addArgument(out.getType(), f.getLoc());
      db.loc = f.getLoc();
      accumulate(out, ct, f);
    }

    SmallVector<Operation *> ops;
    for (Operation &op : body.without_terminator())
      ops.push_back(&op);
    for (Operation *op : llvm::reverse(ops)) {
      if (!llvm::any_of(op->getResults(), [&](Value r) { return adjoint.count(r); }))
        continue;
      for (unsigned r = 1; r < op->getNumResults(); ++r)
        if (adjoint.count(op->getResult(r))) {
          op->emitError() << "dyn-graph-autodiff: no derivative of " << op->getName() << " through result " << r;
          return signalPassFailure();
        }
      Value grad = adjoint.lookup(op->getResult(0));
      db.loc = op->getLoc();
      SmallVector<Value> grads;
      if (!deriveOp(db, op, grad, grads)) {
        op->emitError() << "dyn-graph-autodiff: " << op->getName() << " has no derivative rule";
        return signalPassFailure();
      }
      if (db.failed)
        return signalPassFailure();
      for (unsigned i = 0; i < op->getNumOperands(); ++i) {
        Value operand = op->getOperand(i);
        if (!needs(operand))
          continue;
        if (!grads[i]) {
          op->emitError() << "dyn-graph-autodiff: the rule of " << op->getName() << " gave no gradient for operand "
                          << i;
          return signalPassFailure();
        }
        if (!accumulate(operand, grads[i], op))
          return signalPassFailure();
      }
    }

    // Forward ops a rule replaced by another form (attention by graph.attention_lse)
    for (Operation *op : llvm::reverse(ops))
      if (op->hasAttr("dyn.replaced") && op->use_empty())
        op->erase();

    // The joint function: the results, then one gradient per requires_grad argument.
    db.loc = f.getLoc();
    SmallVector<Value> results(ret.getOperands());
    for (unsigned i : wrt) {
      Value arg = f.getArgument(i);
      Value g = adjoint.lookup(arg);
      results.push_back(g ? g : db.zeros(cast<RankedTensorType>(arg.getType()), arg));
    }
    b.create<func::ReturnOp>(ret.getLoc(), results);
    ret.erase();
    unsigned numArgs = f.getNumArguments();
    SmallVector<Type> argTypes(f.getArgumentTypes());
    argTypes.append(cotangentTypes.begin(), cotangentTypes.end());
    SmallVector<Type> resultTypes;
    for (Value v : results)
      resultTypes.push_back(v.getType());
    SmallVector<DictionaryAttr> argAttrs;
    for (unsigned i = 0; i < numArgs; ++i)
      argAttrs.push_back(f.getArgAttrDict(i) ? f.getArgAttrDict(i) : b.getDictionaryAttr({}));
    for (unsigned k = 0; k < cotangentTypes.size(); ++k)
      argAttrs.push_back(b.getDictionaryAttr({b.getNamedAttr("dyn.cotangent", b.getUnitAttr())}));
    f.setFunctionType(FunctionType::get(f.getContext(), argTypes, resultTypes));
    f.setAllArgAttrs(argAttrs);
    f.removeResAttrsAttr();
    SmallVector<int64_t> diff(diffOutputs.begin(), diffOutputs.end());
    f->setAttr("dyn.joint",
               b.getDictionaryAttr({b.getNamedAttr("differentiable", b.getDenseI64ArrayAttr(diff)),
                                    b.getNamedAttr("outputs", b.getI64IntegerAttr(results.size() - wrt.size()))}));
  }
};

} // namespace
