//! The lake routing of [`GpuStreamPower`], all on the GPU: the basins and their keys and
//! masks (basins.wgsl), the spanning tree by Borůvka's rounds (boruvka.wgsl), each round
//! carving the receivers of the components that hook (carve.wgsl), then Fill's surface
//! (fill.wgsl); nothing is read back but the count of speculative steps skipped for pits.
//! The tests' reference, `route_with_cpu_tree`, reads the candidate passes back and takes
//! the tree on the CPU ([`crate::lakes`]).

use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::Arc;

use orogen_core::{OrogenError, Result};

use super::{bind, GpuStreamPower, CANDIDATE_BYTES};
use crate::lakes::Candidate;

impl GpuStreamPower {
    /// A full-grid dispatch of a basins entry, or an empty one where the receivers left no
    /// pit (control.wgsl's `arm_lakes`).
    fn dispatch_lakes(&self, pass: &mut wgpu::ComputePass, pipe: &wgpu::ComputePipeline) {
        self.dispatch_lakes_in(pass, pipe, &self.basins_group);
    }

    /// A full-grid dispatch while the lakes' dispatches are (`lake_args`), with `group`.
    fn dispatch_lakes_in(
        &self,
        pass: &mut wgpu::ComputePass,
        pipe: &wgpu::ComputePipeline,
        group: &wgpu::BindGroup,
    ) {
        pass.set_pipeline(pipe);
        pass.set_bind_group(0, group, &[]);
        pass.dispatch_workgroups_indirect(&self.lake_args, 0);
    }

    /// Encodes basins.wgsl's labels, keys and masks (no candidate list); all empty
    /// dispatches where the receivers left no pit.
    pub(super) fn encode_keys(&self, pass: &mut wgpu::ComputePass) {
        self.control(pass, 3);
        self.dispatch_lakes(pass, &self.basins[0]);
        for r in 0..self.rounds as usize {
            self.dispatch_round(pass, &self.basins[1], &self.basins_group);
            self.end_round(pass, r);
        }
        for k in 2..4 {
            self.dispatch_lakes(pass, &self.basins[k]);
        }
    }

    /// Encodes Borůvka's rounds (boruvka.wgsl), each: each pit component's lightest edge,
    /// the hooks, the carving of the hooked components, their new labels; then the next
    /// round's dispatches at full size only where one hooked. The components with a pit at
    /// least halve each round, so `ceil(log2 n)` rounds (`self.rounds`, or more) drain
    /// every lake.
    pub(super) fn encode_boruvka(&self, pass: &mut wgpu::ComputePass) {
        let (b, g) = (&self.boruvka, &self.boruvka_group);
        self.dispatch_lakes_in(pass, &b[0], g);
        for _ in 0..self.rounds {
            for pipe in &b[1..] {
                self.dispatch_lakes_in(pass, pipe, g);
            }
            self.control(pass, 6);
        }
    }

    /// Encodes Fill's surface and second descent over the carved receivers; with `gated`,
    /// only where the receivers left a pit (control.wgsl's `arm_fill`).
    pub(super) fn encode_fill(&self, pass: &mut wgpu::ComputePass, gated: bool) {
        let full = |pass: &mut wgpu::ComputePass,
                    pipe: &wgpu::ComputePipeline,
                    group: &wgpu::BindGroup| {
            if gated {
                self.dispatch_lakes_in(pass, pipe, group);
            } else {
                self.dispatch(pass, pipe, group);
            }
        };
        if gated {
            self.control(pass, 7);
        }
        full(pass, &self.fill[0], &self.fill_groups[0]);
        self.control(pass, if gated { 5 } else { 0 });
        for r in 0..self.rounds as usize {
            self.dispatch_round(pass, &self.fill[1], &self.fill_groups[r % 2]);
            self.end_round(pass, r);
        }
        full(pass, &self.fill[2], &self.fill_groups[0]);
        full(pass, &self.descend.0, &self.descend.1);
    }

    /// Encodes the candidate passes of basins.wgsl: labels, keys, masks, the list; all
    /// empty dispatches where the receivers left no pit (no lake, no candidate).
    fn encode_basins(&self, pass: &mut wgpu::ComputePass) {
        self.control(pass, 3);
        self.dispatch_lakes(pass, &self.basins[0]);
        for r in 0..self.rounds as usize {
            self.dispatch_round(pass, &self.basins[1], &self.basins_group);
            self.end_round(pass, r);
        }
        for k in 2..5 {
            self.dispatch_lakes(pass, &self.basins[k]);
        }
    }

    /// Encodes the carving along `count` passes uploaded (the CPU's tree).
    pub(super) fn encode_lakes(&self, pass: &mut wgpu::ComputePass, count: u32) {
        let g = &self.carve_group;
        self.dispatch(pass, &self.carve[0], g);
        self.dispatch_count(pass, &self.carve[1], g, count);
        self.encode_rounds(pass);
        self.dispatch(pass, &self.carve[2], g);
        self.dispatch_count(pass, &self.carve[3], g, count);
        self.dispatch(pass, &self.carve[4], g);
    }

    /// The candidate count of the last emit.
    fn read_count(&self) -> Result<u64> {
        let bytes = self.read_range(&self.counter, 4)?;
        Ok(u64::from(u32::from_le_bytes([
            bytes[0], bytes[1], bytes[2], bytes[3],
        ])))
    }

    /// Clears the candidate count (and with `pits` the receivers' pit flag), then runs `f`.
    fn run_counted(&self, pits: bool, f: impl FnOnce(&mut wgpu::ComputePass)) {
        let counter = &self.counter;
        // With the pit flag go the speculative steps' skip count and gate (16 bytes).
        let size = if pits { 16 } else { 4 };
        self.run(|e| e.clear_buffer(counter, 0, Some(size)), f);
    }

    /// Grows the candidate list to hold `count`, or an error naming `lakes` if the GPU
    /// cannot bind that much.
    fn grow_candidates(&mut self, count: u64) -> Result<()> {
        self.room = count.next_power_of_two();
        let size = self.room * CANDIDATE_BYTES;
        let limits = self.ctx.limits();
        let max = (limits.max_storage_buffer_binding_size as u64).min(limits.max_buffer_size);
        if size > max {
            return Err(OrogenError::invalid(
                format!("{}.lakes", self.field),
                format!(
                    "{count} candidate passes need {size} bytes of GPU buffer, {} allows {max}",
                    self.ctx.describe()
                ),
            ));
        }
        let device = &self.ctx.device;
        self.candidates = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("candidate passes"),
            size,
            usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC,
            mapped_at_creation: false,
        });
        self.basins_group = bind(
            device,
            &self.basins_layout,
            &[
                &self.params_buf,
                &self.heights,
                &self.receivers,
                &self.lake_keys,
                &self.lake_masks,
                &self.candidates,
                &self.counter,
                &self.live,
            ],
        );
        Ok(())
    }

    /// Grows the pass list to hold `k` passes.
    fn grow_passes(&mut self, k: u64) {
        self.pass_room = k.next_power_of_two();
        let device = &self.ctx.device;
        self.passes = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("passes"),
            size: 8 * self.pass_room,
            usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        self.carve_group = bind(
            device,
            &self.carve_layout,
            &[
                &self.params_buf,
                &self.receivers,
                &self.dists,
                &self.sums[0],
                &self.jumps[0],
                &self.passes,
                &self.maps[1],
            ],
        );
    }

    /// The lake routing's first half: receivers and the candidate passes on the GPU, read
    /// back, and the spanning tree on the CPU; leaves each lake's pass in `pass_list` and
    /// on the GPU.
    pub(super) fn find_passes(&mut self) -> Result<()> {
        self.params.count = 0;
        self.params.keep = 0;
        self.write_params();
        self.run_counted(true, |pass| {
            self.dispatch(pass, &self.descend.0, &self.descend.1);
            self.encode_basins(pass);
        });
        let mut count = self.read_count()?;
        if count > self.room {
            // More candidates than room: a larger list, made again (the keys and masks are
            // still there).
            self.grow_candidates(count)?;
            // The pit flag is kept: the list is made again only where it was set.
            self.run_counted(false, |pass| {
                self.control(pass, 3);
                self.dispatch_lakes(pass, &self.basins[4]);
            });
            count = self.read_count()?;
        }
        self.pass_list.clear();
        if count == 0 {
            return Ok(());
        }
        let bytes = self.read_range(&self.candidates, count * CANDIDATE_BYTES)?;
        let words: Vec<u32> = bytemuck::pod_collect_to_vec(&bytes);
        let candidates: Vec<Candidate> = words
            .chunks_exact(5)
            .map(|c| [c[0], c[1], c[2], c[3], c[4]])
            .collect();
        self.lake_passes.passes(&candidates, &mut self.pass_list);
        let k = self.pass_list.len() as u64;
        if k > self.pass_room {
            self.grow_passes(k);
        }
        if k > 0 {
            self.ctx
                .queue
                .write_buffer(&self.passes, 0, bytemuck::cast_slice(&self.pass_list));
        }
        Ok(())
    }

    /// A step with lakes as if the receivers left no pit, without waiting: receivers, then
    /// drainage and the solve, all gated by control.wgsl's `gate`, which empties their
    /// dispatches and counts the step as skipped where some node is a pit. A skipped step
    /// leaves the heights as they were, so every later speculative step finds the same
    /// pits and is skipped too: [`GpuStreamPower::settle`] redoes the skipped ones, the
    /// last of `pending`, with the lakes routed.
    pub(super) fn speculate(&mut self, dt: f32) -> Result<()> {
        self.need_heights()?;
        self.params.dt = dt;
        self.params.count = 0;
        self.params.keep = 0;
        self.write_params();
        let device = &self.ctx.device;
        let probe = self.spare_probes.pop().unwrap_or_else(|| {
            device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("skip probe"),
                size: 4,
                usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            })
        });
        let mut encoder =
            device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: None });
        {
            let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: Some("speculative step"),
                timestamp_writes: None,
            });
            self.encode_speculative_receivers(&mut pass);
            self.encode_drainage(&mut pass, true, true);
        }
        // The skip count after this step, read without waiting (`skip_seen`).
        encoder.copy_buffer_to_buffer(&self.counter, 8, &probe, 0, 4);
        self.ctx.queue.submit([encoder.finish()]);
        let state = Arc::new(AtomicU8::new(0));
        let set = state.clone();
        probe.slice(..).map_async(wgpu::MapMode::Read, move |r| {
            set.store(if r.is_ok() { 1 } else { 2 }, Ordering::Release);
        });
        self.probes.push_back((probe, state));
        self.pending.push(dt);
        self.lake_count = Some(0);
        self.has_drainage = false;
        Ok(())
    }

    /// Whether a speculative step submitted since the last settle is known to have been
    /// skipped, from the probes the GPU has filled so far (no wait: a non-blocking poll).
    /// Every later speculative step is skipped too, so `step` settles at once rather than
    /// submit more of them.
    pub(super) fn skip_seen(&mut self) -> bool {
        let _ = self.ctx.device.poll(wgpu::PollType::Poll);
        while let Some((probe, state)) = self.probes.front() {
            match state.load(Ordering::Acquire) {
                0 => return false,
                1 => {
                    let skipped = {
                        let bytes = probe.slice(..).get_mapped_range();
                        u32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]])
                    };
                    probe.unmap();
                    let (probe, _) = self.probes.pop_front().expect("a probe");
                    self.spare_probes.push(probe);
                    if skipped > 0 {
                        return true;
                    }
                }
                _ => {
                    self.probes.pop_front();
                }
            }
        }
        false
    }

    /// Forgets the probes in flight (after a wait their maps are done: kept for reuse).
    pub(super) fn drop_probes(&mut self) {
        for (probe, state) in self.probes.drain(..) {
            if state.load(Ordering::Acquire) == 1 {
                probe.unmap();
                self.spare_probes.push(probe);
            }
        }
    }

    /// Reads how many of the speculative steps were skipped (a wait for the GPU) and redoes
    /// those, the last ones: the first with the lakes routed (a full step, on the GPU, no
    /// further wait), the others speculatively again, as the pits that skipped them are
    /// mostly gone a step later; then reads again, doubling the full steps each time, until
    /// none is skipped. Every reader of results calls it first.
    pub(super) fn settle(&mut self) -> Result<()> {
        let mut full = 1;
        // True while full steps were redone and not read since (their rounds to learn).
        let mut unread = false;
        while !self.pending.is_empty() || unread {
            let words: Vec<u32> =
                bytemuck::pod_collect_to_vec(&self.read_range(&self.counter, 32)?);
            self.drop_probes();
            self.learn_rounds(&words);
            self.ctx.queue.write_buffer(&self.counter, 24, &[0; 8]);
            let skipped = (words[2] as usize).min(self.pending.len());
            let mut redo = self.pending.split_off(self.pending.len() - skipped);
            self.pending.clear();
            unread = !redo.is_empty();
            let again = redo.split_off(full.min(redo.len()));
            self.redone[0] += skipped as u64;
            self.redone[1] += redo.len() as u64;
            self.redone[2] += again.len() as u64;
            for dt in redo {
                // The full step clears the skip count with the candidate counter.
                self.submit(dt, true, false)?;
            }
            for dt in again {
                self.speculate(dt)?;
            }
            full *= 2;
        }
        Ok(())
    }

    /// The exits' rounds of the next speculative steps from the counter's words: those the
    /// steps since the last look needed (`words[6]`, pairs) and a pair more, or every round
    /// after a step they did not suffice for (`words[7]`).
    fn learn_rounds(&mut self, words: &[u32]) {
        if words[7] > 0 {
            self.spec_rounds = self.rounds;
        } else if words[6] > 0 {
            self.spec_rounds = (2 * (words[6] + 1)).min(self.rounds);
        }
    }
}
