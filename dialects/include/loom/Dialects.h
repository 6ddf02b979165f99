//===- Dialects.h - every Loom dialect, its types and ops ------*- C++ -*-===//
//
// One umbrella header: Loom ops constrain operands with types of other Loom
// dialects, so every translation unit sees all declarations.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_DIALECTS_H
#define LOOM_DIALECTS_H

#include "loom/Support.h"

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/RegionKindInterface.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/CallInterfaces.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "BufferDialect.h.inc"
#include "PipelineDialect.h.inc"
#include "ViewDialect.h.inc"
#include "ChannelDialect.h.inc"
#include "KernelDialect.h.inc"
#include "Aie2pDialect.h.inc"
#include "FuncDialect.h.inc"
#include "ScfDialect.h.inc"
#include "CfgDialect.h.inc"
#include "IndexDialect.h.inc"
#include "ScalarDialect.h.inc"
#include "VectorDialect.h.inc"
#include "ConfigDialect.h.inc"

#define GET_TYPEDEF_CLASSES
#include "BufferTypes.h.inc"
#define GET_TYPEDEF_CLASSES
#include "PipelineTypes.h.inc"
#define GET_TYPEDEF_CLASSES
#include "ViewTypes.h.inc"
#define GET_TYPEDEF_CLASSES
#include "ChannelTypes.h.inc"
#define GET_TYPEDEF_CLASSES
#include "KernelTypes.h.inc"

#include "LoomInterfaces.h.inc"

#define GET_OP_CLASSES
#include "BufferOps.h.inc"
#define GET_OP_CLASSES
#include "PipelineOps.h.inc"
#define GET_OP_CLASSES
#include "ViewOps.h.inc"
#define GET_OP_CLASSES
#include "ChannelOps.h.inc"
#define GET_OP_CLASSES
#include "KernelOps.h.inc"
#define GET_OP_CLASSES
#include "Aie2pOps.h.inc"
#define GET_OP_CLASSES
#include "FuncOps.h.inc"
#define GET_OP_CLASSES
#include "ScfOps.h.inc"
#define GET_OP_CLASSES
#include "CfgOps.h.inc"
#define GET_OP_CLASSES
#include "IndexOps.h.inc"
#define GET_OP_CLASSES
#include "ScalarOps.h.inc"
#define GET_OP_CLASSES
#include "VectorOps.h.inc"
#define GET_OP_CLASSES
#include "ConfigOps.h.inc"

#endif // LOOM_DIALECTS_H
