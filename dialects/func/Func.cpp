//===- Func.cpp - func dialect: dependent signatures, calls, returns ------===//

#include "loom/Dialects.h"
#include "loom/Signature.h"

using namespace mlir;
using namespace loom;
using namespace loom::func;

#include "FuncDialect.cpp.inc"
#define GET_OP_CLASSES
#include "FuncOps.cpp.inc"

void FuncDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "FuncOps.cpp.inc"
      >();
  addInlinerInterface(this);
}

//===-- func.def ----------------------------------------------------------===//

/// The argument attribute that keeps a declaration's argument names.
static constexpr llvm::StringLiteral kArgumentName = "loom.name";

ParseResult DefOp::parse(OpAsmParser &parser, OperationState &result) {
  Builder &builder = parser.getBuilder();
  if (parseVisibility(parser, result.attributes))
    return failure();
  if (succeeded(parser.parseOptionalKeyword("inline")))
    result.addAttribute(getInlineHintAttrName(result.name), builder.getUnitAttr());
  if (parseOptionalTarget(parser, result.attributes))
    return failure();
  StringAttr name;
  Signature signature;
  if (parser.parseSymbolName(name, SymbolTable::getSymbolAttrName(), result.attributes) ||
      parseSignatureArguments(parser, signature) || parseSignatureResults(parser, signature) ||
      resolveSignature(parser, signature))
    return failure();
  result.addAttribute(getFunctionTypeAttrName(result.name),
                      TypeAttr::get(signature.functionType(builder)));
  result.addAttribute(getArgDimsAttrName(result.name),
                      builder.getDenseI64ArrayAttr(signature.argDims));
  if (parser.parseOptionalAttrDictWithKeyword(result.attributes))
    return failure();
  Region *body = result.addRegion();
  OptionalParseResult parsed = parser.parseOptionalRegion(*body, signature.arguments);
  if (parsed.has_value() && failed(*parsed))
    return failure();
  if (!parsed.has_value() && !signature.arguments.empty()) {
    // A declaration has no argument values to carry the names: keep them as
    // argument attributes so that the dimensions print as written.
    SmallVector<Attribute> names;
    for (const OpAsmParser::Argument &arg : signature.arguments)
      names.push_back(builder.getDictionaryAttr(builder.getNamedAttr(
          kArgumentName, builder.getStringAttr(arg.ssaName.name.drop_front()))));
    result.addAttribute(getArgAttrsAttrName(result.name), builder.getArrayAttr(names));
  }
  return success();
}

void DefOp::print(OpAsmPrinter &p) {
  printVisibility(p, getSymVisibility());
  if (getInlineHint())
    p << " inline";
  if (auto target = getTargetAttr())
    p << " target(" << target << ')';
  p << ' ';
  p.printSymbolName(getSymName());
  if (getBody().empty()) {
    // A declaration has no argument values: name them `%argN` so that the
    // dependent dimensions can refer to them.
    SmallVector<std::string> names;
    for (unsigned i = 0; i < getFunctionType().getNumInputs(); ++i) {
      auto name = getArgAttrOfType<StringAttr>(i, kArgumentName);
      names.push_back(name ? name.str() : "arg" + std::to_string(i));
    }
    printDeclarationSignature(p, getFunctionType(), getArgDims(), names);
  } else {
    Block &entry = getBody().front();
    printSignatureArguments(p, entry.getArguments(), getArgDims());
    printSignatureResults(p, entry, getFunctionType().getResults(), getArgDims());
  }
  p.printOptionalAttrDictWithKeyword(
      (*this)->getAttrs(), {getSymNameAttrName(), getSymVisibilityAttrName(), getInlineHintAttrName(),
                            getTargetAttrName(), getFunctionTypeAttrName(), getArgDimsAttrName(),
                            getArgAttrsAttrName(), getResAttrsAttrName()});
  if (!getBody().empty()) {
    p << ' ';
    p.printRegion(getBody(), /*printEntryBlockArgs=*/false, /*printBlockTerminators=*/true);
  }
}

LogicalResult DefOp::verify() {
  if (getSymName().empty())
    return emitOpError("needs a symbol name");
  if (getBody().empty())
    return verifySignatureTypes(*this, getFunctionType(), getArgDims());
  return verifySignature(*this, getFunctionType(), getBody().front(), getArgDims());
}

//===-- func.call ---------------------------------------------------------===//

SmallVector<Value> CallOp::getTypedValues() {
  SmallVector<Value> values(getArgs().begin(), getArgs().end());
  values.append(getResults().begin(), getResults().end());
  return values;
}

ParseResult CallOp::parse(OpAsmParser &parser, OperationState &result) {
  FlatSymbolRefAttr callee;
  SmallVector<UnresolvedOperand> args;
  SmallVector<Type> argTypes, resultTypes;
  TypeListParser types(parser);
  SMLoc argsLoc;
  if (parser.parseAttribute(callee, "callee", result.attributes))
    return failure();
  argsLoc = parser.getCurrentLocation();
  if (parser.parseOperandList(args, OpAsmParser::Delimiter::Paren) ||
      parser.parseOptionalAttrDict(result.attributes) || parser.parseColon() ||
      types.parseParenList(argTypes))
    return failure();
  if (succeeded(parser.parseOptionalArrow())) {
    if (succeeded(parser.parseOptionalLParen())) {
      if (failed(parser.parseOptionalRParen()) &&
          (types.parseList(resultTypes) || parser.parseRParen()))
        return failure();
    } else if (types.parse(resultTypes.emplace_back())) {
      return failure();
    }
  }
  if (parser.resolveOperands(args, argTypes, argsLoc, result.operands) ||
      types.resolve(result.operands))
    return failure();
  result.addAttribute(getOperandSegmentSizesAttrName(result.name),
                      parser.getBuilder().getDenseI32ArrayAttr(
                          {static_cast<int32_t>(args.size()), static_cast<int32_t>(types.size())}));
  result.addTypes(resultTypes);
  return success();
}

void CallOp::print(OpAsmPrinter &p) {
  p << ' ' << getCalleeAttr() << '(' << getArgs() << ')';
  p.printOptionalAttrDict((*this)->getAttrs(),
                          {getCalleeAttrName(), getOperandSegmentSizesAttrName()});
  p << " : (";
  ValueRange dims = getTypeDims();
  llvm::interleaveComma(getArgs().getTypes(), p,
                        [&](Type type) { printLoomTypeWithDims(p, type, dims); });
  p << ')';
  if (!getResults().empty()) {
    p << " -> (";
    llvm::interleaveComma(getResults().getTypes(), p,
                          [&](Type type) { printLoomTypeWithDims(p, type, dims); });
    p << ')';
  }
}

LogicalResult CallOp::verifySymbolUses(SymbolTableCollection &symbols) {
  auto callee = symbols.lookupNearestSymbolFrom<DefOp>(*this, getCalleeAttr());
  if (!callee)
    return emitOpError("'") << getCallee() << "' does not name a func.def";
  FunctionType type = callee.getFunctionType();
  if (type.getNumInputs() != getArgs().size())
    return emitOpError("passes ") << getArgs().size() << " arguments but @" << getCallee()
                                  << " takes " << type.getNumInputs();
  if (type.getNumResults() != getResults().size())
    return emitOpError("expects ") << getResults().size() << " results but @" << getCallee()
                                   << " returns " << type.getNumResults();
  for (auto [index, pair] : llvm::enumerate(llvm::zip(getArgs().getTypes(), type.getInputs())))
    if (std::get<0>(pair) != std::get<1>(pair))
      return emitOpError("argument #") << index << " has type " << std::get<0>(pair) << " but @"
                                       << getCallee() << " expects " << std::get<1>(pair);
  for (auto [index, pair] :
       llvm::enumerate(llvm::zip(getResults().getTypes(), type.getResults())))
    if (std::get<0>(pair) != std::get<1>(pair))
      return emitOpError("result #") << index << " has type " << std::get<0>(pair) << " but @"
                                     << getCallee() << " returns " << std::get<1>(pair);
  // Instantiate the callee's dependent types with the actual arguments.
  ArrayRef<int64_t> argDims = callee.getArgDims();
  ValueRange named = getTypeDims();
  if (argDims.size() != named.size())
    return success(); // the callee's own verifier reports a malformed signature
  for (auto [position, pair] : llvm::enumerate(llvm::zip(named, argDims))) {
    Value actual = getArgs()[std::get<1>(pair)];
    if (!sameDim(std::get<0>(pair), actual))
      return emitOpError("dependent dimension ")
             << position << " of the call's types must be argument #" << std::get<1>(pair)
             << " of @" << getCallee() << ", which the callee's signature names there";
  }
  return success();
}

//===-- func.return -------------------------------------------------------===//

LogicalResult ReturnOp::verify() {
  if (failed(verifyNoDependentTypes(*this, getValues().getTypes(), "return")))
    return failure();
  auto def = llvm::dyn_cast<DefOp>((*this)->getParentOp());
  if (!def) {
    if (!getValues().empty())
      return emitOpError("a strand returns no values, got ") << getValues().size();
    return success();
  }
  ArrayRef<Type> results = def.getFunctionType().getResults();
  if (getValues().size() != results.size())
    return emitOpError("returns ") << getValues().size() << " values but @" << def.getSymName()
                                   << " declares " << results.size();
  for (auto [index, pair] : llvm::enumerate(llvm::zip(getValues().getTypes(), results)))
    if (std::get<0>(pair) != std::get<1>(pair))
      return emitOpError("value #") << index << " has type " << std::get<0>(pair)
                                    << " but the function returns " << std::get<1>(pair);
  return success();
}

LogicalResult DefOp::verifyRegions() {
  if (getBody().empty())
    return success();
  return verifyOwnership(getBody());
}

LogicalResult DefOp::verifySymbolUses(SymbolTableCollection &symbols) {
  return verifyTargetSymbol(*this, getTargetAttr(), symbols);
}
