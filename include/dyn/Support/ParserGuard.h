//===- ParserGuard.h - input the upstream MLIR parser crashes on --*- C++ -*-===//
//
// MLIR 22's parser dereferences a null float type when a dense array
// attribute has `index` elements (`array<index: 1>` segfaults in
// Parser::parseDenseArrayAttr, before any dyn code sees the attribute). dyn's
// own dims attributes are DenseI64ArrayAttr (`[1]`, `array<i64: 1>` in
// generic form), which parse safely; this scan finds the crashing form in
// text handed to the parser so that dyn-opt and the compiler report it as a
// located error instead.
//
//===----------------------------------------------------------------------===//
#ifndef DYN_SUPPORT_PARSERGUARD_H
#define DYN_SUPPORT_PARSERGUARD_H

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/ADT/StringSet.h"

#include <cctype>
#include <optional>

namespace dyn {

/// The offset of the first `array<` whose element type is `index` (spelled
/// out or through a type alias), skipping comments and string literals.
inline std::optional<size_t> findIndexDenseArray(llvm::StringRef text) {
  auto isIdent = [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '$' || c == '.';
  };
  auto skipSpace = [&](size_t i) {
    while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i])))
      ++i;
    return i;
  };
  auto identAt = [&](size_t i) {
    size_t e = i;
    while (e < text.size() && isIdent(text[e]))
      ++e;
    return text.slice(i, e);
  };
  // Type aliases for index (`!idx = index`) hit the same path.
  llvm::StringSet<> indexAliases;
  for (size_t line = 0; line < text.size();) {
    size_t end = text.find('\n', line);
    llvm::StringRef l = text.slice(line, end).trim();
    if (l.consume_front("!")) {
      llvm::StringRef name = l.take_while(isIdent);
      llvm::StringRef rest = l.drop_front(name.size()).ltrim();
      if (rest.consume_front("=")) {
        rest = rest.ltrim();
        if (rest.consume_front("index") && (rest.empty() || !isIdent(rest.front())))
          indexAliases.insert(name);
      }
    }
    line = end == llvm::StringRef::npos ? text.size() : end + 1;
  }
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '/' && text.substr(i).starts_with("//")) { // a comment
      i = text.find('\n', i);
      if (i == llvm::StringRef::npos)
        return std::nullopt;
      continue;
    }
    if (c == '"') { // a string literal
      for (++i; i < text.size() && text[i] != '"'; ++i)
        if (text[i] == '\\')
          ++i;
      continue;
    }
    if (c != 'a' || !text.substr(i).starts_with("array") || (i > 0 && isIdent(text[i - 1])))
      continue;
    size_t j = skipSpace(i + 5);
    if (j >= text.size() || text[j] != '<' || isIdent(text[i + 5]))
      continue;
    j = skipSpace(j + 1);
    bool alias = j < text.size() && text[j] == '!';
    llvm::StringRef type = identAt(alias ? j + 1 : j);
    if (alias ? indexAliases.contains(type) : type == "index")
      return i;
  }
  return std::nullopt;
}

} // namespace dyn

#endif // DYN_SUPPORT_PARSERGUARD_H
