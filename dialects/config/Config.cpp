//===- Config.cpp - config dialect: declarations and reads ----------------===//

#include "loom/Dialects.h"

using namespace mlir;
using namespace loom;
using namespace loom::config;

#include "ConfigDialect.cpp.inc"
#define GET_OP_CLASSES
#include "ConfigOps.cpp.inc"

void ConfigDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "ConfigOps.cpp.inc"
      >();
  addInlinerInterface(this);
}


// config.def @name : type [facts]
ParseResult DefOp::parse(OpAsmParser &parser, OperationState &result) {
  StringAttr name;
  Type type;
  if (parser.parseSymbolName(name, SymbolTable::getSymbolAttrName(), result.attributes) ||
      parser.parseColon() || parseLoomType(parser, type))
    return failure();
  result.addAttribute(getTypeAttrName(result.name), TypeAttr::get(type));
  Facts facts;
  if (parseFacts(parser, facts, nullptr))
    return failure();
  addFactAttributes(result, facts, getRangeAttrName(result.name),
                    getMultipleOfAttrName(result.name));
  return parser.parseOptionalAttrDict(result.attributes);
}

void DefOp::print(OpAsmPrinter &p) {
  p << ' ';
  p.printSymbolName(getSymName());
  p << " : ";
  printLoomType(p, *this, getType());
  Facts facts = factsOf(getRange(), divisor());
  if (facts.range || facts.multipleOf) {
    p << ' ';
    printFacts(p, facts, Value());
  }
  p.printOptionalAttrDict((*this)->getAttrs(), {getSymNameAttrName(), getTypeAttrName(),
                                                getRangeAttrName(), getMultipleOfAttrName()});
}

LogicalResult DefOp::verify() {
  if (getSymName().empty())
    return emitOpError("needs a symbol name");
  if (!getType().isIndex())
    return emitOpError("configuration values are `index`, got ") << getType();
  if (auto range = getRange(); range && range->size() != 2)
    return emitOpError("range holds [low, high], got ") << range->size() << " values";
  Facts facts = factsOf(getRange(), divisor());
  if (!facts.range && !facts.multipleOf)
    return success();
  return verifyFacts(*this, facts);
}

LogicalResult GetOp::verifySymbolUses(SymbolTableCollection &symbols) {
  auto def = symbols.lookupNearestSymbolFrom<DefOp>(*this, getNameAttr());
  if (!def)
    return emitOpError("reads @") << getName()
                                  << ", which no config.def declares in this module";
  if (def.getType() != getType())
    return emitOpError("reads @") << getName() << " as " << getType() << " but it is declared "
                                  << def.getType();
  return success();
}
