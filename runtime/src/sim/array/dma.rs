//! DMA engines: a channel's start queue of tasks, each a buffer descriptor
//! chain run `runs` times, the task-complete tokens, iteration steps, and
//! the tile memory or DDR each descriptor addresses.

use super::{Array, TileState, TokenKey};
use crate::sim::error::SimError;
use crate::sim::memory::Memory;
use crate::sim::trace::{Arg, Kind, Slice, Track};
use loom_targets::xdna::regs::{BufferDescriptor, Direction, Iteration, StartQueueEntry, TileKind};
use loom_targets::Tile;
use std::collections::VecDeque;

/// `core.dma.s2mm[0]`, as the register names put it.
pub(super) fn channel_name(kind: TileKind, direction: Direction, channel: u32) -> String {
    format!("{}.dma.{}[{channel}]", kind.prefix(), direction.name())
}

/// How many buffer descriptors one channel may complete in one `step` before
/// the model calls its work endless (e.g. two DMAs handing lock credits to
/// each other forever): work bounded by data or by a core's locks stops far
/// sooner, and the limit keeps `step` from never returning.
const STEP_BD_LIMIT: u32 = 1 << 16;

/// A task as the start queue holds it.
#[derive(Debug, Clone, Copy)]
pub(super) struct Task {
    pub(super) entry: StartQueueEntry,
    /// The TXN op that queued it, for errors.
    pub(super) txn_op: usize,
    /// The control clock when it was queued (timing model).
    pub(super) queued_at: u64,
}

/// The task a channel is working on.
#[derive(Debug)]
pub(super) struct Running {
    pub(super) task: Task,
    /// Runs of the chain finished so far.
    pub(super) run: u32,
    pub(super) bd: u32,
    /// As loaded for this use (the address at its iteration step).
    pub(super) descriptor: BufferDescriptor,
    /// Whether this descriptor's lock acquire has succeeded (or it has none).
    pub(super) acquired: bool,
    /// The modelled cycle the descriptor's transfer may start (once its
    /// lock is taken).
    pub(super) ready: u64,
}

/// A tile's DMA channel (not a Loom channel): its start queue, the task it
/// runs, and for S2MM the stream bytes it takes.
#[derive(Debug, Default)]
pub(super) struct DmaChannel {
    pub(super) queue: VecDeque<Task>,
    pub(super) running: Option<Running>,
    /// S2MM only: bytes routed here and not yet written to memory.
    pub(super) incoming: VecDeque<u8>,
    /// S2MM only: the bytes of `incoming` in arrival chunks: (bytes, the
    /// modelled cycle the chunk's last byte arrives).
    pub(super) arrivals: VecDeque<(usize, u64)>,
    /// Buffer descriptors completed in the current `step`.
    pub(super) completed: u32,
    /// The modelled cycle the channel finishes its last transfer, and the
    /// cycles it spent moving data.
    pub(super) clock: u64,
    pub(super) busy: u64,
}

/// A DMA channel of a tile, and what errors about it should name.
#[derive(Debug, Clone, Copy)]
pub(super) struct ChannelId {
    pub(super) tile: Tile,
    pub(super) kind: TileKind,
    pub(super) direction: Direction,
    pub(super) channel: u32,
}

impl ChannelId {
    pub(super) fn name(&self) -> String {
        channel_name(self.kind, self.direction, self.channel)
    }

    /// An error about buffer descriptor `bd` of a task queued by `txn_op`.
    pub(super) fn error(&self, txn_op: usize, bd: u32, message: impl Into<String>) -> SimError {
        SimError::new(message)
            .op(txn_op)
            .tile(self.tile)
            .register(format!("{} bd[{bd}]", self.name()))
    }
}

impl Array {
    /// Why each unfinished DMA task waits: tile, channel, buffer descriptor,
    /// and the lock or stream it waits on.
    pub fn pending(&self) -> Vec<String> {
        let mut lines = Vec::new();
        for (&tile, state) in &self.tiles {
            for direction in [Direction::S2mm, Direction::Mm2s] {
                for (channel, c) in state.channels(direction).iter().enumerate() {
                    let name = channel_name(state.kind, direction, channel as u32);
                    if let Some(r) = &c.running {
                        lines.push(format!(
                            "tile {} {name} bd[{}] (task queued by TXN op {}, run {} of {}): {}",
                            tile,
                            r.bd,
                            r.task.txn_op,
                            r.run + 1,
                            r.task.entry.runs,
                            self.waits_for(state, direction, c, r)
                        ));
                    }
                    for task in &c.queue {
                        lines.push(format!(
                            "tile {} {name}: task queued by TXN op {} (start bd[{}]) waits \
                             behind the running task",
                            tile, task.txn_op, task.entry.start_bd
                        ));
                    }
                }
            }
        }
        lines
    }

    /// Bytes that arrived on an S2MM channel's stream and no task has taken.
    pub fn undelivered(&self) -> Vec<String> {
        let mut lines = Vec::new();
        for (&tile, state) in &self.tiles {
            for (channel, c) in state.s2mm.iter().enumerate() {
                if !c.incoming.is_empty() {
                    lines.push(format!(
                        "tile {} {}: {} bytes arrived that no task has taken",
                        tile,
                        channel_name(state.kind, Direction::S2mm, channel as u32),
                        c.incoming.len()
                    ));
                }
            }
        }
        lines
    }

    fn waits_for(
        &self,
        state: &TileState,
        direction: Direction,
        channel: &DmaChannel,
        running: &Running,
    ) -> String {
        match running.descriptor.acquire {
            Some((id, value)) if !running.acquired => {
                let regs = self.profile.tile_registers(state.kind);
                let own = id.wrapping_sub(regs.dma_own_lock_id_base);
                let current = state
                    .locks
                    .get(own as usize)
                    .map_or("?".to_string(), |v| v.to_string());
                let test = if value < 0 {
                    format!(">= {}", -value)
                } else {
                    format!("== {value}")
                };
                format!("waits to acquire lock {own} {test} (value {current})")
            }
            _ if direction == Direction::S2mm => format!(
                "waits for {} bytes on its stream ({} arrived)",
                running.descriptor.length,
                channel.incoming.len()
            ),
            _ => "ready to send".into(),
        }
    }

    pub(super) fn enqueue(
        &mut self,
        op: usize,
        tile: Tile,
        kind: TileKind,
        direction: Direction,
        channel: u32,
        value: u32,
    ) -> Result<(), SimError> {
        let id = ChannelId {
            tile,
            kind,
            direction,
            channel,
        };
        let fail = |message: String| {
            SimError::new(message)
                .op(op)
                .tile(tile)
                .register(format!("{}.start_queue", id.name()))
        };
        let entry = self
            .profile
            .decode_start_queue(kind, value)
            .map_err(|e| fail(e.to_string()))?;
        if self.held_in_reset(tile, direction, channel) {
            return Err(fail(
                "the channel is held in reset (its control register's Reset bit): the task \
                 would be ignored"
                    .into(),
            ));
        }
        let task = Task {
            entry,
            txn_op: op,
            queued_at: self.control,
        };
        let depth = self.profile.limits.task_queue_depth as usize;
        let (idle, waiting) = match self.tiles.get(&tile) {
            Some(state) => match state.channels(direction).get(channel as usize) {
                Some(c) => (c.running.is_none(), c.queue.len()),
                None => return Err(fail("no such channel".into())),
            },
            None => return Err(fail("no such tile in the array".into())),
        };
        // An idle channel takes the task at once; a busy one queues it.
        if idle {
            let running = self.start(id, task)?;
            if let Some(c) = self.channel_mut(id) {
                c.running = Some(running);
            }
            return Ok(());
        }
        if waiting >= depth {
            return Err(fail(format!(
                "task queue overflow: {waiting} tasks already wait behind the running one \
                 (queue depth {depth})"
            )));
        }
        if let Some(c) = self.channel_mut(id) {
            c.queue.push_back(task);
        }
        Ok(())
    }

    pub(super) fn channel_mut(&mut self, id: ChannelId) -> Option<&mut DmaChannel> {
        self.tiles
            .get_mut(&id.tile)?
            .channel_mut(id.direction, id.channel)
    }

    /// Start a task: load its first buffer descriptor.
    pub(super) fn start(&mut self, id: ChannelId, task: Task) -> Result<Running, SimError> {
        let bd = task.entry.start_bd;
        let descriptor = self.load_bd(id, bd, task.txn_op)?;
        if id.direction == Direction::Mm2s {
            if let Some(cycle) = self.endless_chain(id, bd) {
                let chain: Vec<String> = cycle.iter().map(|b| format!("bd[{b}]")).collect();
                return Err(id.error(
                    task.txn_op,
                    bd,
                    format!(
                        "the chain repeats {} -> bd[{}] with no lock acquire: it would send \
                         forever",
                        chain.join(" -> "),
                        cycle[0]
                    ),
                ));
            }
        }
        Ok(Running {
            task,
            run: 0,
            bd,
            descriptor,
            acquired: false,
            ready: task.queued_at,
        })
    }

    /// Load buffer descriptor `bd` for one use, as the channel does: its words
    /// as last written, decoded; with an iteration, the address of this use's
    /// step, and the descriptor's index advanced in its register.
    fn load_bd(
        &mut self,
        id: ChannelId,
        bd: u32,
        txn_op: usize,
    ) -> Result<BufferDescriptor, SimError> {
        let profile = self.profile;
        let fail = |message: String| id.error(txn_op, bd, message);
        if id.kind == TileKind::Memory {
            let half = profile.budget(id.kind).bds / 2;
            let even = id.channel.is_multiple_of(2);
            if (bd < half) != even {
                let (low, high) = if even {
                    (0, half - 1)
                } else {
                    (half, 2 * half - 1)
                };
                return Err(fail(format!(
                    "a memory tile's channel {} can use only buffer descriptors {low}..={high}",
                    id.channel
                )));
            }
        }
        let words = self.bd_words(id, bd).map_err(&fail)?;
        let mut descriptor = profile
            .decode_bd(id.kind, &words)
            .map_err(|e| fail(e.to_string()))?;
        if !descriptor.valid {
            return Err(fail(
                "the buffer descriptor is not valid (its valid bit is clear)".into(),
            ));
        }
        let stepped = match descriptor.iteration {
            Some(it) => {
                // Back to 0 when the next index equals the wrap (decoding
                // keeps the index below it).
                let current = if it.current + 1 >= it.wrap {
                    0
                } else {
                    it.current + 1
                };
                let next = BufferDescriptor {
                    iteration: Some(Iteration { current, ..it }),
                    ..descriptor.clone()
                };
                let offset = u64::from(it.stride).saturating_mul(it.current.into());
                descriptor.address = descriptor.address.saturating_add(offset);
                Some(
                    profile
                        .encode_bd(id.kind, &next)
                        .map_err(|e| fail(e.to_string()))?,
                )
            }
            None => None,
        };
        // Tile memory bounds are known now; DDR bounds only when it moves.
        if id.kind != TileKind::Shim {
            self.local(id, &descriptor).map_err(&fail)?;
        }
        if let Some(stepped) = stepped {
            let base = profile.bd(id.kind, bd).map_err(|e| fail(e.to_string()))?;
            let Some(state) = self.tiles.get_mut(&id.tile) else {
                return Err(fail("no such tile in the array".into()));
            };
            // Only the word holding the index changes.
            for ((old, new), word) in words.iter().zip(&stepped).zip(0u32..) {
                if old != new {
                    state.registers.insert(base + 4 * word, *new);
                }
            }
        }
        Ok(descriptor)
    }

    pub(super) fn bd_words(&self, id: ChannelId, bd: u32) -> Result<Vec<u32>, String> {
        let base = self.profile.bd(id.kind, bd).map_err(|e| e.to_string())?;
        let words = self.profile.tile_registers(id.kind).bd_layout.words;
        let state = self.state(id.tile).ok_or("no such tile in the array")?;
        Ok((0..words).map(|w| state.register(base + 4 * w)).collect())
    }

    /// The BDs of a cycle the chain from `bd` enters when none of them
    /// acquires a lock (nothing would ever stop it).
    fn endless_chain(&self, id: ChannelId, bd: u32) -> Option<Vec<u32>> {
        let mut seen: Vec<(u32, bool)> = Vec::new();
        let mut at = bd;
        loop {
            if let Some(pos) = seen.iter().position(|&(b, _)| b == at) {
                let cycle = &seen[pos..];
                return (!cycle.iter().any(|&(_, acquires)| acquires))
                    .then(|| cycle.iter().map(|&(b, _)| b).collect());
            }
            let words = self.bd_words(id, at).ok()?;
            let descriptor = self.profile.decode_bd(id.kind, &words).ok()?;
            seen.push((at, descriptor.acquire.is_some()));
            at = descriptor.next_bd?;
        }
    }

    /// Run one channel until it blocks or has nothing to do.
    pub(super) fn advance(
        &mut self,
        id: ChannelId,
        memory: &mut dyn Memory,
    ) -> Result<bool, SimError> {
        let mut moved = false;
        loop {
            let Some(channel) = self.channel_mut(id) else {
                return Ok(moved);
            };
            let mut running = match channel.running.take() {
                Some(running) => running,
                None => match channel.queue.pop_front() {
                    Some(task) => {
                        moved = true;
                        self.start(id, task)?
                    }
                    None => return Ok(moved),
                },
            };
            let (op, bd) = (running.task.txn_op, running.bd);
            if !running.acquired {
                let clock = self.channel_mut(id).map_or(0, |c| c.clock);
                running.ready = running.ready.max(clock);
                if let Some((lock, value)) = running.descriptor.acquire {
                    let Some(released) = self
                        .dma_acquire(id, lock, value)
                        .map_err(|m| id.error(op, bd, m))?
                    else {
                        self.put_back(id, running);
                        return Ok(moved);
                    };
                    // The credit's own release, plus the handoff.
                    let credit = released + self.profile.timing.lock_handoff_cycles;
                    if credit > running.ready && self.recorder.is_some() {
                        let own = self.own_lock(id, lock);
                        let begin = running.ready;
                        self.note(|| lock_wait(id, bd, own, value, begin, credit));
                    }
                    running.ready = running.ready.max(credit);
                }
                running.acquired = true;
                moved = true;
            }
            let cycles = u64::from(running.descriptor.length)
                .div_ceil(self.profile.timing.dma_bytes_per_cycle.max(1));
            let end = match id.direction {
                Direction::Mm2s => Some(
                    self.send(id, &running.descriptor, memory, running.ready + cycles)
                        .map_err(|m| id.error(op, bd, m))?,
                ),
                Direction::S2mm => self
                    .receive(id, &running.descriptor, memory)
                    .map_err(|m| id.error(op, bd, m))?
                    .map(|arrived| arrived.max(running.ready + cycles)),
            };
            let Some(end) = end else {
                self.put_back(id, running);
                return Ok(moved);
            };
            if let Some(c) = self.channel_mut(id) {
                c.clock = end;
                c.busy += cycles;
            }
            // An S2MM descriptor that ends later than its own rate allows
            // waited for its stream's bytes first: shown as a wait, then
            // the transfer at the channel's rate.
            let (ready, length) = (running.ready, running.descriptor.length);
            let begin = ready.max(end.saturating_sub(cycles));
            if begin > ready {
                self.note(|| stream_wait(id, bd, ready, begin));
            }
            self.note(|| transfer(id, bd, length, begin, end));
            running.ready = end;
            if let Some((lock, value)) = running.descriptor.release {
                self.dma_release(id, lock, value, end)
                    .map_err(|m| id.error(op, bd, m))?;
            }
            moved = true;
            if id.direction == Direction::Mm2s && id.kind != TileKind::Shim {
                self.sent += 1;
            }
            let completed = self.channel_mut(id).map_or(0, |c| {
                c.completed += 1;
                c.completed
            });
            if completed > STEP_BD_LIMIT {
                return Err(id.error(
                    op,
                    bd,
                    format!(
                        "completed {STEP_BD_LIMIT} buffer descriptors without ever waiting: \
                         its chain cycles through locks that never stop it"
                    ),
                ));
            }
            let next = match running.descriptor.next_bd {
                Some(next) => Some(next),
                None if running.run + 1 < running.task.entry.runs => {
                    running.run += 1;
                    Some(running.task.entry.start_bd)
                }
                None => None,
            };
            match next {
                Some(next) => {
                    running.descriptor = self.load_bd(id, next, op)?;
                    running.bd = next;
                    running.acquired = false;
                    self.put_back(id, running);
                }
                None if running.task.entry.token_issue => {
                    let key = TokenKey {
                        tile: id.tile,
                        direction: id.direction,
                        channel: id.channel,
                    };
                    let at = self.channel_mut(id).map_or(0, |c| c.clock);
                    // The token's way is the switches' as they stand when
                    // it is sent; without one it is lost.
                    let token = self.token_route(key).map(|()| at);
                    self.tokens.entry(key).or_default().push_back(token);
                }
                None => {}
            }
        }
    }

    /// The tile-relative number of a descriptor's lock id (as `waits_for`
    /// and the lock registers name it).
    fn own_lock(&self, id: ChannelId, lock: u32) -> u32 {
        lock.wrapping_sub(self.profile.tile_registers(id.kind).dma_own_lock_id_base)
    }

    fn put_back(&mut self, id: ChannelId, running: Running) {
        if let Some(c) = self.channel_mut(id) {
            c.running = Some(running);
        }
    }

    /// The range of tile memory a buffer descriptor's address names.
    fn local(
        &self,
        id: ChannelId,
        descriptor: &BufferDescriptor,
    ) -> Result<(usize, usize), String> {
        let regs = self.profile.tile_registers(id.kind);
        let size = self.profile.budget(id.kind).memory;
        let base = regs.dma_own_memory_address.map_or(0, |h| u64::from(h.0));
        let length = descriptor.span();
        match descriptor.address.checked_sub(base) {
            Some(at) if at + length <= size => Ok((at as usize, length as usize)),
            _ => Err(format!(
                "{} bytes at {:#x} lie outside the tile's data memory ({base:#x}..{:#x} as its \
                 DMA addresses it; neighbour memories are not modelled)",
                length,
                descriptor.address,
                base + size
            )),
        }
    }

    /// The bytes a buffer descriptor sends, in the order its channel moves
    /// them (its dimensions' order, if it has dimensions).
    pub(super) fn read_transfer(
        &self,
        id: ChannelId,
        descriptor: &BufferDescriptor,
        memory: &mut dyn Memory,
    ) -> Result<Vec<u8>, String> {
        let span = self.memory_of(id, descriptor, memory)?;
        Ok(match descriptor.word_offsets() {
            None => span.to_vec(),
            Some(offsets) => offsets
                .iter()
                .flat_map(|&at| span[at as usize..at as usize + 4].iter().copied())
                .collect(),
        })
    }

    /// Writes `data`, the bytes a buffer descriptor receives in order, where
    /// the descriptor puts them.
    pub(super) fn write_transfer(
        &self,
        id: ChannelId,
        descriptor: &BufferDescriptor,
        memory: &mut dyn Memory,
        data: impl Iterator<Item = u8>,
    ) -> Result<(), String> {
        let span = self.memory_of(id, descriptor, memory)?;
        match descriptor.word_offsets() {
            None => span
                .iter_mut()
                .zip(data)
                .for_each(|(byte, value)| *byte = value),
            Some(offsets) => {
                let places = offsets.iter().flat_map(|&at| at as usize..at as usize + 4);
                for (at, value) in places.zip(data) {
                    span[at] = value;
                }
            }
        }
        Ok(())
    }

    /// The bytes a buffer descriptor reads or writes: from its address to
    /// the farthest word it touches.
    fn memory_of<'m>(
        &self,
        id: ChannelId,
        descriptor: &BufferDescriptor,
        memory: &'m mut dyn Memory,
    ) -> Result<&'m mut [u8], String> {
        if id.kind == TileKind::Shim {
            let length = descriptor.span() as usize;
            let bytes = memory.ddr(descriptor.address, length)?;
            return bytes.get_mut(..length).ok_or_else(|| {
                format!(
                    "the caller's memory gave fewer than {length} bytes at {:#x}",
                    descriptor.address
                )
            });
        }
        let (at, length) = self.local(id, descriptor)?;
        let bytes = memory.tile(id.tile);
        let have = bytes.len();
        bytes.get_mut(at..at + length).ok_or_else(|| {
            format!("the simulator holds only {have} bytes of the tile's data memory")
        })
    }
}

/// A DMA channel's track and its name in a trace.
fn track(id: ChannelId) -> (Track, String) {
    (
        Track::Dma(id.tile, id.direction, id.channel),
        format!("tile {} {}", id.tile, id.name()),
    )
}

/// Buffer descriptor `bd` waiting from `begin` for its lock's credit,
/// held at `end`.
fn lock_wait(
    id: ChannelId,
    bd: u32,
    lock: u32,
    value: i32,
    begin: u64,
    end: u64,
) -> (Slice, String) {
    let (track, name) = track(id);
    let test = if value < 0 {
        format!(">= {}", -i64::from(value))
    } else {
        format!("== {value}")
    };
    let slice = Slice {
        track,
        kind: Kind::LockWait,
        name: format!("lock wait: lock {lock}"),
        begin,
        end,
        args: vec![
            ("bd", Arg::Int(bd.into())),
            ("lock", Arg::Text(format!("tile {} lock[{lock}]", id.tile))),
            ("acquire", Arg::Text(test)),
        ],
    };
    (slice, name)
}

/// Buffer descriptor `bd` moving `length` bytes.
fn transfer(id: ChannelId, bd: u32, length: u32, begin: u64, end: u64) -> (Slice, String) {
    let (track, name) = track(id);
    let slice = Slice {
        track,
        kind: Kind::Transfer,
        name: format!("bd[{bd}]"),
        begin,
        end,
        args: vec![("bytes", Arg::Int(length.into()))],
    };
    (slice, name)
}

/// S2MM buffer descriptor `bd` waiting for its stream's bytes to arrive.
fn stream_wait(id: ChannelId, bd: u32, begin: u64, end: u64) -> (Slice, String) {
    let (track, name) = track(id);
    let slice = Slice {
        track,
        kind: Kind::StreamWait,
        name: format!("stream wait: bd[{bd}]"),
        begin,
        end,
        args: vec![("bd", Arg::Int(bd.into()))],
    };
    (slice, name)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::array::testing::*;
    use crate::sim::array::Effect;
    use loom_targets::xdna::regs::Dimension;

    #[test]
    fn shim_mm2s_fills_core_memory_and_moves_the_locks() {
        let data: Vec<u8> = (0..128).collect();
        let mut memory = TestMemory::new(vec![(ARG0, data.clone())]);
        let mut array = array();
        let ops = shim_to_core(tile_bd(0x400, 64, Some((0, -1)), Some((1, 1))), 64, 16);
        let effects = run(&mut array, &ops, &mut memory).unwrap();
        assert_eq!(
            effects.last(),
            Some(&Effect::Wait(TokenKey {
                tile: SHIM,
                direction: Direction::Mm2s,
                channel: 0
            }))
        );
        assert_eq!(memory.tile(CORE)[0x400..0x440], data[16..80]);
        assert_eq!(memory.tile(CORE)[0x440], 0, "nothing past the length");
        assert_eq!(
            locks(&array, CORE)[..2],
            [0, 1],
            "free slot taken, record published"
        );
        assert!(!array.busy());
        assert!(array.pending().is_empty());
        assert!(array.undelivered().is_empty());
    }

    #[test]
    fn core_mm2s_writes_the_callers_buffer() {
        let mut memory = TestMemory::new(vec![(ARG0, vec![0; 32]), (ARG1, vec![0; 64])]);
        let data: Vec<u8> = (1..=16).collect();
        memory.tile(CORE)[0x1000..0x1010].copy_from_slice(&data);
        let mut array = array();
        let mut ops = vec![lock_init(CORE, 5, 1), lock_init(CORE, 4, 0)];
        ops.extend(route_ops((CORE, 0), (SHIM, 0)));
        ops.extend([
            bd(CORE, 2, &tile_bd(0x1000, 16, Some((5, -1)), Some((4, 1)))),
            start(CORE, Direction::Mm2s, 0, 2, false),
            bd(SHIM, 2, &shim_bd(16)),
            patch(2, 1, 8),
            start(SHIM, Direction::S2mm, 0, 2, true),
            sync(SHIM, Direction::S2mm, 0),
        ]);
        run(&mut array, &ops, &mut memory).unwrap();
        let out = &memory.ddr[1].1;
        assert_eq!(out[8..24], data[..]);
        assert!(out[..8].iter().chain(&out[24..]).all(|&b| b == 0));
        assert_eq!(locks(&array, CORE)[4..6], [1, 0]);
        assert!(
            memory.ddr[0].1.iter().all(|&b| b == 0),
            "argument 0 untouched"
        );
    }

    #[test]
    fn tokens_come_only_from_tasks_that_ask_and_are_taken_once() {
        let data: Vec<u8> = (0..16).collect();
        let mut memory = TestMemory::new(vec![(ARG0, data.clone())]);
        let mut array = array();
        let mut ops = route_ops((SHIM, 0), (CORE, 0));
        ops.extend([
            // One core task of two runs takes both shim tasks' bytes.
            bd(CORE, 0, &tile_bd(0x100, 8, None, None)),
            start_runs(CORE, Direction::S2mm, 0, 0, 2, false),
            bd(SHIM, 0, &shim_bd(8)),
            patch(0, 0, 0),
            bd(SHIM, 1, &shim_bd(8)),
            patch(1, 0, 8),
            start(SHIM, Direction::Mm2s, 0, 0, false),
            start(SHIM, Direction::Mm2s, 0, 1, true),
        ]);
        for (i, op) in ops.iter().enumerate() {
            assert_eq!(array.apply(i, op, &[ARG0]), Ok(Effect::None), "op {i}");
        }
        let shim = TokenKey {
            tile: SHIM,
            direction: Direction::Mm2s,
            channel: 0,
        };
        let core = TokenKey {
            tile: CORE,
            direction: Direction::S2mm,
            channel: 0,
        };
        assert!(!array.take_token(0, &shim).unwrap(), "nothing ran yet");
        assert!(array.step(&mut memory).unwrap());
        assert!(array.take_token(0, &shim).unwrap());
        assert!(
            !array.take_token(0, &shim).unwrap(),
            "one token for two tasks"
        );
        assert!(
            !array.take_token(0, &core).unwrap(),
            "the core task asked for none"
        );
        assert_eq!(
            memory.tile(CORE)[0x100..0x108],
            data[8..16],
            "second run last"
        );
        assert!(!array.busy());
        assert!(!array.step(&mut memory).unwrap(), "nothing left to move");
    }

    #[test]
    fn s2mm_waits_for_its_whole_length() {
        let mut memory = TestMemory::new(vec![(ARG0, vec![7; 64])]);
        let mut array = array();
        let ops = shim_to_core(tile_bd(0, 64, None, None), 32, 0);
        let (last, ops) = ops.split_last().unwrap();
        run(&mut array, ops, &mut memory).unwrap();
        assert!(array.apply(ops.len(), last, &[ARG0]).is_ok());
        assert_eq!(
            array.pending(),
            [
                "tile [0, 3] core.dma.s2mm[0] bd[0] (task queued by TXN op 12, run 1 of 1): \
              waits for 64 bytes on its stream (32 arrived)"
            ]
        );
    }

    #[test]
    fn a_descriptor_outside_tile_memory_is_an_error() {
        let mut memory = TestMemory::new(vec![(ARG0, vec![0; 256])]);
        let mut array = array();
        let ops = shim_to_core(tile_bd(0xFFC0, 128, None, None), 128, 0);
        let error = run(&mut array, &ops, &mut memory).unwrap_err();
        assert_eq!(
            error.to_string(),
            "TXN op 12: tile [0, 3] core.dma.s2mm[0] bd[0]: 128 bytes at 0xffc0 lie outside \
             the tile's data memory (0x0..0x10000 as its DMA addresses it; neighbour memories \
             are not modelled)"
        );
    }

    #[test]
    fn task_queue_overflow_is_an_error() {
        let mut array = array();
        let depth = strix().limits.task_queue_depth as usize;
        // The running task waits on lock 0, which stays 0.
        let mut ops = vec![bd(CORE, 0, &tile_bd(0, 16, Some((0, -1)), None))];
        ops.extend((0..depth + 2).map(|_| start(CORE, Direction::S2mm, 0, 0, false)));
        for (i, op) in ops[..depth + 2].iter().enumerate() {
            array.apply(i, op, &[]).unwrap();
        }
        let error = array.apply(depth + 2, &ops[depth + 2], &[]).unwrap_err();
        assert_eq!(
            error.to_string(),
            format!(
                "TXN op {}: tile [0, 3] core.dma.s2mm[0].start_queue: task queue overflow: \
                 {depth} tasks already wait behind the running one (queue depth {depth})",
                depth + 2
            )
        );
        assert_eq!(array.pending().len(), depth + 1);
    }

    #[test]
    fn memory_tile_channels_use_their_half_of_the_descriptors() {
        let mut array = array();
        let descriptor = tile_bd(0x80000, 16, None, None);
        array.apply(0, &bd(MEM, 0, &descriptor), &[]).unwrap();
        array.apply(1, &bd(MEM, 24, &descriptor), &[]).unwrap();
        let error = array
            .apply(2, &start(MEM, Direction::S2mm, 1, 0, false), &[])
            .unwrap_err();
        assert_eq!(
            error.to_string(),
            "TXN op 2: tile [0, 1] mem.dma.s2mm[1] bd[0]: a memory tile's channel 1 can use \
             only buffer descriptors 24..=47"
        );
        assert!(array
            .apply(3, &start(MEM, Direction::S2mm, 1, 24, false), &[])
            .is_ok());
        assert!(array
            .apply(4, &start(MEM, Direction::S2mm, 0, 0, false), &[])
            .is_ok());
    }

    #[test]
    fn a_send_chain_that_never_waits_is_an_error() {
        let mut array = array();
        let looping = BufferDescriptor {
            next_bd: Some(0),
            ..tile_bd(0, 16, None, None)
        };
        array.apply(0, &bd(CORE, 0, &looping), &[]).unwrap();
        let error = array
            .apply(1, &start(CORE, Direction::Mm2s, 0, 0, false), &[])
            .unwrap_err();
        assert!(error.message.contains("would send forever"), "{error}");
    }

    fn step(stride: u32, wrap: u32, current: u32) -> Option<Iteration> {
        Some(Iteration {
            stride,
            wrap,
            current,
        })
    }

    /// The iteration index a tile's buffer descriptor `n` holds now.
    fn current(array: &Array, tile: Tile, n: u32) -> u32 {
        let id = ChannelId {
            tile,
            kind: kind(tile),
            direction: Direction::Mm2s,
            channel: 0,
        };
        let words = array.bd_words(id, n).unwrap();
        let descriptor = strix().decode_bd(kind(tile), &words).unwrap();
        descriptor.iteration.unwrap().current
    }

    #[test]
    fn iteration_steps_each_use_wraps_and_carries_over_to_the_next_task() {
        // Three 16-byte chunks in argument 0.
        let data: Vec<u8> = (0..48).collect();
        let chunk = |i: usize| &data[16 * i..16 * (i + 1)];
        let mut memory = TestMemory::new(vec![(ARG0, data.clone())]);
        let mut array = array();
        // Four runs of shim BD 0 (stride 16, wrap 3, from index 1) read chunks
        // 1, 2, 0, 1; the core's chain BD 0 -> BD 1 (each stride 32, wrap 4),
        // run twice, writes them to 0x400, 0x410, 0x420, 0x430.
        let shim = BufferDescriptor {
            iteration: step(16, 3, 1),
            ..shim_bd(16)
        };
        let core = |n: u32| BufferDescriptor {
            next_bd: (n == 0).then_some(1),
            iteration: step(32, 4, 0),
            ..tile_bd(0x400 + 16 * u64::from(n), 16, None, None)
        };
        let mut ops = route_ops((SHIM, 0), (CORE, 0));
        ops.extend([
            bd(CORE, 0, &core(0)),
            bd(CORE, 1, &core(1)),
            start_runs(CORE, Direction::S2mm, 0, 0, 2, false),
            bd(SHIM, 0, &shim),
            patch(0, 0, 0),
            start_runs(SHIM, Direction::Mm2s, 0, 0, 4, true),
            sync(SHIM, Direction::Mm2s, 0),
        ]);
        run(&mut array, &ops, &mut memory).unwrap();
        let expected: Vec<u8> = [1, 2, 0, 1].into_iter().flat_map(chunk).copied().collect();
        assert_eq!(memory.tile(CORE)[0x400..0x440], expected[..]);
        assert_eq!(memory.tile(CORE)[0x440], 0, "nothing past the four steps");
        // The DMA wrote each index back: four uses from 1 leave the shim's at
        // 2, two uses each leave the core's at 2.
        assert_eq!(current(&array, SHIM, 0), 2);
        assert_eq!(current(&array, CORE, 0), 2);
        assert_eq!(current(&array, CORE, 1), 2);

        // A later task goes on from index 2 (chunk 2), then wraps to 0.
        let later = [
            bd(CORE, 2, &tile_bd(0x800, 16, None, None)),
            start(CORE, Direction::S2mm, 0, 2, false),
            start(SHIM, Direction::Mm2s, 0, 0, true),
            sync(SHIM, Direction::Mm2s, 0),
        ];
        run(&mut array, &later, &mut memory).unwrap();
        assert_eq!(memory.tile(CORE)[0x800..0x810], *chunk(2));
        assert_eq!(current(&array, SHIM, 0), 0);
        assert!(!array.busy());
        assert!(array.undelivered().is_empty());
    }

    /// A 4 x 4 f32 matrix, row-major in the caller's buffer, transposed by
    /// the shim's dimensions (word k from row k mod 4, column k / 4); the
    /// core's descriptor scatters the 16 words back with its own dimensions,
    /// transposing again, so the core holds the matrix as it was, and a
    /// second, linear core descriptor keeps the transposed stream.
    #[test]
    fn dimensions_gather_and_scatter_words() {
        let data: Vec<u8> = (0..16u32).flat_map(|v| v.to_le_bytes()).collect();
        let mut memory = TestMemory::new(vec![(ARG0, data.clone())]);
        let mut array = array();
        let d = |step, wrap| Dimension { step, wrap };
        let transpose = vec![d(16, Some(4)), d(4, Some(4)), d(64, None)];
        let shim = BufferDescriptor {
            length: 64,
            dimensions: transpose.clone(),
            ..shim_bd(64)
        };
        let scattered = BufferDescriptor {
            next_bd: Some(1),
            dimensions: transpose,
            ..tile_bd(0x400, 64, None, None)
        };
        let linear = tile_bd(0x800, 64, None, None);
        let mut ops = route_ops((SHIM, 0), (CORE, 0));
        ops.extend([
            bd(CORE, 0, &scattered),
            bd(CORE, 1, &linear),
            start(CORE, Direction::S2mm, 0, 0, false),
            bd(SHIM, 0, &shim),
            patch(0, 0, 0),
            start_runs(SHIM, Direction::Mm2s, 0, 0, 2, true),
            sync(SHIM, Direction::Mm2s, 0),
        ]);
        run(&mut array, &ops, &mut memory).unwrap();
        let word = |bytes: &[u8], k: usize| {
            u32::from_le_bytes(bytes[4 * k..4 * k + 4].try_into().unwrap())
        };
        let tile = memory.tile(CORE);
        let kept: Vec<u32> = (0..16).map(|k| word(&tile[0x400..], k)).collect();
        assert_eq!(kept, (0..16).collect::<Vec<u32>>());
        let streamed: Vec<u32> = (0..16).map(|k| word(&tile[0x800..], k)).collect();
        let transposed: Vec<u32> = (0..16).map(|k| (k % 4) * 4 + k / 4).collect();
        assert_eq!(streamed, transposed);
    }

    #[test]
    fn every_iteration_step_must_lie_in_tile_memory() {
        let mut memory = TestMemory::new(vec![(ARG0, vec![0; 32])]);
        let mut array = array();
        // The second step of the core's descriptor starts past its 64 KiB.
        let core = BufferDescriptor {
            iteration: step(16, 2, 0),
            ..tile_bd(0xFFF0, 16, None, None)
        };
        let mut ops = route_ops((SHIM, 0), (CORE, 0));
        let queued = ops.len() + 1;
        ops.extend([
            bd(CORE, 0, &core),
            start_runs(CORE, Direction::S2mm, 0, 0, 2, false),
            bd(SHIM, 0, &shim_bd(32)),
            patch(0, 0, 0),
            start(SHIM, Direction::Mm2s, 0, 0, true),
            sync(SHIM, Direction::Mm2s, 0),
        ]);
        let error = run(&mut array, &ops, &mut memory).unwrap_err();
        assert_eq!(
            error.to_string(),
            format!(
                "TXN op {queued}: tile [0, 3] core.dma.s2mm[0] bd[0]: 16 bytes at 0x10000 lie \
                 outside the tile's data memory (0x0..0x10000 as its DMA addresses it; \
                 neighbour memories are not modelled)"
            )
        );
    }
}
