//===- Support.h - syntax, naming and dimension helpers --------*- C++ -*-===//
//
// Declared before the generated op classes because their inline methods and
// custom assembly directives call into these helpers.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_SUPPORT_H
#define LOOM_SUPPORT_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OpImplementation.h"
#include "llvm/Support/SourceMgr.h"

#include <string>

namespace loom {

using mlir::FloatAttr;
using mlir::TypedAttr;
using mlir::OpAsmParser;
using mlir::OpAsmPrinter;
using mlir::Operation;
using mlir::ParseResult;
using mlir::StringAttr;
using mlir::Type;
using mlir::TypeRange;
using mlir::Value;
using mlir::ValueRange;
using UnresolvedOperand = mlir::OpAsmParser::UnresolvedOperand;

/// The integer element types arithmetic takes: signless i8, i16 and i32.
inline bool isLoomInteger(Type type) {
  return type.isSignlessInteger(8) || type.isSignlessInteger(16) || type.isSignlessInteger(32);
}

//===-- Names (Names.cpp) -------------------------------------------------===//

/// Store the source names of results and block arguments in their locations,
/// reading them from the Loom text the module was parsed from.
void attachSourceNames(mlir::ModuleOp module, llvm::SourceMgr &sources);
/// Record where a strand's `workers(...)` clause starts, for diagnostics about
/// its selection: the strand's location becomes a FusedLoc of its own
/// location and the clause's, tagged "loom.workers".
void attachClauseLocations(mlir::ModuleOp module, llvm::SourceMgr &sources);
/// The source name recorded for a value, or "" when it has none.
llvm::StringRef storedName(Value value);
/// Print the module body in Loom text: top-level ops without the module
/// wrapper, blank lines between them, Loom value and block names.
void printLoomText(mlir::ModuleOp module, llvm::raw_ostream &os);

void nameResults(Operation *op, mlir::OpAsmSetValueNameFn setName);
void nameBlockArguments(mlir::Region &region, mlir::OpAsmSetValueNameFn setName);
void nameBlocks(Operation *op, mlir::OpAsmSetBlockNameFn setName);

//===-- Dependent dimensions (Dims.cpp) -----------------------------------===//

/// Number of dynamic dimensions a Loom type carries (views, tiles, and the
/// records of channels and obligations).
unsigned countDynamicDims(Type type);
/// The values holding `value`'s dynamic dimensions, if its definition
/// records them (dependent-type ops, function and pipeline arguments).
std::optional<llvm::SmallVector<Value>> dimsOf(Value value);
/// Two dimension values are the same dimension: one value, or equal constants.
bool sameDim(Value a, Value b);
/// Position by position, `a` and `b` name the same dimensions; otherwise an
/// error on `op` starting with `what`.
mlir::LogicalResult verifySameDims(Operation *op, ValueRange a, ValueRange b, llvm::StringRef what);
/// Values of dependent types cannot be returned, yielded or passed to
/// blocks: nothing there could name their dimensions.
mlir::LogicalResult verifyNoDependentTypes(Operation *op, TypeRange types, llvm::StringRef what);
/// The shared verifier of DependentTypeOpInterface.
mlir::LogicalResult verifyTypeDims(Operation *op);
/// The dimension values of the `index`-th typed value of a dependent op.
ValueRange typeDimsOf(Operation *op, unsigned typedIndex);

//===-- Ownership (Ownership.cpp) -----------------------------------------===//

/// Check the channel ownership rules on a function or pipeline body: every
/// write/read obligation is published/released exactly once on every path,
/// no payload view is used after that, and copies into (out of) a record
/// have completed before it is published (released).
mlir::LogicalResult verifyOwnership(mlir::Region &body);

//===-- Syntax (Syntax.cpp) -----------------------------------------------===//

/// A Loom type: the bare names `buffer`, `offset`, `pool`,
/// `kernel.async.token`, `kernel.async.group`, the shaped `view<..>`,
/// `tile<..>`, `channel<..>`, `read<..>`, `write<..>`, or any MLIR type.
/// `[%v]` dimensions are appended to `dims`; without `dims` they are refused.
ParseResult parseLoomTypeWithDims(OpAsmParser &parser, Type &type,
                                  llvm::SmallVectorImpl<UnresolvedOperand> *dims);
/// Write a Loom type; `printDim` writes each dynamic dimension's name.
void renderLoomType(llvm::raw_ostream &os, Type type, llvm::function_ref<void()> printDim);
/// Print a Loom type, naming its dynamic dimensions with the front of `dims`
/// (which advances past them).
void printLoomTypeWithDims(OpAsmPrinter &printer, Type type, ValueRange &dims);

/// Parses the type lists of hand-written op parsers and resolves the
/// dimension values they name into the op's trailing `type_dims` operands.
class TypeListParser {
public:
  explicit TypeListParser(OpAsmParser &parser) : parser(parser) {}
  ParseResult parse(Type &type) { return parseLoomTypeWithDims(parser, type, &dims); }
  ParseResult parseList(llvm::SmallVectorImpl<Type> &types);
  ParseResult parseParenList(llvm::SmallVectorImpl<Type> &types);
  /// Resolve the named dimensions (all `index`) into `operands`.
  ParseResult resolve(llvm::SmallVectorImpl<Value> &operands);
  unsigned size() const { return dims.size(); }

private:
  OpAsmParser &parser;
  llvm::SmallVector<UnresolvedOperand> dims;
};

/// ODS custom directives.
ParseResult parseLoomType(OpAsmParser &parser, Type &type);
void printLoomType(OpAsmPrinter &printer, Operation *op, Type type);
ParseResult parseLoomTypes(OpAsmParser &parser, llvm::SmallVectorImpl<Type> &types);
void printLoomTypes(OpAsmPrinter &printer, Operation *op, TypeRange types);
ParseResult parseKeyword(OpAsmParser &parser, StringAttr &attr);
void printKeyword(OpAsmPrinter &printer, Operation *op, StringAttr attr);
ParseResult parseNumberLiteral(OpAsmParser &parser, TypedAttr &value, Type &type);
void printNumberLiteral(OpAsmPrinter &printer, Operation *op, TypedAttr value, Type type);

/// `[%i, 0, %j]`: mixed dynamic and constant positions.
ParseResult parseIndexList(OpAsmParser &parser,
                           llvm::SmallVectorImpl<UnresolvedOperand> &dynamic,
                           llvm::SmallVectorImpl<int64_t> &positions);
void printIndexList(OpAsmPrinter &printer, ValueRange dynamic,
                    llvm::ArrayRef<int64_t> positions);
/// Marks a dynamic entry in a position list.
constexpr int64_t kDynamicPosition = INT64_MIN;

/// The shortest decimal spelling that reads back to the same value.
std::string formatFloat(const llvm::APFloat &value);

/// `%a = [range(%a, 0, 480), multiple_of(%a, 32)]`-style fact lists, shared
/// by index.assume (facts about a value) and config.def (facts about a
/// configuration value, written without the value).
struct Facts {
  std::optional<std::pair<int64_t, int64_t>> range;
  std::optional<int64_t> multipleOf;
};
/// With a `subject`, every fact names it first and the list is required;
/// without, the list is optional.
ParseResult parseFacts(OpAsmParser &parser, Facts &facts,
                       std::optional<UnresolvedOperand> *subject);
void printFacts(OpAsmPrinter &printer, const Facts &facts, Value subject);
mlir::LogicalResult verifyFacts(Operation *op, const Facts &facts);
/// The facts kept in an op's optional `range` and `multiple_of` attributes.
Facts factsOf(std::optional<llvm::ArrayRef<int64_t>> range, std::optional<int64_t> divisor);
/// Store parsed facts as the `range` and `multiple_of` attributes.
void addFactAttributes(mlir::OperationState &result, const Facts &facts, StringAttr rangeName,
                       StringAttr divisorName);

/// Let MLIR's `inline` pass move this dialect's ops (Inliner.cpp).
void addInlinerInterface(mlir::Dialect *dialect);

} // namespace loom

#endif // LOOM_SUPPORT_H
