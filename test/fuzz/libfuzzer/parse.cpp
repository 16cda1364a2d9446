//===- parse.cpp - fuzz the lexer and parser --------------------------------===//
#include "FuzzTarget.h"

#include "nxc/Frontend/AST.h"
#include "nxc/Frontend/Parser.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  auto file = nxc::parseFile(nxc::fuzz::source(data, size, "fuzz.nx"));
  nxc::fuzz::checkResult(file);
  if (file) (void)nxc::ast::print(*file);
  return 0;
}
