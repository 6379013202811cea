//===- HostJit.cpp - a CPU graph's LLVM module compiled on several threads -===//
//
// MLIR's ExecutionEngine optimizes and compiles one module on one thread. A
// large model's module is mostly independent kernels (each OpenMP-outlined
// into its own function), so it is split into parts that are optimized and
// compiled to objects at once, each in its own LLVMContext (moved there as
// bitcode), then linked by one LLJIT.
//
//===----------------------------------------------------------------------===//
#include "HostJit.h"

#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "llvm/Bitcode/BitcodeReader.h"
#include "llvm/Bitcode/BitcodeWriter.h"
#include "llvm/ExecutionEngine/JITEventListener.h"
#include "llvm/ExecutionEngine/Orc/ExecutionUtils.h"
#include "llvm/ExecutionEngine/Orc/RTDyldObjectLinkingLayer.h"
#include "llvm/ExecutionEngine/SectionMemoryManager.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Transforms/IPO/MergeFunctions.h"
#include "llvm/Transforms/Utils/SplitModule.h"

#include <thread>

using namespace llvm;

namespace dyn {
namespace {

Error stringError(const Twine &message) {
  return make_error<StringError>(message, inconvertibleErrorCode());
}

/// `_mlir_<name>(void **args)`: calls `name` with *args[i] as argument i (the
/// packed form run() calls, as MLIR's ExecutionEngine makes it).
Error addPackedEntry(Module &m, StringRef name) {
  Function *f = m.getFunction(name);
  if (!f || f->isDeclaration() || !f->getReturnType()->isVoidTy())
    return stringError("no void function @" + name + " in the LLVM module");
  LLVMContext &ctx = m.getContext();
  IRBuilder<> b(ctx);
  Type *ptr = b.getPtrTy();
  auto *packed = Function::Create(FunctionType::get(b.getVoidTy(), {ptr}, false),
                                  GlobalValue::ExternalLinkage, "_mlir_" + name, m);
  b.SetInsertPoint(BasicBlock::Create(ctx, "entry", packed));
  SmallVector<Value *> args;
  for (Argument &a : f->args()) {
    Value *slot = b.CreateLoad(ptr, b.CreateConstGEP1_64(ptr, packed->getArg(0), a.getArgNo()));
    args.push_back(b.CreateLoad(a.getType(), slot));
  }
  b.CreateCall(f, args);
  b.CreateRetVoid();
  return Error::success();
}

/// One part: parsed into its own context, optimized, compiled to an object.
Expected<std::unique_ptr<MemoryBuffer>> compilePart(StringRef bitcode, unsigned index,
                                                    const orc::JITTargetMachineBuilder &tmBuilder,
                                                    unsigned optLevel) {
  LLVMContext ctx;
  auto m = parseBitcodeFile(MemoryBufferRef(bitcode, "dyn-part"), ctx);
  if (!m)
    return m.takeError();
  orc::JITTargetMachineBuilder builder = tmBuilder; // one target machine per thread
  auto tm = builder.createTargetMachine();
  if (!tm)
    return tm.takeError();
  if (Error e = mlir::makeOptimizingTransformer(optLevel, 0, tm->get())(m->get()))
    return std::move(e);
  SmallVector<char, 0> object;
  raw_svector_ostream os(object);
  legacy::PassManager pm;
  if ((*tm)->addPassesToEmitFile(pm, os, nullptr, CodeGenFileType::ObjectFile))
    return stringError("the target cannot emit object files");
  pm.run(**m);
  return MemoryBuffer::getMemBufferCopy(StringRef(object.data(), object.size()),
                                        "dyn-part-" + std::to_string(index));
}

} // namespace

Expected<HostJit> compileHostModule(mlir::ModuleOp module, StringRef funcName,
                                    const orc::JITTargetMachineBuilder &tmBuilder,
                                    const HostJitOptions &options) {
  orc::JITTargetMachineBuilder builder = tmBuilder;
  auto tm = builder.createTargetMachine();
  if (!tm)
    return tm.takeError();
  DataLayout layout = (*tm)->createDataLayout();
  std::vector<SmallString<0>> parts;
  {
    LLVMContext ctx;
    std::unique_ptr<Module> m = mlir::translateModuleToLLVMIR(module, ctx);
    if (!m)
      return stringError("could not translate the module to LLVM IR");
    m->setDataLayout(layout);
    m->setTargetTriple((*tm)->getTargetTriple());
    if (Error e = addPackedEntry(*m, funcName))
      return std::move(e);
    // A model's repeated blocks give kernels with one body: each copy becomes
    // a call to one function, optimized and compiled once (MaxViT-T: 261
    // outlined kernels, 116 distinct).
    MergeFunctionsPass::runOnModule(*m);
    unsigned defined = 0;
    for (Function &f : *m)
      defined += !f.isDeclaration();
    // A part of fewer than 8 functions is not worth a thread.
    unsigned n = std::max(1u, std::min(options.threads, defined / 8));
    auto keep = [&](std::unique_ptr<Module> part) {
      SmallString<0> bitcode;
      raw_svector_ostream os(bitcode);
      WriteBitcodeToFile(*part, os);
      parts.push_back(std::move(bitcode));
    };
    if (n == 1)
      keep(std::move(m));
    else // functions dealt by size; internal symbols made hidden externals that link across parts
      SplitModule(*m, n, keep, /*PreserveLocals=*/false, /*RoundRobin=*/true);
  }

  std::vector<std::unique_ptr<MemoryBuffer>> objects(parts.size());
  std::vector<std::string> errors(parts.size());
  auto compile = [&](size_t i) {
    auto object = compilePart(parts[i], i, tmBuilder, options.optLevel);
    if (object)
      objects[i] = std::move(*object);
    else
      errors[i] = toString(object.takeError());
  };
  {
    std::vector<std::thread> workers;
    for (size_t i = 1; i < parts.size(); ++i)
      workers.emplace_back(compile, i);
    compile(0);
    for (std::thread &w : workers)
      w.join();
  }
  for (const std::string &error : errors)
    if (!error.empty())
      return stringError(error);

  JITEventListener *perf = options.perfListener ? JITEventListener::createPerfJITEventListener() : nullptr;
  auto jit = orc::LLJITBuilder()
                 .setJITTargetMachineBuilder(tmBuilder)
                 .setDataLayout(layout)
                 .setObjectLinkingLayerCreator([perf](orc::ExecutionSession &session)
                                                   -> Expected<std::unique_ptr<orc::ObjectLayer>> {
                   auto layer = std::make_unique<orc::RTDyldObjectLinkingLayer>(
                       session, [](const MemoryBuffer &) { return std::make_unique<SectionMemoryManager>(); });
                   if (perf)
                     layer->registerJITEventListener(*perf);
                   return std::move(layer);
                 })
                 .create();
  if (!jit)
    return jit.takeError();
  orc::JITDylib &main = (*jit)->getMainJITDylib();
  char prefix = layout.getGlobalPrefix();
  orc::MangleAndInterner interner((*jit)->getExecutionSession(), layout);
  if (options.symbols)
    if (Error e = main.define(orc::absoluteSymbols(options.symbols(interner))))
      return std::move(e);
  for (const std::string &lib : options.sharedLibs) {
    auto generator = orc::DynamicLibrarySearchGenerator::Load(lib.c_str(), prefix);
    if (!generator)
      return generator.takeError();
    main.addGenerator(std::move(*generator));
  }
  auto process = orc::DynamicLibrarySearchGenerator::GetForCurrentProcess(prefix);
  if (!process)
    return process.takeError();
  main.addGenerator(std::move(*process));
  for (auto &object : objects)
    if (Error e = (*jit)->addObjectFile(std::move(object)))
      return std::move(e);
  auto entry = (*jit)->lookup(("_mlir_" + funcName).str());
  if (!entry)
    return entry.takeError();
  HostJit result;
  result.entry = reinterpret_cast<void (*)(void **)>(static_cast<uintptr_t>(entry->getValue()));
  result.jit = std::move(*jit);
  return result;
}

} // namespace dyn
