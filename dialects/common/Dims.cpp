//===- Dims.cpp - dependent dimensions: where they live, how they check ---===//
//
// A Loom type such as `view<2x[%n]xbf16>` records `?` for the dimension; the
// value `%n` lives next to it:
//  - an op that spells a dependent type in its type list keeps the named
//    values as its trailing `type_dims` operands (DependentTypeOpInterface);
//  - function and pipeline arguments name other arguments, recorded in the
//    definition's `arg_dims` (argument indices).
// Every operand type an op spells must name the same dimensions (same value
// or equal constants) as the operand's definition recorded.
//
//===----------------------------------------------------------------------===//

#include "loom/Dialects.h"

#include "mlir/IR/Matchers.h"

#include "LoomInterfaces.cpp.inc"

using namespace mlir;

namespace loom {

unsigned countDynamicDims(Type type) {
  auto count = [](ArrayRef<int64_t> shape) {
    return static_cast<unsigned>(llvm::count_if(shape, ShapedType::isDynamic));
  };
  if (auto view = llvm::dyn_cast<view::ViewType>(type))
    return count(view.getShape());
  if (auto tile = llvm::dyn_cast<channel::TileType>(type))
    return count(tile.getShape());
  if (auto ch = llvm::dyn_cast<channel::ChannelType>(type))
    return countDynamicDims(ch.getRecord());
  if (auto read = llvm::dyn_cast<channel::ReadType>(type))
    return countDynamicDims(read.getRecord());
  if (auto write = llvm::dyn_cast<channel::WriteType>(type))
    return countDynamicDims(write.getRecord());
  return 0;
}

ValueRange typeDimsOf(Operation *op, unsigned typedIndex) {
  auto dependent = llvm::cast<DependentTypeOpInterface>(op);
  SmallVector<Value> typed = dependent.getTypedValues();
  ValueRange dims = dependent.getTypeDims();
  unsigned offset = 0;
  for (unsigned i = 0; i < typedIndex; ++i)
    offset += countDynamicDims(typed[i].getType());
  unsigned count = countDynamicDims(typed[typedIndex].getType());
  if (offset + count > dims.size())
    return {};
  return dims.slice(offset, count);
}

/// Argument dimensions of a function-like definition: `arg_dims` holds, for
/// every dynamic dimension of the argument types in order, an argument index.
static std::optional<SmallVector<Value>> argumentDims(BlockArgument arg) {
  Block *block = arg.getOwner();
  if (!block->isEntryBlock())
    return std::nullopt;
  Operation *owner = block->getParentOp();
  auto argDims = owner ? owner->getAttrOfType<DenseI64ArrayAttr>("arg_dims") : nullptr;
  if (!argDims)
    return std::nullopt;
  unsigned offset = 0;
  for (unsigned i = 0; i < arg.getArgNumber(); ++i)
    offset += countDynamicDims(block->getArgument(i).getType());
  unsigned count = countDynamicDims(arg.getType());
  if (offset + count > argDims.size())
    return std::nullopt;
  SmallVector<Value> dims;
  for (int64_t index : argDims.asArrayRef().slice(offset, count)) {
    if (index < 0 || index >= block->getNumArguments())
      return std::nullopt;
    dims.push_back(block->getArgument(index));
  }
  return dims;
}

std::optional<SmallVector<Value>> dimsOf(Value value) {
  if (countDynamicDims(value.getType()) == 0)
    return SmallVector<Value>();
  if (auto arg = llvm::dyn_cast<BlockArgument>(value))
    return argumentDims(arg);
  Operation *def = value.getDefiningOp();
  auto dependent = llvm::dyn_cast<DependentTypeOpInterface>(def);
  if (!dependent)
    return std::nullopt;
  SmallVector<Value> typed = dependent.getTypedValues();
  for (auto [index, candidate] : llvm::enumerate(typed))
    if (candidate == value) {
      ValueRange dims = typeDimsOf(def, index);
      return SmallVector<Value>(dims.begin(), dims.end());
    }
  return std::nullopt;
}

bool sameDim(Value a, Value b) {
  if (a == b)
    return true;
  APInt left, right;
  return matchPattern(a, m_ConstantInt(&left)) && matchPattern(b, m_ConstantInt(&right)) &&
         left.getSExtValue() == right.getSExtValue();
}

LogicalResult verifySameDims(Operation *op, ValueRange a, ValueRange b, StringRef what) {
  for (auto [index, pair] : llvm::enumerate(llvm::zip(a, b)))
    if (!sameDim(std::get<0>(pair), std::get<1>(pair)))
      return op->emitOpError(what) << ": dependent dimension " << index
                                   << " names a different value";
  return success();
}

LogicalResult verifyNoDependentTypes(Operation *op, TypeRange types, StringRef what) {
  for (Type type : types)
    if (countDynamicDims(type) != 0)
      return op->emitOpError("cannot ")
             << what << " a value of dependent type " << type
             << ": nothing there can name its dimensions; pass the value where it is used "
                "instead";
  return success();
}

LogicalResult verifyTypeDims(Operation *op) {
  auto dependent = llvm::cast<DependentTypeOpInterface>(op);
  SmallVector<Value> typed = dependent.getTypedValues();
  ValueRange dims = dependent.getTypeDims();
  unsigned expected = 0;
  for (Value value : typed)
    expected += countDynamicDims(value.getType());
  if (expected != dims.size())
    return op->emitOpError("type list has ")
           << expected << " dependent dimensions but names " << dims.size() << " values";
  unsigned offset = 0;
  for (auto [index, value] : llvm::enumerate(typed)) {
    unsigned count = countDynamicDims(value.getType());
    ValueRange named = dims.slice(offset, count);
    offset += count;
    if (count == 0 || value.getDefiningOp() == op)
      continue;
    std::optional<SmallVector<Value>> defined = dimsOf(value);
    if (!defined)
      return op->emitOpError("cannot relate the dependent dimensions of type #")
             << index << " to the definition of its value; dependent types are "
                "supported on values defined by ops that spell them and on "
                "function and pipeline arguments";
    for (unsigned d = 0; d < count; ++d)
      if (!sameDim(named[d], (*defined)[d]))
        return op->emitOpError("dimension ")
               << d << " of type #" << index << " (" << value.getType()
               << ") names a different value than the definition of the value it describes";
  }
  return success();
}

} // namespace loom
