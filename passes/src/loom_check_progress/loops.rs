//! Loops without channel actions, run once per distinct input. After the
//! realization's cfg lowering a strand's inner loops (over a record's
//! elements) are blocks like any others, and running them for every record
//! would make the analysis's time grow with the records' size. A loop (a
//! strongly connected set of blocks entered at one header, found at every
//! nesting level) qualifies when it takes no channel action, makes no call,
//! leaves only through one exit block, and hands on nothing the analysis
//! tracks (no index, offset, i1, channel or obligation defined inside is
//! used outside, nor passed to the exit): then what it does for the rest of
//! the task is to reach its exit block, and that depends only on the values
//! it reads from outside and the arguments it is entered with. The first
//! run with given inputs runs it (so a loop that does not end still hits the
//! step bound); later runs with the same inputs go straight to the exit.
//!
//! Likewise a branch on a value the analysis does not know (one read from a
//! view) is no reason to refuse when its two ways meet again at a join block
//! through blocks without channel actions, calls or cycles, handing on
//! nothing tracked: whichever way it goes, the task continues at the join
//! with the same values, so the analysis goes there.

use loom_dialects::ir::*;
use loom_dialects::names;
use mlir_sys::*;
use std::collections::{HashMap, HashSet};
use std::rc::Rc;

/// A loop that qualifies: its blocks, the values it reads from outside, and
/// the block it leaves to.
pub struct Loop {
    pub blocks: HashSet<usize>,
    pub live_in: Vec<MlirValue>,
    pub exit: MlirBlock,
}

/// The qualifying loops of a region, by header block.
pub type Loops = HashMap<usize, Rc<Loop>>;

/// What a region's blocks allow the analysis to go past: its qualifying
/// loops, and for each block ending in a conditional branch whose ways meet
/// again as above, the join.
pub struct Summaries {
    pub loops: Loops,
    pub joins: HashMap<usize, MlirBlock>,
}

fn id(block: MlirBlock) -> usize {
    block.ptr as usize
}

/// Whether the analysis tracks values of `value`'s type (integers,
/// channels, obligations); types are uniqued, so each is looked at once.
fn tracked(value: MlirValue, known: &mut HashMap<usize, bool>) -> bool {
    let ty = value_type(value);
    *known.entry(ty.ptr as usize).or_insert_with(|| {
        let text = type_text(ty);
        text == "index"
            || text == "i1"
            || text == "!buffer.offset"
            || text.starts_with("!channel.channel<")
            || text.starts_with("!channel.write<")
            || text.starts_with("!channel.read<")
    })
}

/// Whether an `scf.if` the analysis cannot decide can be gone past: its
/// regions hold no channel action, call or loop (so both ways end, with the
/// same actions: none), and its results are not tracked.
pub fn if_goes_past(op: MlirOperation) -> bool {
    let mut types = HashMap::new();
    results(op).into_iter().all(|r| !tracked(r, &mut types))
        && walk(op)
            .into_iter()
            .skip(1)
            .all(|inner| match op_name(inner).as_str() {
                names::scf::YIELD | names::scf::IF => true,
                names::scf::FOR => false,
                _ => !disqualifies(inner),
            })
}

/// An op that acts on channels, calls, exits the region or has regions of
/// its own: a loop holding one does not qualify.
fn disqualifies(op: MlirOperation) -> bool {
    let name = op_name(op);
    matches!(
        name.as_str(),
        names::channel::BIND
            | names::channel::RESERVE
            | names::channel::ACQUIRE
            | names::channel::PUBLISH
            | names::channel::RELEASE
            | names::func::CALL
            | names::func::RETURN
            | names::scf::YIELD
            | names::pipeline::STRAND
    ) || !regions(op).is_empty()
}

/// The qualifying loops and joins of `region`; `evaluated` says which ops
/// the analysis evaluates (the values the others read do not matter).
pub fn find(region: MlirRegion, evaluated: &dyn Fn(MlirOperation) -> bool) -> Summaries {
    let all = blocks(region);
    let index: HashMap<usize, usize> = all.iter().enumerate().map(|(i, &b)| (id(b), i)).collect();
    let successors: Vec<Vec<usize>> = all
        .iter()
        .map(|&b| {
            terminator(b).map_or_else(Vec::new, |t| {
                successors(t)
                    .into_iter()
                    .filter_map(|s| index.get(&id(s)).copied())
                    .collect()
            })
        })
        .collect();
    let mut found = Loops::new();
    let mut search = Search {
        all: &all,
        successors: &successors,
        evaluated,
        types: HashMap::new(),
    };
    search.nest((0..all.len()).collect(), &mut found);
    let joins = search.joins();
    Summaries {
        loops: found,
        joins,
    }
}

/// What the search over one region's blocks keeps.
struct Search<'a> {
    all: &'a [MlirBlock],
    successors: &'a [Vec<usize>],
    evaluated: &'a dyn Fn(MlirOperation) -> bool,
    types: HashMap<usize, bool>,
}

impl Search<'_> {
    /// Decompose `members` into strongly connected components; each with
    /// one header is a loop, and its body without the header holds the
    /// nested loops.
    fn nest(&mut self, members: Vec<usize>, found: &mut Loops) {
        let (all, successors) = (self.all, self.successors);
        let inside: HashSet<usize> = members.iter().copied().collect();
        for component in components(successors, &members, &inside) {
            let set: HashSet<usize> = component.iter().copied().collect();
            let cyclic = component.len() > 1 || successors[component[0]].contains(&component[0]);
            if !cyclic {
                continue;
            }
            // Headers: members entered from outside the component (the
            // region's entry block is entered from outside too).
            let headers: Vec<usize> = component
                .iter()
                .copied()
                .filter(|&b| {
                    b == 0
                        || (0..all.len()).any(|p| !set.contains(&p) && successors[p].contains(&b))
                })
                .collect();
            let rest: Vec<usize> = component
                .iter()
                .copied()
                .filter(|b| !headers.contains(b))
                .collect();
            if let [header] = headers[..] {
                if let Some(qualifying) = self.qualify(&set) {
                    found.insert(id(all[header]), Rc::new(qualifying));
                }
            }
            self.nest(rest, found);
        }
    }

    /// Each block ending in a `cfg.cond_br` whose ways meet again at its
    /// immediate post-dominator through blocks that hold no channel action,
    /// call or cycle and hand on nothing tracked, with that join.
    fn joins(&mut self) -> HashMap<usize, MlirBlock> {
        let (all, successors) = (self.all, self.successors);
        let n = all.len();
        // Post-dominator sets by iteration; blocks that reach no exit keep
        // the full set, and the checks below refuse what goes through them.
        let mut post: Vec<HashSet<usize>> = (0..n)
            .map(|b| {
                if successors[b].is_empty() {
                    HashSet::from([b])
                } else {
                    (0..n).collect()
                }
            })
            .collect();
        let mut changed = true;
        while changed {
            changed = false;
            for b in (0..n).rev() {
                let Some((&first, rest)) = successors[b].split_first() else {
                    continue;
                };
                let mut next: HashSet<usize> = post[first].clone();
                for &s in rest {
                    next.retain(|x| post[s].contains(x));
                }
                next.insert(b);
                if next != post[b] {
                    post[b] = next;
                    changed = true;
                }
            }
        }
        let mut found = HashMap::new();
        for b in 0..n {
            let Some(branch) = terminator(all[b]).filter(|&t| op_name(t) == names::cfg::COND_BR)
            else {
                continue;
            };
            let size = post[b].len();
            let Some(&join) = post[b]
                .iter()
                .find(|&&c| c != b && post[c].len() + 1 == size)
            else {
                continue;
            };
            if self.meets(b, branch, join) {
                found.insert(id(all[b]), all[join]);
            }
        }
        found
    }

    /// Whether every way from `from`'s successors reaches `join` through
    /// blocks without cycles, channel actions or calls, handing on nothing
    /// tracked past them.
    fn meets(&mut self, from: usize, branch: MlirOperation, join: usize) -> bool {
        let (all, successors) = (self.all, self.successors);
        // The blocks between, in an order where each comes after the blocks
        // that lead to it (so a cycle shows as a block met twice on a path).
        let mut between: Vec<usize> = Vec::new();
        let mut on_path: HashSet<usize> = HashSet::new();
        let mut done: HashSet<usize> = HashSet::new();
        fn visit(
            b: usize,
            join: usize,
            from: usize,
            successors: &[Vec<usize>],
            on_path: &mut HashSet<usize>,
            done: &mut HashSet<usize>,
            between: &mut Vec<usize>,
        ) -> bool {
            if b == join || done.contains(&b) {
                return true;
            }
            if b == from || !on_path.insert(b) || successors[b].is_empty() {
                return false; // a cycle, or an exit that skips the join
            }
            for &s in &successors[b] {
                if !visit(s, join, from, successors, on_path, done, between) {
                    return false;
                }
            }
            on_path.remove(&b);
            done.insert(b);
            between.push(b);
            true
        }
        for &s in &successors[from] {
            if !visit(
                s,
                join,
                from,
                successors,
                &mut on_path,
                &mut done,
                &mut between,
            ) {
                return false;
            }
        }
        let set: HashSet<usize> = between.iter().copied().collect();
        let blocks: HashSet<usize> = set.iter().map(|&b| id(all[b])).collect();
        let join_block = all[join];
        let mut defined = Vec::new();
        let mut edges = vec![branch];
        for &b in &between {
            defined.extend(arguments(all[b]));
            for op in ops_of(all[b]) {
                if disqualifies(op) {
                    return false;
                }
                defined.extend(results(op));
            }
            edges.extend(terminator(all[b]));
        }
        // Nothing tracked into the join, nor used past the blocks between.
        for edge in edges {
            for (i, target) in successors_of(edge) {
                if id(target) == id(join_block) && tracked(operands(edge)[i], &mut self.types) {
                    return false;
                }
            }
        }
        defined.into_iter().all(|v| {
            !tracked(v, &mut self.types)
                || uses(v)
                    .into_iter()
                    .all(|(user, _)| blocks.contains(&id(parent_block(user))))
        })
    }

    /// The loop on `set`, when it qualifies.
    fn qualify(&mut self, set: &HashSet<usize>) -> Option<Loop> {
        let (all, successors) = (self.all, self.successors);
        let ops: Vec<MlirOperation> = set.iter().flat_map(|&b| ops_of(all[b])).collect();
        if ops.iter().any(|&op| disqualifies(op)) {
            return None;
        }
        let exits: HashSet<usize> = set
            .iter()
            .flat_map(|&b| successors[b].iter().copied())
            .filter(|s| !set.contains(s))
            .collect();
        let [exit] = exits.into_iter().collect::<Vec<_>>()[..] else {
            return None;
        };
        let exit = all[exit];
        let blocks: HashSet<usize> = set.iter().map(|&b| id(all[b])).collect();
        let defined_inside = |v: MlirValue| {
            let block = if is_op_result(v) {
                parent_block(owner_op(v))
            } else {
                argument_block(v)
            };
            blocks.contains(&id(block))
        };
        let mut live_in = Vec::new();
        let mut seen = HashSet::new();
        let mut defined: Vec<MlirValue> = set.iter().flat_map(|&b| arguments(all[b])).collect();
        for &op in &ops {
            defined.extend(results(op));
            let branch = successors_of(op);
            let evaluated = (self.evaluated)(op);
            for (i, v) in operands(op).into_iter().enumerate() {
                // An argument of the edge to the exit must not be tracked.
                if branch.get(&i).is_some_and(|&target| id(target) == id(exit))
                    && tracked(v, &mut self.types)
                {
                    return None;
                }
                if evaluated && !defined_inside(v) && seen.insert(v.ptr as usize) {
                    live_in.push(v);
                }
            }
        }
        for v in defined {
            if !tracked(v, &mut self.types) {
                continue;
            }
            let escapes = uses(v)
                .into_iter()
                .any(|(user, _)| !blocks.contains(&id(parent_block(user))));
            if escapes {
                return None;
            }
        }
        Some(Loop {
            blocks,
            live_in,
            exit,
        })
    }
}

/// Tarjan's strongly connected components of the subgraph on `members`.
fn components(
    successors: &[Vec<usize>],
    members: &[usize],
    inside: &HashSet<usize>,
) -> Vec<Vec<usize>> {
    struct State {
        index: HashMap<usize, usize>,
        low: HashMap<usize, usize>,
        stack: Vec<usize>,
        on_stack: HashSet<usize>,
        out: Vec<Vec<usize>>,
    }
    fn visit(v: usize, successors: &[Vec<usize>], inside: &HashSet<usize>, s: &mut State) {
        let n = s.index.len();
        s.index.insert(v, n);
        s.low.insert(v, n);
        s.stack.push(v);
        s.on_stack.insert(v);
        for &w in successors[v].iter().filter(|w| inside.contains(w)) {
            if !s.index.contains_key(&w) {
                visit(w, successors, inside, s);
                let low = s.low[&v].min(s.low[&w]);
                s.low.insert(v, low);
            } else if s.on_stack.contains(&w) {
                let low = s.low[&v].min(s.index[&w]);
                s.low.insert(v, low);
            }
        }
        if s.low[&v] == s.index[&v] {
            let mut component = Vec::new();
            while let Some(w) = s.stack.pop() {
                s.on_stack.remove(&w);
                component.push(w);
                if w == v {
                    break;
                }
            }
            s.out.push(component);
        }
    }
    let mut state = State {
        index: HashMap::new(),
        low: HashMap::new(),
        stack: Vec::new(),
        on_stack: HashSet::new(),
        out: Vec::new(),
    };
    for &v in members {
        if !state.index.contains_key(&v) {
            visit(v, successors, inside, &mut state);
        }
    }
    state.out
}

/// For a branch, the successor each of its operands goes to.
fn successors_of(op: MlirOperation) -> HashMap<usize, MlirBlock> {
    let targets = successors(op);
    let name = op_name(op);
    let all = operands(op);
    let mut to = HashMap::new();
    if name == names::cfg::BR {
        for i in 0..all.len() {
            to.insert(i, targets[0]);
        }
    } else if name == names::cfg::COND_BR {
        let sizes = attribute(op, "operandSegmentSizes").expect("cond_br has operand segments");
        let taken = dense_i32_element(sizes, 1) as usize;
        for i in 1..all.len() {
            to.insert(i, if i <= taken { targets[0] } else { targets[1] });
        }
    }
    to
}
