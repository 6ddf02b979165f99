//! Small, safe-to-call helpers over MLIR's C API that every pass shares:
//! names, attributes, walks, uses, constants and building ops by name.
//!
//! Every function takes live IR handles owned by the running pass manager;
//! that is the one invariant their `unsafe` blocks rely on.

use crate::names;
pub mod capi;
pub mod rewrite;

use capi as ffi;
use mlir_sys::*;
use std::ffi::c_void;

pub fn string_ref(text: &str) -> MlirStringRef {
    MlirStringRef {
        data: text.as_ptr() as *const _,
        length: text.len(),
    }
}

pub fn text(s: MlirStringRef) -> String {
    if s.length == 0 {
        return String::new();
    }
    // SAFETY: MLIR string refs point at `length` valid bytes.
    let bytes = unsafe { std::slice::from_raw_parts(s.data as *const u8, s.length) };
    String::from_utf8_lossy(bytes).into_owned()
}

pub fn op_name(op: MlirOperation) -> String {
    // SAFETY: a live operation.
    unsafe { text(mlirIdentifierStr(mlirOperationGetName(op))) }
}

pub fn context(op: MlirOperation) -> MlirContext {
    // SAFETY: a live operation.
    unsafe { mlirOperationGetContext(op) }
}

pub fn location(op: MlirOperation) -> MlirLocation {
    // SAFETY: a live operation.
    unsafe { mlirOperationGetLocation(op) }
}

/// Where a clause of `op` starts (`"loom.workers"`: a strand's `workers(...)`),
/// when the parser recorded it in the op's location; otherwise the op's own.
pub fn clause_location(op: MlirOperation, tag: &str) -> MlirLocation {
    fn find(loc: MlirLocation, tag: &str) -> Option<MlirLocation> {
        // SAFETY: a live location; the parts are written into a buffer of
        // their number.
        unsafe {
            if !mlirLocationIsAFused(loc) {
                return None;
            }
            let n = mlirLocationFusedGetNumLocations(loc) as usize;
            let mut parts = vec![
                MlirLocation {
                    ptr: std::ptr::null()
                };
                n
            ];
            mlirLocationFusedGetLocations(loc, parts.as_mut_ptr());
            let metadata = mlirLocationFusedGetMetadata(loc);
            let tagged = !metadata.ptr.is_null()
                && mlirAttributeIsAString(metadata)
                && text(mlirStringAttrGetValue(metadata)) == tag;
            if tagged && n == 2 {
                return Some(parts[1]);
            }
            parts.into_iter().find_map(|part| find(part, tag))
        }
    }
    let own = location(op);
    find(own, tag).unwrap_or(own)
}

/// The attribute `name` of `op`, if present.
pub fn attribute(op: MlirOperation, name: &str) -> Option<MlirAttribute> {
    // SAFETY: a live operation; a null attribute when absent.
    let attr = unsafe { mlirOperationGetAttributeByName(op, string_ref(name)) };
    (!attr.ptr.is_null()).then_some(attr)
}

/// The value of an integer attribute of `op`, if it has one by that name.
pub fn int_attribute(op: MlirOperation, name: &str) -> Option<i64> {
    attribute(op, name)
        // SAFETY: a live attribute, checked to be an integer.
        .filter(|&a| unsafe { mlirAttributeIsAInteger(a) })
        .map(|a| unsafe { mlirIntegerAttrGetValueInt(a) })
}

/// The value of a float attribute of `op` (a splat's element for a dense
/// one), if it has one by that name.
pub fn float_attribute(op: MlirOperation, name: &str) -> Option<f64> {
    let attr = attribute(op, name)?;
    // SAFETY: a live attribute, checked to be a float or a dense splat of
    // floats before reading it.
    unsafe {
        if mlirAttributeIsAFloat(attr) {
            return Some(mlirFloatAttrGetValueDouble(attr));
        }
        if mlirAttributeIsADenseFPElements(attr) && mlirDenseElementsAttrIsSplat(attr) {
            let element = mlirDenseElementsAttrGetSplatValue(attr);
            if mlirAttributeIsAFloat(element) {
                return Some(mlirFloatAttrGetValueDouble(element));
            }
        }
    }
    None
}

pub fn set_attribute(op: MlirOperation, name: &str, value: MlirAttribute) {
    // SAFETY: a live operation and attribute.
    unsafe { mlirOperationSetAttributeByName(op, string_ref(name), value) }
}

pub fn string_attribute(op: MlirOperation, name: &str) -> Option<String> {
    // SAFETY: the attribute is checked to be a string before reading it.
    attribute(op, name)
        .filter(|a| unsafe { mlirAttributeIsAString(*a) })
        .map(|a| unsafe { text(mlirStringAttrGetValue(a)) })
}

/// The symbol an op names in its flat symbol reference attribute `name`.
pub fn symbol_ref(op: MlirOperation, name: &str) -> Option<String> {
    // SAFETY: the attribute is checked to be a flat symbol reference.
    attribute(op, name)
        .filter(|a| unsafe { mlirAttributeIsAFlatSymbolRef(*a) })
        .map(|a| unsafe { text(mlirFlatSymbolRefAttrGetValue(a)) })
}

pub fn symbol_name(op: MlirOperation) -> Option<String> {
    string_attribute(op, "sym_name")
}

pub fn flat_symbol_ref_attr(ctx: MlirContext, symbol: &str) -> MlirAttribute {
    // SAFETY: the context copies the string.
    unsafe { mlirFlatSymbolRefAttrGet(ctx, string_ref(symbol)) }
}

pub fn string_attr(ctx: MlirContext, value: &str) -> MlirAttribute {
    // SAFETY: the context copies the string.
    unsafe { mlirStringAttrGet(ctx, string_ref(value)) }
}

pub fn i64_attr(ctx: MlirContext, value: i64) -> MlirAttribute {
    // SAFETY: plain attribute construction.
    unsafe { mlirIntegerAttrGet(mlirIntegerTypeGet(ctx, 64), value) }
}

pub fn unit_attr(ctx: MlirContext) -> MlirAttribute {
    // SAFETY: plain attribute construction.
    unsafe { mlirUnitAttrGet(ctx) }
}

pub fn dense_i64_attr(ctx: MlirContext, values: &[i64]) -> MlirAttribute {
    // SAFETY: the attribute copies `values`.
    unsafe { mlirDenseI64ArrayGet(ctx, values.len() as isize, values.as_ptr()) }
}

pub fn dense_i32_attr(ctx: MlirContext, values: &[i32]) -> MlirAttribute {
    // SAFETY: the attribute copies `values`.
    unsafe { mlirDenseI32ArrayGet(ctx, values.len() as isize, values.as_ptr()) }
}

pub fn dense_i64_values(attr: MlirAttribute) -> Vec<i64> {
    // SAFETY: callers pass a dense i64 array attribute.
    unsafe {
        (0..mlirDenseArrayGetNumElements(attr))
            .map(|i| mlirDenseI64ArrayGetElement(attr, i))
            .collect()
    }
}

unsafe extern "C" fn collect(op: MlirOperation, data: *mut c_void) -> MlirWalkResult {
    // SAFETY: `data` is the Vec passed by `walk`.
    unsafe { (*(data as *mut Vec<MlirOperation>)).push(op) };
    MlirWalkResult_MlirWalkResultAdvance
}

/// `root` and every op nested in it, parents before children.
pub fn walk(root: MlirOperation) -> Vec<MlirOperation> {
    let mut found = Vec::new();
    // SAFETY: the callback only records the operations it is given.
    unsafe {
        mlirOperationWalk(
            root,
            Some(collect),
            &mut found as *mut Vec<MlirOperation> as *mut c_void,
            MlirWalkOrder_MlirWalkPreOrder,
        )
    };
    found
}

/// The ops directly in the body of `module` (or of any single-region op).
pub fn top_level_ops(module: MlirOperation) -> Vec<MlirOperation> {
    // SAFETY: a live op with one region.
    unsafe {
        let region = mlirOperationGetRegion(module, 0);
        blocks(region).into_iter().flat_map(ops_of).collect()
    }
}

/// The module's top-level symbols by name.
pub fn symbols(module: MlirOperation) -> std::collections::BTreeMap<String, MlirOperation> {
    top_level_ops(module)
        .into_iter()
        .filter_map(|op| symbol_name(op).map(|name| (name, op)))
        .collect()
}

/// The first `PREFIX0`, `PREFIX1`, ... not in `taken`, now taken.
pub fn fresh_symbol(taken: &mut std::collections::BTreeSet<String>, prefix: &str) -> String {
    let name = (0..)
        .map(|n| format!("{prefix}{n}"))
        .find(|name| !taken.contains(name))
        .expect("an unbounded range has a free name");
    taken.insert(name.clone());
    name
}

pub fn blocks(region: MlirRegion) -> Vec<MlirBlock> {
    let mut found = Vec::new();
    // SAFETY: iterating a live region's block list.
    unsafe {
        let mut block = mlirRegionGetFirstBlock(region);
        while !block.ptr.is_null() {
            found.push(block);
            block = mlirBlockGetNextInRegion(block);
        }
    }
    found
}

pub fn ops_of(block: MlirBlock) -> Vec<MlirOperation> {
    let mut found = Vec::new();
    // SAFETY: iterating a live block's op list.
    unsafe {
        let mut op = mlirBlockGetFirstOperation(block);
        while !op.ptr.is_null() {
            found.push(op);
            op = mlirOperationGetNextInBlock(op);
        }
    }
    found
}

pub fn regions(op: MlirOperation) -> Vec<MlirRegion> {
    // SAFETY: a live operation.
    unsafe {
        (0..mlirOperationGetNumRegions(op))
            .map(|i| mlirOperationGetRegion(op, i))
            .collect()
    }
}

pub fn operands(op: MlirOperation) -> Vec<MlirValue> {
    // SAFETY: a live operation.
    unsafe {
        (0..mlirOperationGetNumOperands(op))
            .map(|i| mlirOperationGetOperand(op, i))
            .collect()
    }
}

pub fn results(op: MlirOperation) -> Vec<MlirValue> {
    // SAFETY: a live operation.
    unsafe {
        (0..mlirOperationGetNumResults(op))
            .map(|i| mlirOperationGetResult(op, i))
            .collect()
    }
}

pub fn arguments(block: MlirBlock) -> Vec<MlirValue> {
    // SAFETY: a live block.
    unsafe {
        (0..mlirBlockGetNumArguments(block))
            .map(|i| mlirBlockGetArgument(block, i))
            .collect()
    }
}

pub fn value_type(value: MlirValue) -> MlirType {
    // SAFETY: a live value.
    unsafe { mlirValueGetType(value) }
}

/// The op that owns `value` (its definition, or the op whose region holds
/// the block argument).
pub fn owner_op(value: MlirValue) -> MlirOperation {
    // SAFETY: a live value.
    unsafe {
        if mlirValueIsAOpResult(value) {
            mlirOpResultGetOwner(value)
        } else {
            mlirBlockGetParentOperation(mlirBlockArgumentGetOwner(value))
        }
    }
}

pub fn parent_op(op: MlirOperation) -> Option<MlirOperation> {
    // SAFETY: a live operation; null at the top.
    let parent = unsafe { mlirOperationGetParentOperation(op) };
    (!parent.ptr.is_null()).then_some(parent)
}

/// Whether `op` is `ancestor` or nested inside it.
pub fn is_within(op: MlirOperation, ancestor: MlirOperation) -> bool {
    let mut current = Some(op);
    while let Some(candidate) = current {
        // SAFETY: comparing live handles.
        if unsafe { mlirOperationEqual(candidate, ancestor) } {
            return true;
        }
        current = parent_op(candidate);
    }
    false
}

/// Whether `value` is defined inside `ancestor` (by an op in it, or as an
/// argument of one of its blocks).
pub fn defined_within(value: MlirValue, ancestor: MlirOperation) -> bool {
    // SAFETY: a live value.
    unsafe {
        if mlirValueIsAOpResult(value) {
            is_within(mlirOpResultGetOwner(value), ancestor)
        } else {
            is_within(
                mlirBlockGetParentOperation(mlirBlockArgumentGetOwner(value)),
                ancestor,
            )
        }
    }
}

/// Every (user, operand number) of `value`.
pub fn uses(value: MlirValue) -> Vec<(MlirOperation, isize)> {
    let mut found = Vec::new();
    // SAFETY: iterating a live value's use list.
    unsafe {
        let mut operand = mlirValueGetFirstUse(value);
        while !operand.ptr.is_null() {
            found.push((
                mlirOpOperandGetOwner(operand),
                mlirOpOperandGetOperandNumber(operand) as isize,
            ));
            operand = mlirOpOperandGetNextUse(operand);
        }
    }
    found
}

pub fn replace_all_uses(of: MlirValue, with: MlirValue) {
    // SAFETY: live values of the same type.
    unsafe { mlirValueReplaceAllUsesOfWith(of, with) }
}

/// The value an `index.constant` defines, if `value` comes from one.
pub fn constant_int(value: MlirValue) -> Option<i64> {
    // SAFETY: a live value; the attribute is checked to be an integer.
    unsafe {
        if !mlirValueIsAOpResult(value) {
            return None;
        }
        let def = mlirOpResultGetOwner(value);
        if op_name(def) != names::index::CONSTANT {
            return None;
        }
        int_attribute(def, "value")
    }
}

/// The source name `value` carries ("" when none).
pub fn value_name(value: MlirValue) -> String {
    // SAFETY: a live value.
    unsafe { text(ffi::loomValueName(value)) }
}

/// A location that gives its value the source name `name`.
pub fn named_location(ctx: MlirContext, name: &str) -> MlirLocation {
    // SAFETY: plain location construction.
    unsafe {
        if name.is_empty() {
            mlirLocationUnknownGet(ctx)
        } else {
            mlirLocationNameGet(ctx, string_ref(name), mlirLocationUnknownGet(ctx))
        }
    }
}

pub fn unknown_location(ctx: MlirContext) -> MlirLocation {
    // SAFETY: plain location construction.
    unsafe { mlirLocationUnknownGet(ctx) }
}

/// The values holding the dynamic dimensions of `value`'s type, or None
/// when they cannot be traced.
pub fn value_dims(value: MlirValue) -> Option<Vec<MlirValue>> {
    // SAFETY: the buffer holds `capacity` values; the call writes at most that.
    unsafe {
        let count = ffi::loomValueDims(value, std::ptr::null_mut(), 0);
        if count < 0 {
            return None;
        }
        let mut dims = vec![
            MlirValue {
                ptr: std::ptr::null()
            };
            count as usize
        ];
        ffi::loomValueDims(value, dims.as_mut_ptr(), count);
        Some(dims)
    }
}

pub fn is_pure(op: MlirOperation) -> bool {
    // SAFETY: a live operation.
    unsafe { ffi::loomOperationIsPure(op) }
}

pub fn same_value(a: MlirValue, b: MlirValue) -> bool {
    // SAFETY: comparing handles.
    unsafe { mlirValueEqual(a, b) }
}

/// What an op is built from; `build` creates it detached.
pub struct OpSpec<'a> {
    pub name: &'a str,
    pub location: MlirLocation,
    pub operands: Vec<MlirValue>,
    pub results: Vec<MlirType>,
    pub attributes: Vec<(&'a str, MlirAttribute)>,
    pub successors: Vec<MlirBlock>,
    pub regions: usize,
}

impl<'a> OpSpec<'a> {
    pub fn new(name: &'a str, location: MlirLocation) -> Self {
        OpSpec {
            name,
            location,
            operands: Vec::new(),
            results: Vec::new(),
            attributes: Vec::new(),
            successors: Vec::new(),
            regions: 0,
        }
    }

    pub fn build(self) -> MlirOperation {
        // SAFETY: the state copies every array it is given before `create`
        // returns; regions are created empty and owned by the new op.
        unsafe {
            let ctx = mlirLocationGetContext(self.location);
            let mut state = mlirOperationStateGet(string_ref(self.name), self.location);
            mlirOperationStateAddOperands(
                &mut state,
                self.operands.len() as isize,
                self.operands.as_ptr(),
            );
            mlirOperationStateAddResults(
                &mut state,
                self.results.len() as isize,
                self.results.as_ptr(),
            );
            let named: Vec<MlirNamedAttribute> = self
                .attributes
                .iter()
                .map(|(name, attr)| {
                    mlirNamedAttributeGet(mlirIdentifierGet(ctx, string_ref(name)), *attr)
                })
                .collect();
            mlirOperationStateAddAttributes(&mut state, named.len() as isize, named.as_ptr());
            mlirOperationStateAddSuccessors(
                &mut state,
                self.successors.len() as isize,
                self.successors.as_ptr(),
            );
            let regions: Vec<MlirRegion> = (0..self.regions).map(|_| mlirRegionCreate()).collect();
            mlirOperationStateAddOwnedRegions(&mut state, regions.len() as isize, regions.as_ptr());
            mlirOperationCreate(&mut state)
        }
    }
}

/// A detached `index.constant` of `value`, of type `ty` (index or offset),
/// at `loc`.
pub fn index_constant(loc: MlirLocation, value: i64, ty: MlirType) -> MlirOperation {
    let mut spec = OpSpec::new(names::index::CONSTANT, loc);
    spec.attributes = vec![("value", i64_attr(location_context(loc), value))];
    spec.results = vec![ty];
    spec.build()
}

/// Insert a detached op before `anchor`.
pub fn insert_before(anchor: MlirOperation, op: MlirOperation) {
    // SAFETY: `op` is detached; `anchor` is in a block.
    unsafe { mlirBlockInsertOwnedOperationBefore(mlirOperationGetBlock(anchor), anchor, op) }
}

/// Append a detached op to `block`.
pub fn append(block: MlirBlock, op: MlirOperation) {
    // SAFETY: `op` is detached.
    unsafe { mlirBlockAppendOwnedOperation(block, op) }
}

/// The terminator of `block`, if its last op is one.
pub fn terminator(block: MlirBlock) -> Option<MlirOperation> {
    // SAFETY: a live block; null when it has no terminator.
    let op = unsafe { mlirBlockGetTerminator(block) };
    (!op.ptr.is_null()).then_some(op)
}

pub fn index_type(ctx: MlirContext) -> MlirType {
    // SAFETY: plain type construction.
    unsafe { mlirIndexTypeGet(ctx) }
}

pub fn i1_type(ctx: MlirContext) -> MlirType {
    // SAFETY: plain type construction.
    unsafe { mlirIntegerTypeGet(ctx, 1) }
}

/// What one of MLIR's print functions writes, as a String.
pub fn printed(print: impl FnOnce(MlirStringCallback, *mut c_void)) -> String {
    let mut out = String::new();
    unsafe extern "C" fn append(piece: MlirStringRef, data: *mut c_void) {
        // SAFETY: `data` is the String below; MLIR passes valid bytes.
        unsafe { (*(data as *mut String)).push_str(&text(piece)) };
    }
    print(Some(append), &mut out as *mut String as *mut _);
    out
}

/// `file:line:col` of a location, or "" when it has none.
pub fn location_text(loc: MlirLocation) -> String {
    // SAFETY: a live location.
    let printed = printed(|f, d| unsafe { mlirLocationPrint(loc, f, d) });
    // The first `"file":line:col` inside (names and comments wrap it).
    let Some(start) = printed.find('"') else {
        return String::new();
    };
    let mut rest = &printed[start..];
    while let Some(open) = rest.find('"') {
        let after = &rest[open + 1..];
        let Some(close) = after.find('"') else { break };
        let file = &after[..close];
        let tail = &after[close + 1..];
        if let Some(numbers) = tail.strip_prefix(':') {
            let end = numbers
                .find(|c: char| !(c.is_ascii_digit() || c == ':'))
                .unwrap_or(numbers.len());
            return format!("{file}:{}", &numbers[..end]);
        }
        rest = tail;
    }
    String::new()
}

pub fn type_text(ty: MlirType) -> String {
    // SAFETY: a live type.
    printed(|f, d| unsafe { mlirTypePrint(ty, f, d) })
}

/// The text between a view or tile type's outer `<>` and its strided
/// layout's strides, if it has one: `!view.view<4x64xf32, strided<[1, 64]>>`
/// is `4x64xf32` and `[1, 64]`.
fn shaped_parts(printed: &str) -> Option<(&str, Option<&str>)> {
    let inner = printed.split_once('<')?.1.strip_suffix('>')?;
    Some(match inner.split_once(", strided<") {
        Some((shaped, layout)) => (shaped, Some(layout.strip_suffix('>')?)),
        None => (inner, None),
    })
}

/// The strides (in elements, one per dimension) of a view type with a
/// strided layout (`view<4x64xf32, strided<[1, 64]>>`); None for a
/// contiguous view or another type.
pub fn view_type_strides(ty: MlirType) -> Option<Vec<i64>> {
    let printed = type_text(ty);
    let list = shaped_parts(&printed)?.1?;
    let list = list.strip_prefix('[')?.strip_suffix(']')?;
    list.split(',').map(|s| s.trim().parse().ok()).collect()
}

/// Shape (`None` for a dynamic dimension) and element type name of a Loom
/// view or tile type, from its printed form (`!view.view<2x?xbf16>`).
pub fn view_type_shape(ty: MlirType) -> Option<(Vec<Option<usize>>, String)> {
    let printed = type_text(ty);
    let inner = shaped_parts(&printed)?.0;
    // The element type follows the last dimension's `x` (a dimension is
    // digits or `?`, so the first `x` after one is the separator; `index`
    // has an `x` of its own).
    let split = inner
        .char_indices()
        .find(|&(_, c)| !(c.is_ascii_digit() || c == '?' || c == 'x'))
        .map_or(inner.len(), |(i, _)| i);
    let (dims, name) = inner.split_at(split);
    let shape = dims
        .split('x')
        .filter(|d| !d.is_empty())
        .map(|d| {
            if d == "?" {
                Ok(None)
            } else {
                d.parse().map(Some)
            }
        })
        .collect::<Result<Vec<_>, _>>()
        .ok()?;
    Some((shape, name.to_string()))
}

/// The entry block of `op`'s first region (a function's, a strand's, a
/// pipeline's or a module's body).
pub fn body(op: MlirOperation) -> MlirBlock {
    // SAFETY: a live operation with at least one region.
    unsafe { mlirRegionGetFirstBlock(mlirOperationGetRegion(op, 0)) }
}

/// The first block of `op`'s region `index`, if the region has one (an
/// `scf.if` without `else` has an empty second region).
pub fn first_block(op: MlirOperation, index: isize) -> Option<MlirBlock> {
    blocks(region(op, index)).first().copied()
}

/// The entry block of `region`, if it has blocks.
pub fn entry_block(region: MlirRegion) -> Option<MlirBlock> {
    // SAFETY: a live region; a null block when it is empty.
    let block = unsafe { mlirRegionGetFirstBlock(region) };
    (!block.ptr.is_null()).then_some(block)
}

/// `op`'s region `index`.
pub fn region(op: MlirOperation, index: isize) -> MlirRegion {
    // SAFETY: a live operation with that many regions.
    unsafe { mlirOperationGetRegion(op, index) }
}

/// Whether `value` is an op's result (not a block argument).
pub fn is_op_result(value: MlirValue) -> bool {
    // SAFETY: a live value.
    unsafe { mlirValueIsAOpResult(value) }
}

/// The successor blocks of a terminator, in operand order.
pub fn successors(op: MlirOperation) -> Vec<MlirBlock> {
    // SAFETY: a live operation and its successor positions.
    unsafe {
        (0..mlirOperationGetNumSuccessors(op))
            .map(|i| mlirOperationGetSuccessor(op, i))
            .collect()
    }
}

/// Element `index` of a dense i32 array attribute (e.g. operand segments).
pub fn dense_i32_element(attr: MlirAttribute, index: isize) -> i32 {
    // SAFETY: a live dense i32 array attribute with that many elements.
    unsafe { mlirDenseI32ArrayGetElement(attr, index) }
}

/// The block that holds `op`.
pub fn parent_block(op: MlirOperation) -> MlirBlock {
    // SAFETY: a live operation.
    unsafe { mlirOperationGetBlock(op) }
}

/// The block whose argument `value` is (`value` must be a block argument).
pub fn argument_block(value: MlirValue) -> MlirBlock {
    assert!(!is_op_result(value), "an op result has no owning block");
    // SAFETY: a live block argument.
    unsafe { mlirBlockArgumentGetOwner(value) }
}

/// The op whose region holds `block`.
pub fn block_parent_op(block: MlirBlock) -> MlirOperation {
    // SAFETY: a live block.
    unsafe { mlirBlockGetParentOperation(block) }
}

/// Remove `op` from its block and destroy it; it must have no uses left.
pub fn erase(op: MlirOperation) {
    // SAFETY: a live operation the caller no longer uses.
    unsafe { mlirOperationDestroy(op) }
}

/// Replace operand `position` of `op` with `value`.
pub fn set_operand(op: MlirOperation, position: usize, value: MlirValue) {
    // SAFETY: a live operation with that operand.
    unsafe { mlirOperationSetOperand(op, position as isize, value) }
}

/// Make successor `position` of `op` (a terminator) `block`.
pub fn set_successor(op: MlirOperation, position: usize, block: MlirBlock) {
    // SAFETY: a live terminator with that successor and a block of its region.
    unsafe { mlirOperationSetSuccessor(op, position as isize, block) }
}

/// Where `value` is defined (a block argument's own location).
pub fn value_location(value: MlirValue) -> MlirLocation {
    // SAFETY: a live value.
    unsafe { mlirValueGetLocation(value) }
}

/// Detach `block` from its region and destroy it; it must hold no ops
/// that are used, and no branch may target it any more.
pub fn erase_block(block: MlirBlock) {
    // SAFETY: a live block nothing refers to.
    unsafe {
        mlirBlockDetach(block);
        mlirBlockDestroy(block);
    }
}

/// The region that holds `block`.
pub fn block_region(block: MlirBlock) -> MlirRegion {
    // SAFETY: a live block.
    unsafe { mlirBlockGetParentRegion(block) }
}

/// Remove the attribute `name` of `op`, if present.
pub fn remove_attribute(op: MlirOperation, name: &str) {
    // SAFETY: a live operation.
    unsafe {
        mlirOperationRemoveAttributeByName(op, string_ref(name));
    }
}

/// Erase argument `index` of `block`; it must have no uses left.
pub fn erase_block_argument(block: MlirBlock, index: u32) {
    // SAFETY: a live block with that argument.
    unsafe { mlirBlockEraseArgument(block, index) }
}

/// The type `text` parses to in `ctx`, if it parses.
pub fn parse_type(ctx: MlirContext, text: &str) -> Option<MlirType> {
    // SAFETY: a live context; a null type when the text does not parse.
    let ty = unsafe { mlirTypeParseGet(ctx, string_ref(text)) };
    (!ty.ptr.is_null()).then_some(ty)
}

/// `(inputs) -> (results)`.
pub fn function_type(ctx: MlirContext, inputs: &[MlirType], results: &[MlirType]) -> MlirType {
    // SAFETY: a live context; MLIR copies both type lists.
    unsafe {
        mlirFunctionTypeGet(
            ctx,
            inputs.len() as isize,
            inputs.as_ptr(),
            results.len() as isize,
            results.as_ptr(),
        )
    }
}

/// A type attribute holding `ty`.
pub fn type_attr(ty: MlirType) -> MlirAttribute {
    // SAFETY: a live type.
    unsafe { mlirTypeAttrGet(ty) }
}

/// A new block at the end of `region` with arguments of `types` at
/// `locations` (one each).
pub fn append_block(
    region: MlirRegion,
    types: &[MlirType],
    locations: &[MlirLocation],
) -> MlirBlock {
    assert_eq!(
        types.len(),
        locations.len(),
        "one location per block argument"
    );
    // SAFETY: a live region; the region owns the block from here on.
    unsafe {
        let block = mlirBlockCreate(types.len() as isize, types.as_ptr(), locations.as_ptr());
        mlirRegionAppendOwnedBlock(region, block);
        block
    }
}

/// The context `loc` lives in.
pub fn location_context(loc: MlirLocation) -> MlirContext {
    // SAFETY: a live location.
    unsafe { mlirLocationGetContext(loc) }
}

/// `op` as MLIR prints it (its custom syntax).
pub fn op_text(op: MlirOperation) -> String {
    // SAFETY: printing a live op.
    printed(|f, d| unsafe { mlirOperationPrint(op, f, d) })
}

/// Prints ops of one module as `op_text` does, with one numbering of the
/// module's values made once: `op_text` numbers (and verifies) the whole
/// module for every op it prints, which is quadratic over a module's ops.
pub struct OpPrinter {
    flags: MlirOpPrintingFlags,
    state: MlirAsmState,
}

impl OpPrinter {
    /// A printer for the ops nested in `module`, a top-level op.
    pub fn new(module: MlirOperation) -> OpPrinter {
        // SAFETY: default flags, and a state over a live top-level op that
        // lives as long as the printer (it is destroyed in `drop`).
        unsafe {
            let flags = mlirOpPrintingFlagsCreate();
            let state = mlirAsmStateCreateForOperation(module, flags);
            OpPrinter { flags, state }
        }
    }

    /// The text of `op`, an op nested in the printer's module.
    pub fn text(&self, op: MlirOperation) -> String {
        // SAFETY: a live op of the module the state numbers.
        printed(|f, d| unsafe { mlirOperationPrintWithState(op, self.state, f, d) })
    }
}

impl Drop for OpPrinter {
    fn drop(&mut self) {
        // SAFETY: created in `new`, destroyed once.
        unsafe {
            mlirAsmStateDestroy(self.state);
            mlirOpPrintingFlagsDestroy(self.flags);
        }
    }
}

/// Emit `message` as an error at `location` through MLIR's diagnostics, so
/// that it shows the source line like every other Loom diagnostic.
pub fn emit_error(location: MlirLocation, message: &str) {
    let text =
        std::ffi::CString::new(message.replace('\0', " ")).expect("no NUL after replacement");
    // SAFETY: a live location and a NUL-terminated message.
    unsafe { mlirEmitError(location, text.as_ptr()) }
}

/// An error at `location` with notes, each at its own location.
pub fn emit_error_with_notes(
    location: MlirLocation,
    message: &str,
    notes: &[(MlirLocation, String)],
) {
    let locations: Vec<MlirLocation> = notes.iter().map(|(at, _)| *at).collect();
    let texts: Vec<MlirStringRef> = notes.iter().map(|(_, text)| string_ref(text)).collect();
    // SAFETY: live locations; the strings outlive the call, which copies them.
    unsafe {
        ffi::loomEmitErrorWithNotes(
            location,
            string_ref(message),
            notes.len() as isize,
            locations.as_ptr(),
            texts.as_ptr(),
        )
    }
}

/// `op`'s attributes: each name and value, in the op's order.
pub fn attributes(op: MlirOperation) -> Vec<(String, MlirAttribute)> {
    // SAFETY: a live operation and its attribute positions.
    unsafe {
        (0..mlirOperationGetNumAttributes(op))
            .map(|i| {
                let named = mlirOperationGetAttribute(op, i);
                (text(mlirIdentifierStr(named.name)), named.attribute)
            })
            .collect()
    }
}

/// The symbol a flat symbol reference attribute names, if `attr` is one.
pub fn flat_symbol_ref_value(attr: MlirAttribute) -> Option<String> {
    // SAFETY: a live attribute, checked before it is read as a reference.
    unsafe {
        mlirAttributeIsAFlatSymbolRef(attr).then(|| text(mlirFlatSymbolRefAttrGetValue(attr)))
    }
}

/// A detached copy of `op` with everything nested in it.
pub fn clone_op(op: MlirOperation) -> MlirOperation {
    // SAFETY: a live operation; the caller owns the copy.
    unsafe { mlirOperationClone(op) }
}

/// Move `op` out of its block to the end of `block`.
pub fn move_to_end(op: MlirOperation, block: MlirBlock) {
    // SAFETY: a live op, detached before `block` takes it.
    unsafe {
        mlirOperationRemoveFromParent(op);
        mlirBlockAppendOwnedOperation(block, op);
    }
}

/// Move `op` to just before `anchor` (in `anchor`'s block).
pub fn move_before(op: MlirOperation, anchor: MlirOperation) {
    // SAFETY: two live operations.
    unsafe { mlirOperationMoveBefore(op, anchor) }
}

/// Insert the detached `op` just after `anchor`.
pub fn insert_after(anchor: MlirOperation, op: MlirOperation) {
    // SAFETY: a live anchor in a block; the block takes ownership of `op`.
    unsafe { mlirBlockInsertOwnedOperationAfter(mlirOperationGetBlock(anchor), anchor, op) }
}

/// Move the ops after `op` into a new block right after `op`'s block, and
/// return that block.
pub fn split_block_after(op: MlirOperation) -> MlirBlock {
    // SAFETY: ops are detached one by one and appended to the new block,
    // which the region owns from the start.
    unsafe {
        let block = mlirOperationGetBlock(op);
        let region = mlirBlockGetParentRegion(block);
        let rest = mlirBlockCreate(0, std::ptr::null(), std::ptr::null());
        mlirRegionInsertOwnedBlockAfter(region, block, rest);
        let mut next = mlirOperationGetNextInBlock(op);
        while !next.ptr.is_null() {
            let moving = next;
            next = mlirOperationGetNextInBlock(next);
            mlirOperationRemoveFromParent(moving);
            mlirBlockAppendOwnedOperation(rest, moving);
        }
        rest
    }
}

/// Move `block` out of its region to just after `after`.
pub fn move_block_after(block: MlirBlock, after: MlirBlock) {
    // SAFETY: `block` is detached before the region takes it.
    unsafe {
        mlirBlockDetach(block);
        mlirRegionInsertOwnedBlockAfter(mlirBlockGetParentRegion(after), after, block);
    }
}

/// A new block right after `after`, with arguments of `types` at
/// `locations` (one each).
pub fn insert_block_after(
    after: MlirBlock,
    types: &[MlirType],
    locations: &[MlirLocation],
) -> MlirBlock {
    assert_eq!(
        types.len(),
        locations.len(),
        "one location per block argument"
    );
    // SAFETY: a live block; its region owns the new block from here on.
    unsafe {
        let block = mlirBlockCreate(types.len() as isize, types.as_ptr(), locations.as_ptr());
        mlirRegionInsertOwnedBlockAfter(mlirBlockGetParentRegion(after), after, block);
        block
    }
}

/// A new last argument of `block`.
pub fn add_block_argument(block: MlirBlock, ty: MlirType, loc: MlirLocation) -> MlirValue {
    // SAFETY: a live block, type and location.
    unsafe { mlirBlockAddArgument(block, ty, loc) }
}

/// Insert the detached `op` at `position` of `block`.
pub fn insert_at(block: MlirBlock, position: isize, op: MlirOperation) {
    // SAFETY: a live block; it takes ownership of `op`.
    unsafe { mlirBlockInsertOwnedOperation(block, position, op) }
}

/// Move every block of `from` into `into` (which must be empty).
pub fn take_body(into: MlirRegion, from: MlirRegion) {
    // SAFETY: two live regions; the blocks move whole.
    unsafe { mlirRegionTakeBody(into, from) }
}

/// A new block at the start of `region`, with arguments of `types` at
/// `locations` (one each).
pub fn prepend_block(
    region: MlirRegion,
    types: &[MlirType],
    locations: &[MlirLocation],
) -> MlirBlock {
    assert_eq!(
        types.len(),
        locations.len(),
        "one location per block argument"
    );
    // SAFETY: a live region; it owns the new block from here on (before its
    // first block, or as its only one).
    unsafe {
        let block = mlirBlockCreate(types.len() as isize, types.as_ptr(), locations.as_ptr());
        mlirRegionInsertOwnedBlockBefore(region, mlirRegionGetFirstBlock(region), block);
        block
    }
}
