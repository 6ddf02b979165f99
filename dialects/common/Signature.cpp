//===- Signature.cpp - dependent function signatures ----------------------===//

#include "loom/Signature.h"
#include "loom/Dialects.h"

using namespace mlir;

namespace loom {

FunctionType Signature::functionType(Builder &builder) const {
  SmallVector<Type> inputs;
  for (const OpAsmParser::Argument &arg : arguments)
    inputs.push_back(arg.type);
  return builder.getFunctionType(inputs, results);
}

ParseResult parseSignatureArguments(OpAsmParser &parser, Signature &signature) {
  return parser.parseCommaSeparatedList(OpAsmParser::Delimiter::Paren, [&]() -> ParseResult {
    OpAsmParser::Argument &arg = signature.arguments.emplace_back();
    auto &names = signature.argumentDimNames.emplace_back();
    if (parser.parseArgument(arg) || parser.parseColon())
      return failure();
    SMLoc loc = parser.getCurrentLocation();
    if (parseLoomTypeWithDims(parser, arg.type, &names))
      return failure();
    if (countDynamicDims(arg.type) != names.size())
      return parser.emitError(loc, "each dependent dimension of ")
             << arg.type << " must name an argument: write `[%arg]` in place of `?`";
    return success();
  });
}

ParseResult parseSignatureResults(OpAsmParser &parser, Signature &signature) {
  if (failed(parser.parseOptionalArrow()))
    return success();
  auto parseOne = [&]() -> ParseResult {
    auto &names = signature.resultDimNames.emplace_back();
    return parseLoomTypeWithDims(parser, signature.results.emplace_back(), &names);
  };
  if (succeeded(parser.parseOptionalLParen())) {
    if (succeeded(parser.parseOptionalRParen()))
      return success();
    if (parser.parseCommaSeparatedList(parseOne) || parser.parseRParen())
      return failure();
    return success();
  }
  return parseOne();
}

ParseResult resolveSignature(OpAsmParser &parser, Signature &signature) {
  for (auto [index, arg] : llvm::enumerate(signature.arguments))
    for (const OpAsmParser::Argument &earlier : ArrayRef(signature.arguments).take_front(index))
      if (earlier.ssaName.name == arg.ssaName.name && earlier.ssaName.number == arg.ssaName.number)
        return parser.emitError(arg.ssaName.location, "argument name ")
               << arg.ssaName.name << " is used twice in this signature";
  auto resolve = [&](const UnresolvedOperand &name) -> ParseResult {
    for (auto [index, arg] : llvm::enumerate(signature.arguments))
      if (arg.ssaName.name == name.name && arg.ssaName.number == name.number) {
        if (!llvm::isa<IndexType>(arg.type))
          return parser.emitError(name.location, "dimension ")
                 << name.name << " names an argument of type " << arg.type
                 << "; dimensions must be `index`";
        signature.argDims.push_back(index);
        return success();
      }
    return parser.emitError(name.location, "dimension ")
           << name.name << " does not name an argument of this signature";
  };
  for (auto &names : signature.argumentDimNames)
    for (const UnresolvedOperand &name : names)
      if (resolve(name))
        return failure();
  for (auto &names : signature.resultDimNames)
    for (const UnresolvedOperand &name : names)
      if (resolve(name))
        return failure();
  return success();
}

/// The values naming the dynamic dimensions of `types`, starting at `offset`
/// into `argDims`.
static SmallVector<Value> dimensionValues(Block &entry, TypeRange types, unsigned offset,
                                          ArrayRef<int64_t> argDims) {
  SmallVector<Value> values;
  unsigned count = 0;
  for (Type type : types)
    count += countDynamicDims(type);
  for (unsigned i = offset; i < offset + count && i < argDims.size(); ++i)
    if (argDims[i] >= 0 && argDims[i] < entry.getNumArguments())
      values.push_back(entry.getArgument(argDims[i]));
  return values;
}

void printSignatureArguments(OpAsmPrinter &printer, Block::BlockArgListType arguments,
                             ArrayRef<int64_t> argDims) {
  printer << '(';
  if (!arguments.empty()) {
    Block &entry = *arguments.front().getOwner();
    unsigned offset = 0;
    for (unsigned i = 0; i < arguments.front().getArgNumber(); ++i)
      offset += countDynamicDims(entry.getArgument(i).getType());
    SmallVector<Type> types;
    for (BlockArgument arg : arguments)
      types.push_back(arg.getType());
    SmallVector<Value> dims = dimensionValues(entry, types, offset, argDims);
    ValueRange remaining(dims);
    llvm::interleaveComma(arguments, printer, [&](BlockArgument arg) {
      printer.printOperand(arg);
      printer << ": ";
      printLoomTypeWithDims(printer, arg.getType(), remaining);
    });
  }
  printer << ')';
}

void printSignatureResults(OpAsmPrinter &printer, Block &entry, TypeRange results,
                           ArrayRef<int64_t> argDims) {
  if (results.empty())
    return;
  unsigned offset = 0;
  for (BlockArgument arg : entry.getArguments())
    offset += countDynamicDims(arg.getType());
  SmallVector<Value> dims = dimensionValues(entry, results, offset, argDims);
  ValueRange remaining(dims);
  printer << " -> (";
  llvm::interleaveComma(results, printer,
                        [&](Type type) { printLoomTypeWithDims(printer, type, remaining); });
  printer << ')';
}

void printDeclarationSignature(OpAsmPrinter &printer, FunctionType type,
                               ArrayRef<int64_t> argDims, ArrayRef<std::string> names) {
  unsigned next = 0;
  auto printType = [&](Type type) {
    renderLoomType(printer.getStream(), type, [&]() {
      if (next < argDims.size())
        printer << '%' << names[argDims[next++]];
      else
        printer << '?';
    });
  };
  printer << '(';
  llvm::interleaveComma(llvm::enumerate(type.getInputs()), printer, [&](auto entry) {
    printer << '%' << names[entry.index()] << ": ";
    printType(entry.value());
  });
  printer << ')';
  if (!type.getResults().empty()) {
    printer << " -> (";
    llvm::interleaveComma(type.getResults(), printer, printType);
    printer << ')';
  }
}

LogicalResult verifySignatureTypes(Operation *op, FunctionType type, ArrayRef<int64_t> argDims) {
  unsigned expected = 0;
  for (Type input : type.getInputs())
    expected += countDynamicDims(input);
  for (Type result : type.getResults())
    if (countDynamicDims(result) != 0)
      return op->emitOpError("result type ")
             << result << " has dependent dimensions; results cannot name arguments yet";
  if (argDims.size() != expected)
    return op->emitOpError("arg_dims has ")
           << argDims.size() << " entries but the signature has " << expected
           << " dependent dimensions";
  for (int64_t index : argDims) {
    if (index < 0 || static_cast<size_t>(index) >= type.getNumInputs())
      return op->emitOpError("arg_dims names argument #") << index << ", which does not exist";
    if (!llvm::isa<IndexType>(type.getInput(index)))
      return op->emitOpError("dimension argument #") << index << " must be `index`";
  }
  return success();
}

LogicalResult verifySignature(Operation *op, FunctionType type, Block &entry,
                              ArrayRef<int64_t> argDims) {
  if (failed(verifySignatureTypes(op, type, argDims)))
    return failure();
  if (entry.getNumArguments() != type.getNumInputs())
    return op->emitOpError("entry block has ")
           << entry.getNumArguments() << " arguments but the signature has "
           << type.getNumInputs();
  for (auto [index, arg] : llvm::enumerate(entry.getArguments()))
    if (arg.getType() != type.getInput(index))
      return op->emitOpError("entry block argument #")
             << index << " has type " << arg.getType() << " but the signature says "
             << type.getInput(index);
  return success();
}

ParseResult parseVisibility(OpAsmParser &parser, NamedAttrList &attributes) {
  StringRef visibility = "private";
  StringRef keyword;
  if (succeeded(parser.parseOptionalKeyword(&keyword, {"public", "private", "nested"})))
    visibility = keyword;
  attributes.append(SymbolTable::getVisibilityAttrName(),
                    parser.getBuilder().getStringAttr(visibility));
  return success();
}

void printVisibility(OpAsmPrinter &printer, std::optional<StringRef> visibility) {
  if (visibility && *visibility != "private")
    printer << ' ' << *visibility;
}

LogicalResult verifyTargetSymbol(Operation *op, FlatSymbolRefAttr target,
                                 SymbolTableCollection &symbols) {
  if (!target)
    return success();
  if (!symbols.lookupNearestSymbolFrom<aie2p::TargetOp>(op, target))
    return op->emitOpError("target(") << target << ") does not name an aie2p.target";
  return success();
}

ParseResult parseOptionalTarget(OpAsmParser &parser, NamedAttrList &attributes) {
  if (failed(parser.parseOptionalKeyword("target")))
    return success();
  FlatSymbolRefAttr target;
  if (parser.parseLParen() || parser.parseAttribute(target) || parser.parseRParen())
    return failure();
  attributes.append("target", target);
  return success();
}

} // namespace loom
