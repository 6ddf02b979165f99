//===- Vector.cpp - vector dialect: loads, stores and lane arithmetic -----===//

#include "loom/Dialects.h"
#include "loom/Access.h"

using namespace mlir;
using namespace loom;
using namespace loom::vector;

#include "VectorDialect.cpp.inc"
#define GET_OP_CLASSES
#include "VectorOps.cpp.inc"

void VectorDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "VectorOps.cpp.inc"
      >();
  addInlinerInterface(this);
}

static VectorType vectorOf(Value value) { return llvm::cast<VectorType>(value.getType()); }

static LogicalResult verifyOneDimensional(Operation *op, VectorType type) {
  if (type.getRank() != 1 || type.isScalable())
    return op->emitOpError("works on fixed one-dimensional vectors, got ") << type;
  return success();
}

OpFoldResult ConstantOp::fold(FoldAdaptor) {
  return SplatElementsAttr::get(llvm::cast<VectorType>(getType()), getValueAttr());
}

Operation *VectorDialect::materializeConstant(OpBuilder &builder, Attribute value, Type type,
                                              Location loc) {
  auto splat = llvm::dyn_cast<SplatElementsAttr>(value);
  auto vector = llvm::dyn_cast<VectorType>(type);
  if (!splat || !vector ||
      !(llvm::isa<FloatType>(vector.getElementType()) || isLoomInteger(vector.getElementType())))
    return nullptr;
  return builder.create<ConstantOp>(loc, type, splat.getSplatValue<TypedAttr>());
}

LogicalResult ConstantOp::verify() {
  auto type = llvm::cast<VectorType>(getType());
  if (getValueAttr().getType() != type.getElementType())
    return emitOpError("value of type ") << getValueAttr().getType()
                                         << " does not match the lane type "
                                         << type.getElementType();
  return verifyOneDimensional(*this, type);
}

//===-- vector.load / vector.store ----------------------------------------===//

/// Vector accesses read or write consecutive elements of the innermost view
/// dimension starting at the given position.
static LogicalResult verifyVectorAccess(Operation *op, VectorType vector, Type viewType,
                                        unsigned dynamicCount, ArrayRef<int64_t> positions) {
  auto view = llvm::cast<view::ViewType>(viewType);
  if (failed(verifyOneDimensional(op, vector)))
    return failure();
  if (view.getShape().empty())
    return op->emitOpError("needs a view of rank 1 or more to access vectors, got ") << view;
  if (vector.getElementType() != view.getElementType())
    return op->emitOpError("vector lanes of ")
           << vector.getElementType() << " do not match the view's " << view.getElementType();
  if (failed(verifyAccess(op, view, dynamicCount, positions)))
    return failure();
  if (!view.getStrides().empty() && view.getStrides().back() != 1)
    return op->emitOpError("accesses consecutive elements, but the view's innermost stride is ")
           << view.getStrides().back() << ": " << view;
  int64_t inner = view.getShape().back();
  int64_t start = positions.back();
  if (!ShapedType::isDynamic(inner) && start != kDynamicPosition &&
      start + vector.getNumElements() > inner)
    return op->emitOpError("accesses elements ")
           << start << ".." << start + vector.getNumElements() - 1
           << " of an innermost dimension of size " << inner;
  return success();
}

ParseResult LoadOp::parse(OpAsmParser &parser, OperationState &result) {
  return parseLoad<LoadOp>(parser, result);
}

void LoadOp::print(OpAsmPrinter &p) { printLoad(*this, p); }

LogicalResult LoadOp::verify() {
  return verifyVectorAccess(*this, vectorOf(getResult()), getView().getType(),
                            getIndices().size(), getStaticIndices());
}

ParseResult StoreOp::parse(OpAsmParser &parser, OperationState &result) {
  return parseStore<StoreOp>(parser, result);
}

void StoreOp::print(OpAsmPrinter &p) { printStore(*this, p); }

LogicalResult StoreOp::verify() {
  return verifyVectorAccess(*this, vectorOf(getValue()), getView().getType(),
                            getIndices().size(), getStaticIndices());
}

//===-- arithmetic --------------------------------------------------------===//

LogicalResult Dot2FOp::verify() {
  VectorType inputs = vectorOf(getLhs()), accumulator = vectorOf(getAccumulator());
  if (failed(verifyOneDimensional(*this, inputs)) ||
      failed(verifyOneDimensional(*this, accumulator)))
    return failure();
  if (!inputs.getElementType().isBF16() || !accumulator.getElementType().isF32())
    return emitOpError("multiplies bf16 lanes into an f32 accumulator, got ")
           << inputs << " and " << accumulator;
  if (inputs.getNumElements() != 2 * accumulator.getNumElements())
    return emitOpError("needs two input lanes per accumulator lane: ")
           << inputs.getNumElements() << " inputs for " << accumulator.getNumElements()
           << " accumulator lanes";
  return success();
}

LogicalResult SplatOp::verify() { return verifyOneDimensional(*this, vectorOf(getResult())); }

LogicalResult InterleaveOp::verify() {
  VectorType input = vectorOf(getLhs()), result = vectorOf(getResult());
  if (getModeAttr().getInt() != 0)
    return emitOpError("supports interleave mode 0 (alternate lanes), got ")
           << getModeAttr().getInt();
  if (result.getElementType() != input.getElementType() ||
      result.getNumElements() != 2 * input.getNumElements())
    return emitOpError("result must hold both inputs' lanes: expected ")
           << VectorType::get({2 * input.getNumElements()}, input.getElementType()) << ", got "
           << result;
  return verifyOneDimensional(*this, input);
}

static LogicalResult verifyConvert(Operation *op, bool narrow) {
  VectorType input = vectorOf(op->getOperand(0)), result = vectorOf(op->getResult(0));
  if (input.getShape() != result.getShape())
    return op->emitOpError("converts lane by lane: ") << input << " and " << result
                                                      << " differ in shape";
  unsigned from = input.getElementType().getIntOrFloatBitWidth();
  unsigned to = result.getElementType().getIntOrFloatBitWidth();
  if (narrow ? to >= from : to <= from)
    return op->emitOpError(narrow ? "must narrow: " : "must widen: ")
           << input << " to " << result;
  return success();
}

LogicalResult FPTruncOp::verify() { return verifyConvert(*this, /*narrow=*/true); }
LogicalResult ExtFOp::verify() { return verifyConvert(*this, /*narrow=*/false); }

LogicalResult ExtractOp::verify() {
  VectorType input = vectorOf(getInput());
  if (failed(verifyOneDimensional(*this, input)))
    return failure();
  if (getPosition().size() != 1)
    return emitOpError("takes one lane position, got ") << getPosition().size();
  int64_t lane = getPosition().front();
  if (lane < 0 || lane >= input.getNumElements())
    return emitOpError("lane ") << lane << " is out of bounds for " << input;
  if (getResult().getType() != input.getElementType())
    return emitOpError("result type must be the lane type ") << input.getElementType();
  return success();
}

//===-- integer lanes -----------------------------------------------------===//

LogicalResult AddIOp::verify() { return verifyOneDimensional(*this, vectorOf(getResult())); }
LogicalResult SubIOp::verify() { return verifyOneDimensional(*this, vectorOf(getResult())); }
LogicalResult MulIOp::verify() { return verifyOneDimensional(*this, vectorOf(getResult())); }

LogicalResult MacOp::verify() {
  VectorType inputs = vectorOf(getLhs()), accumulator = vectorOf(getAccumulator());
  if (failed(verifyOneDimensional(*this, inputs)) ||
      failed(verifyOneDimensional(*this, accumulator)))
    return failure();
  Type lane = inputs.getElementType();
  if (!(lane.isSignlessInteger(8) || lane.isSignlessInteger(16)) ||
      !accumulator.getElementType().isSignlessInteger(32))
    return emitOpError("multiplies i8 or i16 lanes into an i32 accumulator, got ")
           << inputs << " and " << accumulator;
  if (inputs.getNumElements() != accumulator.getNumElements())
    return emitOpError("needs one accumulator lane per input lane: ")
           << inputs.getNumElements() << " inputs for " << accumulator.getNumElements()
           << " accumulator lanes";
  return success();
}

LogicalResult MmacOp::verify() {
  VectorType a = vectorOf(getLhs()), b = vectorOf(getRhs()), acc = vectorOf(getAccumulator());
  if (failed(verifyOneDimensional(*this, a)) || failed(verifyOneDimensional(*this, b)) ||
      failed(verifyOneDimensional(*this, acc)))
    return failure();
  ArrayRef<int64_t> shape = getShape();
  if (shape.size() != 3 || llvm::any_of(shape, [](int64_t d) { return d < 1; }))
    return emitOpError("shape must be [m, k, n], three positive sizes");
  int64_t m = shape[0], k = shape[1], n = shape[2];
  Type lane = a.getElementType(), sum = acc.getElementType();
  if (b.getElementType() != lane)
    return emitOpError("multiplies blocks of one element type, got ") << a << " and " << b;
  bool integers = (lane.isSignlessInteger(8) || lane.isSignlessInteger(16)) &&
                  sum.isSignlessInteger(32);
  if (!integers && !(lane.isBF16() && sum.isF32()))
    return emitOpError("multiplies i8 or i16 blocks into i32, or bf16 blocks into f32, got ")
           << a << " and " << acc;
  auto check = [&](VectorType type, int64_t rows, int64_t columns, StringRef what) -> LogicalResult {
    if (type.getNumElements() == rows * columns)
      return success();
    return emitOpError() << what << " must be a " << rows << " x " << columns << " block ("
                         << rows * columns << " lanes), got " << type.getNumElements() << " lanes";
  };
  return success(succeeded(check(a, m, k, "lhs")) && succeeded(check(b, k, n, "rhs")) &&
                 succeeded(check(acc, m, n, "accumulator")));
}

LogicalResult SrsOp::verify() {
  VectorType input = vectorOf(getInput()), result = vectorOf(getResult());
  if (failed(verifyOneDimensional(*this, input)) || failed(verifyOneDimensional(*this, result)))
    return failure();
  if (!input.getElementType().isSignlessInteger(32) ||
      result.getElementType().getIntOrFloatBitWidth() >= 32)
    return emitOpError("narrows i32 lanes to i8 or i16 lanes, got ") << input << " to " << result;
  if (input.getNumElements() != result.getNumElements())
    return emitOpError("keeps the lane count: ") << input.getNumElements() << " lanes to "
                                                 << result.getNumElements();
  if (getShift() < 0 || getShift() > 31)
    return emitOpError("shifts by 0 to 31 bits, got ") << getShift();
  return success();
}
