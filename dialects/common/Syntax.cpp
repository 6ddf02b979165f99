//===- Syntax.cpp - Loom type syntax, keywords, literals, fact lists ------===//

#include "loom/Dialects.h"
#include "loom/ShapedTypes.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/TypeSwitch.h"

#include <cctype>
#include <cstdio>
#include <cstdlib>

using namespace mlir;

namespace loom {

static constexpr llvm::StringLiteral kTypeKeywords[] = {
    "buffer", "offset", "pool",  "view",
    "tile",   "channel", "read", "write",
    "kernel.async.token", "kernel.async.group"};

/// `2x[%n]x` ... stops before the element type.
static ParseResult parseShape(OpAsmParser &parser, SmallVectorImpl<int64_t> &shape,
                              SmallVectorImpl<UnresolvedOperand> *dims) {
  for (;;) {
    SMLoc question = parser.getCurrentLocation();
    if (succeeded(parser.parseOptionalQuestion()))
      return parser.emitError(question,
                              "a dynamic dimension names the value that holds it: write "
                              "`[%value]` instead of `?`");
    if (succeeded(parser.parseOptionalLSquare())) {
      SMLoc loc = parser.getCurrentLocation();
      UnresolvedOperand dim;
      if (parser.parseOperand(dim) || parser.parseRSquare())
        return failure();
      if (!dims)
        return parser.emitError(loc, "a dependent dimension `[%value]` is not allowed in this position");
      dims->push_back(dim);
      shape.push_back(ShapedType::kDynamic);
    } else {
      SMLoc loc = parser.getCurrentLocation();
      int64_t size;
      OptionalParseResult parsed = parser.parseOptionalInteger(size);
      if (!parsed.has_value())
        return success();
      if (failed(*parsed))
        return failure();
      if (size < 0)
        return parser.emitError(loc, "dimension size must be non-negative, got ") << size;
      shape.push_back(size);
    }
    if (parser.parseXInDimensionList())
      return failure();
  }
}

static ParseResult parseShaped(OpAsmParser &parser, SmallVectorImpl<int64_t> &shape,
                               Type &element, SmallVectorImpl<UnresolvedOperand> *dims,
                               SmallVectorImpl<int64_t> *strides) {
  if (parser.parseLess() || parseShape(parser, shape, dims))
    return failure();
  SMLoc loc = parser.getCurrentLocation();
  if (parser.parseType(element))
    return failure();
  if (!element.isIntOrIndexOrFloat())
    return parser.emitError(loc, "element type must be an integer, index or float type, got ")
           << element;
  if (strides && parseOptionalStridedLayout(parser, *strides))
    return failure();
  return parser.parseGreater();
}

ParseResult parseLoomTypeWithDims(OpAsmParser &parser, Type &type,
                                  SmallVectorImpl<UnresolvedOperand> *dims) {
  MLIRContext *ctx = parser.getContext();
  StringRef keyword;
  SmallVector<StringRef> allowed(std::begin(kTypeKeywords), std::end(kTypeKeywords));
  if (failed(parser.parseOptionalKeyword(&keyword, allowed)))
    return parser.parseType(type);

  if (keyword == "buffer")
    type = buffer::BufferType::get(ctx);
  else if (keyword == "offset")
    type = buffer::OffsetType::get(ctx);
  else if (keyword == "pool")
    type = pipeline::PoolType::get(ctx);
  else if (keyword == "kernel.async.token")
    type = kernel::AsyncTokenType::get(ctx);
  else if (keyword == "kernel.async.group")
    type = kernel::AsyncGroupType::get(ctx);
  else if (keyword == "view" || keyword == "tile") {
    SmallVector<int64_t> shape, strides;
    Type element;
    SMLoc loc = parser.getCurrentLocation();
    bool view = keyword == "view";
    if (parseShaped(parser, shape, element, dims, view ? &strides : nullptr))
      return failure();
    if (view) {
      auto emit = [&]() { return parser.emitError(loc); };
      type = view::ViewType::getChecked(llvm::function_ref<InFlightDiagnostic()>(emit), ctx,
                                        ArrayRef<int64_t>(shape), element,
                                        ArrayRef<int64_t>(strides));
      if (!type)
        return failure();
    } else
      type = channel::TileType::get(ctx, shape, element);
  } else {
    if (parser.parseLess())
      return failure();
    SMLoc loc = parser.getCurrentLocation();
    Type record;
    if (parseLoomTypeWithDims(parser, record, dims) || parser.parseGreater())
      return failure();
    auto tile = llvm::dyn_cast<channel::TileType>(record);
    if (!tile)
      return parser.emitError(loc, "expected a record type `tile<...>`, got ") << record;
    if (keyword == "channel")
      type = channel::ChannelType::get(ctx, tile);
    else if (keyword == "read")
      type = channel::ReadType::get(ctx, tile);
    else
      type = channel::WriteType::get(ctx, tile);
  }
  return success();
}

static void renderShape(raw_ostream &os, ArrayRef<int64_t> shape,
                        llvm::function_ref<void()> printDim) {
  for (int64_t size : shape) {
    if (ShapedType::isDynamic(size)) {
      os << '[';
      printDim();
      os << ']';
    } else {
      os << size;
    }
    os << 'x';
  }
}

void renderLoomType(raw_ostream &os, Type type, llvm::function_ref<void()> printDim) {
  llvm::TypeSwitch<Type>(type)
      .Case<buffer::BufferType>([&](auto) { os << "buffer"; })
      .Case<buffer::OffsetType>([&](auto) { os << "offset"; })
      .Case<pipeline::PoolType>([&](auto) { os << "pool"; })
      .Case<kernel::AsyncTokenType>([&](auto) { os << "kernel.async.token"; })
      .Case<kernel::AsyncGroupType>([&](auto) { os << "kernel.async.group"; })
      .Case<view::ViewType>([&](view::ViewType t) {
        os << "view<";
        renderShape(os, t.getShape(), printDim);
        os << t.getElementType();
        printStridedLayout(os, t.getStrides());
        os << '>';
      })
      .Case<channel::TileType>([&](channel::TileType t) {
        os << "tile<";
        renderShape(os, t.getShape(), printDim);
        os << t.getElementType() << '>';
      })
      .Case<channel::ChannelType, channel::ReadType, channel::WriteType>([&](auto t) {
        os << (llvm::isa<channel::ChannelType>(t) ? "channel<"
               : llvm::isa<channel::ReadType>(t)  ? "read<"
                                                   : "write<");
        renderLoomType(os, t.getRecord(), printDim);
        os << '>';
      })
      .Default([&](Type t) { os << t; });
}

void printLoomTypeWithDims(OpAsmPrinter &printer, Type type, ValueRange &dims) {
  renderLoomType(printer.getStream(), type, [&]() {
    if (dims.empty()) {
      printer << '?';
      return;
    }
    printer.printOperand(dims.front());
    dims = dims.drop_front();
  });
}

ParseResult TypeListParser::parseList(SmallVectorImpl<Type> &types) {
  return parser.parseCommaSeparatedList([&]() { return parse(types.emplace_back()); });
}

ParseResult TypeListParser::parseParenList(SmallVectorImpl<Type> &types) {
  return parser.parseCommaSeparatedList(OpAsmParser::Delimiter::Paren,
                                        [&]() { return parse(types.emplace_back()); });
}

ParseResult TypeListParser::resolve(SmallVectorImpl<Value> &operands) {
  return parser.resolveOperands(dims, parser.getBuilder().getIndexType(), operands);
}

ParseResult parseLoomType(OpAsmParser &parser, Type &type) {
  return parseLoomTypeWithDims(parser, type, nullptr);
}

void printLoomType(OpAsmPrinter &printer, Operation *, Type type) {
  ValueRange none;
  printLoomTypeWithDims(printer, type, none);
}

ParseResult parseLoomTypes(OpAsmParser &parser, SmallVectorImpl<Type> &types) {
  return parser.parseCommaSeparatedList(
      [&]() { return parseLoomType(parser, types.emplace_back()); });
}

void printLoomTypes(OpAsmPrinter &printer, Operation *op, TypeRange types) {
  llvm::interleaveComma(types, printer, [&](Type type) { printLoomType(printer, op, type); });
}

ParseResult parseKeyword(OpAsmParser &parser, StringAttr &attr) {
  StringRef keyword;
  if (parser.parseKeyword(&keyword))
    return failure();
  attr = parser.getBuilder().getStringAttr(keyword);
  return success();
}

void printKeyword(OpAsmPrinter &printer, Operation *, StringAttr attr) {
  printer << attr.getValue();
}

std::string formatFloat(const llvm::APFloat &value) {
  // Infinities and NaNs have no decimal spelling: print their bits.
  if (!value.isFinite()) {
    SmallString<16> text;
    value.bitcastToAPInt().toStringUnsigned(text, 16);
    return "0x" + std::string(text.str().upper());
  }
  double asDouble = value.convertToDouble();
  std::string text;
  for (int precision = 1; precision <= 17; ++precision) {
    char buffer[64];
    std::snprintf(buffer, sizeof(buffer), "%.*g", precision, asDouble);
    llvm::APFloat back(std::strtod(buffer, nullptr));
    bool lost;
    back.convert(value.getSemantics(), llvm::APFloat::rmNearestTiesToEven, &lost);
    if (back.bitwiseIsEqual(value)) {
      text = buffer;
      break;
    }
  }
  // MLIR float literals need a fraction: `1e-10` is written `1.0e-10`.
  if (text.find_first_of(".") == std::string::npos) {
    size_t exponent = text.find_first_of("eE");
    text.insert(exponent == std::string::npos ? text.size() : exponent, ".0");
  }
  return text;
}

/// Whether the literal at `at` is spelled as an integer: digits (or `0x`
/// and hex digits) after an optional minus, with no fraction or exponent.
static bool spellsInteger(const char *at) {
  if (*at == '-')
    ++at;
  if (at[0] == '0' && (at[1] == 'x' || at[1] == 'X'))
    return true;
  if (!std::isdigit(static_cast<unsigned char>(*at)))
    return false;
  while (std::isdigit(static_cast<unsigned char>(*at)))
    ++at;
  return *at != '.' && *at != 'e' && *at != 'E';
}

ParseResult parseNumberLiteral(OpAsmParser &parser, TypedAttr &value, Type &type) {
  SMLoc loc = parser.getCurrentLocation();
  // `0x...` spells the bits of the value, as in MLIR; a decimal literal is
  // an integer's value, or rounded to a float type.
  const char *at = loc.getPointer(); // the buffer is NUL-terminated
  bool bits = at[0] == '0' && (at[1] == 'x' || at[1] == 'X');
  bool integer = spellsInteger(at);
  APInt pattern;
  double literal = 0;
  if (integer ? parser.parseInteger(pattern) : parser.parseFloat(literal))
    return failure();
  if (parser.parseColon() || parseLoomType(parser, type))
    return failure();
  Type element = type;
  if (auto vector = llvm::dyn_cast<VectorType>(type))
    element = vector.getElementType();
  if (auto intType = llvm::dyn_cast<IntegerType>(element)) {
    unsigned width = intType.getWidth();
    if (!integer)
      return parser.emitError(loc, "an integer type needs an integer literal, got a float for ")
             << type;
    if (bits ? pattern.getActiveBits() > width : pattern.getSignificantBits() > width)
      return parser.emitError(loc, "literal does not fit ") << intType
             << (bits ? " (the bit pattern is wider)" : " (a signed value of that width)");
    value = IntegerAttr::get(intType, bits ? pattern.zextOrTrunc(width)
                                           : pattern.sextOrTrunc(width));
    return success();
  }
  auto floatType = llvm::dyn_cast<FloatType>(element);
  if (!floatType)
    return parser.emitError(loc, "a number literal needs an integer or float type (or a vector "
                                 "of one), got ")
           << type;
  const llvm::fltSemantics &semantics = floatType.getFloatSemantics();
  if (bits) {
    unsigned width = floatType.getWidth();
    if (pattern.getActiveBits() > width)
      return parser.emitError(loc, "bit pattern is wider than ") << width << " bits";
    value = FloatAttr::get(floatType, APFloat(semantics, pattern.zextOrTrunc(width)));
    return success();
  }
  // As in MLIR, a float literal has a fraction or an exponent.
  if (integer)
    return parser.emitError(loc, "unexpected decimal integer literal for a floating point value");
  llvm::APFloat converted(literal);
  bool lost;
  llvm::APFloat::opStatus status =
      converted.convert(semantics, llvm::APFloat::rmNearestTiesToEven, &lost);
  if (status & llvm::APFloat::opOverflow)
    return parser.emitError(loc, "literal is out of the range of ") << floatType;
  value = FloatAttr::get(floatType, converted);
  return success();
}

void printNumberLiteral(OpAsmPrinter &printer, Operation *op, TypedAttr value, Type type) {
  if (auto integer = llvm::dyn_cast<IntegerAttr>(value))
    printer << integer.getValue().getSExtValue() << " : ";
  else
    printer << formatFloat(llvm::cast<FloatAttr>(value).getValue()) << " : ";
  printLoomType(printer, op, type);
}

ParseResult parseIndexList(OpAsmParser &parser, SmallVectorImpl<UnresolvedOperand> &dynamic,
                           SmallVectorImpl<int64_t> &positions) {
  return parser.parseCommaSeparatedList(OpAsmParser::Delimiter::Square, [&]() -> ParseResult {
    UnresolvedOperand operand;
    OptionalParseResult parsed = parser.parseOptionalOperand(operand);
    if (parsed.has_value()) {
      if (failed(*parsed))
        return failure();
      dynamic.push_back(operand);
      positions.push_back(kDynamicPosition);
      return success();
    }
    SMLoc loc = parser.getCurrentLocation();
    int64_t position;
    if (parser.parseInteger(position))
      return failure();
    if (position < 0)
      return parser.emitError(loc, "position must be non-negative, got ") << position;
    positions.push_back(position);
    return success();
  });
}

void printIndexList(OpAsmPrinter &printer, ValueRange dynamic, ArrayRef<int64_t> positions) {
  printer << '[';
  llvm::interleaveComma(positions, printer, [&](int64_t position) {
    if (position == kDynamicPosition) {
      printer.printOperand(dynamic.front());
      dynamic = dynamic.drop_front();
    } else {
      printer << position;
    }
  });
  printer << ']';
}

ParseResult parseFacts(OpAsmParser &parser, Facts &facts,
                       std::optional<UnresolvedOperand> *subject) {
  auto parseSubject = [&]() -> ParseResult {
    if (!subject)
      return success();
    SMLoc loc = parser.getCurrentLocation();
    UnresolvedOperand named;
    if (parser.parseOperand(named) || parser.parseComma())
      return failure();
    if (*subject && ((*subject)->name != named.name || (*subject)->number != named.number))
      return parser.emitError(loc, "a fact must name the value it describes (")
             << (*subject)->name << "), got " << named.name;
    *subject = named;
    return success();
  };
  auto delimiter = subject ? OpAsmParser::Delimiter::Square : OpAsmParser::Delimiter::OptionalSquare;
  return parser.parseCommaSeparatedList(delimiter, [&]() -> ParseResult {
    SMLoc loc = parser.getCurrentLocation();
    StringRef kind;
    if (parser.parseKeyword(&kind) || parser.parseLParen() || parseSubject())
      return failure();
    if (kind == "range") {
      int64_t low, high;
      if (facts.range)
        return parser.emitError(loc, "duplicate `range` fact");
      if (parser.parseInteger(low) || parser.parseComma() || parser.parseInteger(high))
        return failure();
      facts.range = {low, high};
    } else if (kind == "multiple_of") {
      int64_t divisor;
      if (facts.multipleOf)
        return parser.emitError(loc, "duplicate `multiple_of` fact");
      if (parser.parseInteger(divisor))
        return failure();
      facts.multipleOf = divisor;
    } else {
      return parser.emitError(loc, "unknown fact `") << kind
             << "`; expected `range` or `multiple_of`";
    }
    return parser.parseRParen();
  });
}

void printFacts(OpAsmPrinter &printer, const Facts &facts, Value subject) {
  printer << '[';
  auto printSubject = [&]() {
    if (subject) {
      printer.printOperand(subject);
      printer << ", ";
    }
  };
  bool first = true;
  if (facts.range) {
    printer << "range(";
    printSubject();
    printer << facts.range->first << ", " << facts.range->second << ')';
    first = false;
  }
  if (facts.multipleOf) {
    if (!first)
      printer << ", ";
    printer << "multiple_of(";
    printSubject();
    printer << *facts.multipleOf << ')';
  }
  printer << ']';
}

Facts factsOf(std::optional<ArrayRef<int64_t>> range, std::optional<int64_t> divisor) {
  Facts facts;
  if (range && range->size() == 2)
    facts.range = {(*range)[0], (*range)[1]};
  facts.multipleOf = divisor;
  return facts;
}

void addFactAttributes(OperationState &result, const Facts &facts, StringAttr rangeName,
                       StringAttr divisorName) {
  Builder builder(result.getContext());
  if (facts.range)
    result.addAttribute(rangeName,
                        builder.getDenseI64ArrayAttr({facts.range->first, facts.range->second}));
  if (facts.multipleOf)
    result.addAttribute(divisorName, builder.getI64IntegerAttr(*facts.multipleOf));
}

LogicalResult verifyFacts(Operation *op, const Facts &facts) {
  if (!facts.range && !facts.multipleOf)
    return op->emitOpError("needs at least one fact");
  if (facts.range && facts.range->first > facts.range->second)
    return op->emitOpError("range is empty: ")
           << facts.range->first << " > " << facts.range->second;
  if (facts.multipleOf && *facts.multipleOf <= 0)
    return op->emitOpError("multiple_of needs a positive divisor, got ") << *facts.multipleOf;
  return success();
}

} // namespace loom
