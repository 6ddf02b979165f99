//===- View.cpp - view dialect: the view type, loads and stores -----------===//

#include "loom/Dialects.h"
#include "loom/Access.h"

#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace loom;
using namespace loom::view;

#include "ViewDialect.cpp.inc"
#define GET_TYPEDEF_CLASSES
#include "ViewTypes.cpp.inc"
#define GET_OP_CLASSES
#include "ViewOps.cpp.inc"

void ViewDialect::initialize() {
  addTypes<
#define GET_TYPEDEF_LIST
#include "ViewTypes.cpp.inc"
      >();
  addOperations<
#define GET_OP_LIST
#include "ViewOps.cpp.inc"
      >();
  addInlinerInterface(this);
}

namespace loom {

LogicalResult parseShapeAndElement(AsmParser &parser, SmallVectorImpl<int64_t> &shape,
                                   Type &element, SmallVectorImpl<int64_t> *strides) {
  if (parser.parseLess() ||
      parser.parseDimensionList(shape, /*allowDynamic=*/true, /*withTrailingX=*/true))
    return failure();
  SMLoc loc = parser.getCurrentLocation();
  if (parser.parseType(element))
    return failure();
  if (!element.isIntOrIndexOrFloat())
    return parser.emitError(loc, "element type must be an integer, index or float type");
  if (strides && parseOptionalStridedLayout(parser, *strides))
    return failure();
  return parser.parseGreater();
}

void printShapeAndElement(AsmPrinter &printer, ArrayRef<int64_t> shape, Type element,
                          ArrayRef<int64_t> strides) {
  printer << '<';
  for (int64_t size : shape) {
    if (ShapedType::isDynamic(size))
      printer << '?';
    else
      printer << size;
    printer << 'x';
  }
  printer << element;
  printStridedLayout(printer.getStream(), strides);
  printer << '>';
}

ParseResult parseOptionalStridedLayout(AsmParser &parser, SmallVectorImpl<int64_t> &strides) {
  if (failed(parser.parseOptionalComma()))
    return success();
  SMLoc loc = parser.getCurrentLocation();
  if (parser.parseKeyword("strided") || parser.parseLess() ||
      parser.parseCommaSeparatedList(AsmParser::Delimiter::Square, [&]() {
        return parser.parseInteger(strides.emplace_back());
      }) ||
      parser.parseGreater())
    return failure();
  if (strides.empty())
    return parser.emitError(loc, "a strided layout needs one stride per dimension");
  return success();
}

void printStridedLayout(raw_ostream &os, ArrayRef<int64_t> strides) {
  if (strides.empty())
    return;
  os << ", strided<[";
  llvm::interleaveComma(strides, os);
  os << "]>";
}

ParseResult parseAccess(OpAsmParser &parser, UnresolvedOperand &view,
                        SmallVectorImpl<UnresolvedOperand> &indices,
                        SmallVectorImpl<int64_t> &positions) {
  return failure(parser.parseOperand(view) || parseIndexList(parser, indices, positions));
}

LogicalResult verifyAccess(Operation *op, Type viewType, unsigned dynamicCount,
                           ArrayRef<int64_t> positions) {
  auto view = llvm::cast<view::ViewType>(viewType);
  if (positions.size() != view.getShape().size())
    return op->emitOpError("needs ")
           << view.getShape().size() << " positions for a rank-" << view.getShape().size()
           << " view, got " << positions.size();
  unsigned dynamic = llvm::count(positions, kDynamicPosition);
  if (dynamic != dynamicCount)
    return op->emitOpError("position list and position operands disagree");
  for (auto [position, size] : llvm::zip(positions, view.getShape()))
    if (position != kDynamicPosition && !ShapedType::isDynamic(size) && position >= size)
      return op->emitOpError("position ") << position << " is out of bounds for dimension of size "
                                          << size;
  return success();
}

} // namespace loom

Type ViewType::parse(AsmParser &parser) {
  SmallVector<int64_t> shape, strides;
  Type element;
  SMLoc loc = parser.getCurrentLocation();
  if (failed(parseShapeAndElement(parser, shape, element, &strides)))
    return {};
  auto emit = [&]() { return parser.emitError(loc); };
  return ViewType::getChecked(llvm::function_ref<InFlightDiagnostic()>(emit), parser.getContext(),
                              ArrayRef<int64_t>(shape), element, ArrayRef<int64_t>(strides));
}

void ViewType::print(AsmPrinter &printer) const {
  printShapeAndElement(printer, getShape(), getElementType(), getStrides());
}

LogicalResult ViewType::verify(function_ref<InFlightDiagnostic()> emitError,
                               ArrayRef<int64_t> shape, Type, ArrayRef<int64_t> strides) {
  if (strides.empty())
    return success();
  if (strides.size() != shape.size())
    return emitError() << "a strided layout needs one stride per dimension; got "
                       << strides.size() << " for a rank-" << shape.size() << " view";
  for (int64_t stride : strides)
    if (stride < 1)
      return emitError() << "view strides are element counts of at least 1, got " << stride;
  return success();
}

unsigned ViewType::getNumDynamicDims() const { return countDynamicDims(*this); }

bool ViewType::isContiguous() const {
  ArrayRef<int64_t> strides = getStrides();
  if (strides.empty())
    return true;
  ArrayRef<int64_t> shape = getShape();
  int64_t expected = 1;
  for (size_t d = shape.size(); d-- > 0;) {
    if (strides[d] != expected || ShapedType::isDynamic(shape[d]))
      return false;
    expected *= shape[d];
  }
  return true;
}

ViewType ViewType::withoutLayout() const {
  return ViewType::get(getContext(), getShape(), getElementType());
}

//===-- view.load / view.store --------------------------------------------===//

ParseResult LoadOp::parse(OpAsmParser &parser, OperationState &result) {
  return parseLoad<LoadOp>(parser, result);
}

void LoadOp::print(OpAsmPrinter &p) { printLoad(*this, p); }

LogicalResult LoadOp::verify() {
  auto view = llvm::cast<ViewType>(getView().getType());
  if (getResult().getType() != view.getElementType())
    return emitOpError("result type ") << getResult().getType()
                                       << " must be the view's element type "
                                       << view.getElementType();
  return verifyAccess(*this, view, getIndices().size(), getStaticIndices());
}

ParseResult StoreOp::parse(OpAsmParser &parser, OperationState &result) {
  return parseStore<StoreOp>(parser, result);
}

void StoreOp::print(OpAsmPrinter &p) { printStore(*this, p); }

LogicalResult StoreOp::verify() {
  auto view = llvm::cast<ViewType>(getView().getType());
  if (getValue().getType() != view.getElementType())
    return emitOpError("stored type ") << getValue().getType()
                                       << " must be the view's element type "
                                       << view.getElementType();
  return verifyAccess(*this, view, getIndices().size(), getStaticIndices());
}

//===-- view.reinterpret --------------------------------------------------===//

/// Elements from a view's start to the end of its farthest element.
static int64_t spanElements(ViewType view) {
  ArrayRef<int64_t> shape = view.getShape();
  if (llvm::is_contained(shape, 0))
    return 0;
  if (view.getStrides().empty())
    return ShapedType::getNumElements(shape);
  int64_t farthest = 0;
  for (auto [size, stride] : llvm::zip(shape, view.getStrides()))
    farthest += (size - 1) * stride;
  return farthest + 1;
}

LogicalResult ReinterpretOp::verify() {
  auto source = llvm::cast<ViewType>(getSource().getType());
  auto result = llvm::cast<ViewType>(getResult().getType());
  if (source.getNumDynamicDims() != 0 || result.getNumDynamicDims() != 0)
    return emitOpError("reinterprets static views only; got ") << source << " and " << result;
  if (!source.isContiguous())
    return emitOpError("reinterprets a row-major, contiguous view; ") << source
                                                                      << " has a strided layout";
  if (source.getElementType() != result.getElementType())
    return emitOpError("keeps the element type; got ")
           << source.getElementType() << " and " << result.getElementType();
  int64_t reach = spanElements(result), has = spanElements(source);
  if (reach > has)
    return emitOpError("reaches ") << reach << " elements from the start, past the " << has
                                   << " of " << source;
  return success();
}

//===-- view.part ---------------------------------------------------------===//

LogicalResult PartOp::verify() {
  auto source = llvm::cast<ViewType>(getSource().getType());
  auto result = llvm::cast<ViewType>(getResult().getType());
  if (source.getNumDynamicDims() != 0 || result.getNumDynamicDims() != 0)
    return emitOpError("takes parts of static views only; got ") << source << " and " << result;
  if (!source.isContiguous() || !result.isContiguous())
    return emitOpError("takes a row-major part of a row-major view; got ") << source << " and "
                                                                          << result;
  if (source.getShape().empty())
    return emitOpError("takes a part along the leading dimension; ") << source << " has none";
  if (source.getElementType() != result.getElementType())
    return emitOpError("keeps the element type; got ")
           << source.getElementType() << " and " << result.getElementType();
  if (result.getShape() != source.getShape().drop_front())
    return emitOpError("result must be ")
           << ViewType::get(getContext(), source.getShape().drop_front(), source.getElementType())
           << ", the source without its leading dimension; got "
           << result;
  APInt index;
  int64_t parts = source.getShape().front();
  if (matchPattern(getIndex(), m_ConstantInt(&index)) &&
      (index.isNegative() || index.getSExtValue() >= parts))
    return emitOpError("part ") << index.getSExtValue() << " is outside the " << parts
                                << " parts of " << source;
  return success();
}
