//! The timing model's figures: the command processor's clock and busy
//! cycles, the records sent, and when the DMA channels finish and which
//! was busiest.

use super::dma::channel_name;
use super::Array;
use loom_targets::xdna::regs::Direction;

impl Array {
    /// The command processor's modelled cycle (a core it enables starts then).
    pub fn control_clock(&self) -> u64 {
        self.control
    }

    /// The cycles the command processor spent writing registers.
    pub fn control_busy(&self) -> u64 {
        self.control_busy
    }

    /// Records sent out of core and memory tiles so far (one per buffer
    /// descriptor an MM2S channel completed there).
    pub fn records_sent(&self) -> u64 {
        self.sent
    }

    /// The modelled cycle every DMA channel is done, and the channel that
    /// spent the most cycles moving data (its name and those cycles).
    pub fn dma_times(&self) -> (u64, Option<(String, u64)>) {
        let mut end = 0;
        let mut busiest: Option<(String, u64)> = None;
        for (&tile, state) in &self.tiles {
            for direction in [Direction::S2mm, Direction::Mm2s] {
                for (channel, c) in state.channels(direction).iter().enumerate() {
                    end = end.max(c.clock);
                    if c.busy > busiest.as_ref().map_or(0, |b| b.1) {
                        let name = channel_name(state.kind, direction, channel as u32);
                        busiest = Some((format!("tile {} {name}", tile), c.busy));
                    }
                }
            }
        }
        (end, busiest)
    }
}

#[cfg(test)]
mod tests {
    use crate::sim::array::testing::*;

    #[test]
    fn transfers_take_their_bytes_at_the_dma_rate_and_the_route_latency() {
        let data: Vec<u8> = (0..128).collect();
        let mut memory = TestMemory::new(vec![(ARG0, data)]);
        let mut array = array();
        let ops = shim_to_core(tile_bd(0x400, 64, Some((0, -1)), Some((1, 1))), 64, 16);
        run(&mut array, &ops, &mut memory).unwrap();
        let timing = &strix().timing;
        let moving = 64 / timing.dma_bytes_per_cycle;
        let (end, busiest) = array.dma_times();
        // Both channels move 64 bytes: the shim sends from the cycle its task
        // was queued; the core's S2MM ends when the last byte has crossed the
        // four stream switches from row 0 to row 3.
        let (name, busy) = busiest.unwrap();
        assert_eq!(busy, moving, "{name}");
        let sent = array.tiles[&SHIM].mm2s[0].clock;
        assert_eq!(
            array.tiles[&CORE].s2mm[0].clock,
            sent + 4 * timing.stream_switch_latency_cycles
        );
        assert_eq!(end, array.tiles[&CORE].s2mm[0].clock);
        // The published record's lock carries the cycle it was released.
        assert_eq!(array.lock_time(CORE, 1), end);
        // The SYNC, the last op, returned when the shim's token was issued,
        // after the command processor's own writes.
        assert_eq!(array.control_clock(), sent);
        assert!(array.control_busy() < sent);
    }
}
