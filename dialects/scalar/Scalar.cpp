//===- Scalar.cpp - scalar dialect: float constants and conversions -------===//

#include "loom/Dialects.h"

using namespace mlir;
using namespace loom;
using namespace loom::scalar;

#include "ScalarDialect.cpp.inc"
#define GET_OP_CLASSES
#include "ScalarOps.cpp.inc"

void ScalarDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "ScalarOps.cpp.inc"
      >();
  addInlinerInterface(this);
}

OpFoldResult ConstantOp::fold(FoldAdaptor) { return getValueAttr(); }

LogicalResult ConstantOp::verify() {
  if (getValueAttr().getType() != getType())
    return emitOpError("value of type ") << getValueAttr().getType()
                                         << " does not match result type " << getType();
  return success();
}

static unsigned widthOf(Type type) { return llvm::cast<FloatType>(type).getWidth(); }

LogicalResult FPTruncOp::verify() {
  if (widthOf(getResult().getType()) >= widthOf(getInput().getType()))
    return emitOpError("must narrow: ") << getInput().getType() << " to "
                                        << getResult().getType();
  return success();
}

LogicalResult ExtFOp::verify() {
  if (widthOf(getResult().getType()) <= widthOf(getInput().getType()))
    return emitOpError("must widen: ") << getInput().getType() << " to "
                                       << getResult().getType();
  return success();
}
