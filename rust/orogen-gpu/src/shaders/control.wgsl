// Stops the pointer-jumping rounds once every chain has reached its root. The rounds run in
// pairs, each dispatched indirectly from `args`; a round's copy (or compose) sets `live[0]`
// when some jump is left. After the second round of a pair, `plan` keeps the next pair at
// full size if anything was live, else makes every later dispatch empty. Pairs keep the
// result in the first of the two buffers whatever the number of rounds run. `live` is only
// ever set to 1, so its value does not depend on the order of the writes.

@group(0) @binding(1) var<storage, read_write> live: array<atomic<u32>>;
@group(0) @binding(2) var<storage, read_write> args: array<u32>;
// basins.wgsl's counter: [1] is set by receivers.wgsl when some node is a pit, [4] by
// boruvka.wgsl's hook when a component hooked.
@group(0) @binding(3) var<storage, read_write> flags: array<atomic<u32>>;
// The basins' own dispatch arguments (their passes outside the rounds).
@group(0) @binding(4) var<storage, read_write> lake_args: array<u32>;
// A speculative step's full-grid dispatches, [0..3], its tiles' (tiles.wgsl), [4..7], and
// its receivers', [8..11] (empty where it is skipped).
@group(0) @binding(5) var<storage, read_write> gate_args: array<u32>;
// tiles.wgsl's exits: [0] appended this step, [1] the count the exits' rounds run over.
@group(0) @binding(6) var<storage, read_write> xcount: array<u32>;

// args: [0..3] a round's dispatch, [3..5] the size of the current phase's rounds (plan
// restores it), [5..8] a dispatch over the exits, [8] the pairs of rounds the current phase
// has run (arm_exits starts it, plan counts).
fn set_size(gx: u32, gy: u32, full: bool) {
    args[3] = gx;
    args[4] = gy;
    if (full) {
        args[0] = gx;
        args[1] = gy;
    } else {
        args[0] = 0u;
        args[1] = 0u;
    }
    args[2] = 1u;
}

fn set_args(full: bool) {
    set_size(p.groups_x, p.groups_y, full);
}

// Before a phase's first round: full-size dispatches, unless the step is skipped
// (flags[3], set by `gate`).
@compute @workgroup_size(1)
fn arm() {
    set_args(atomicLoad(&flags[3]) == 0u);
    atomicStore(&live[0], 0u);
}

// After the first round of a pair.
@compute @workgroup_size(1)
fn reset() {
    atomicStore(&live[0], 0u);
}

// After the second round of a pair.
@compute @workgroup_size(1)
fn plan() {
    let more = atomicLoad(&live[0]) != 0u;
    set_size(args[3], args[4], more);
    if (more) {
        args[8] = args[8] + 1u;
    }
    atomicStore(&live[0], 0u);
}

// After tiles.wgsl's tile_a: the exits' rounds and dispatches sized to the exits appended
// (empty where the step is skipped); the count is zeroed for the next step.
@compute @workgroup_size(1)
fn arm_exits() {
    let count = xcount[0];
    xcount[0] = 0u;
    xcount[1] = count;
    let groups = max(1u, (count + WG - 1u) / WG);
    let gx = min(groups, p.groups_x);
    let gy = (groups + gx - 1u) / gx;
    let full = atomicLoad(&flags[3]) == 0u && count > 0u;
    set_size(gx, gy, full);
    args[5] = select(0u, gx, full);
    args[6] = select(0u, gy, full);
    args[7] = 1u;
    args[8] = 1u;
    atomicStore(&live[0], 0u);
}

// After a speculative step's drainage rounds over the exits, of which fewer than
// ceil(log2 n) are encoded (as many as the last steps needed, and a pair more): the pairs
// run (the most of any step not skipped, flags[6]); where some chain is not done (the last pair left a
// jump), the step is skipped as for a pit (its later dispatches empty, counted in
// flags[2], and in flags[7]): the same heights give the same chains, so every later
// speculative step is skipped too, and the CPU redoes them with every round.
@compute @workgroup_size(1)
fn rounds_done() {
    if (atomicLoad(&flags[3]) != 0u) {
        return;
    }
    atomicMax(&flags[6], args[8]);
    if (args[0] != 0u) {
        atomicStore(&flags[3], 1u);
        atomicAdd(&flags[2], 1u);
        atomicAdd(&flags[7], 1u);
        gate_args[0] = 0u;
        gate_args[1] = 0u;
        gate_args[4] = 0u;
        gate_args[5] = 0u;
        args[5] = 0u;
        args[6] = 0u;
    }
}

// Before the exits' solve rounds (solve.wgsl): the exits' size again.
@compute @workgroup_size(1)
fn arm_x() {
    set_size(args[5], args[6], args[5] != 0u);
    atomicStore(&live[0], 0u);
}

// Before the basins: their rounds and passes at full size where the receivers left a pit,
// else empty (no pit, no lake: the candidate list stays empty).
@compute @workgroup_size(1)
fn arm_lakes() {
    let pits = atomicLoad(&flags[1]) != 0u;
    set_args(pits);
    if (pits) {
        lake_args[0] = p.groups_x;
        lake_args[1] = p.groups_y;
    } else {
        lake_args[0] = 0u;
        lake_args[1] = 0u;
    }
    lake_args[2] = 1u;
    atomicStore(&live[0], 0u);
}

fn set_lake_args(full: bool) {
    if (full) {
        lake_args[0] = p.groups_x;
        lake_args[1] = p.groups_y;
    } else {
        lake_args[0] = 0u;
        lake_args[1] = 0u;
    }
    lake_args[2] = 1u;
}

// Before a phase's rounds inside the lake routing: full size while the lakes' dispatches
// are (lake_args, which arm_lakes, next_round and arm_fill set).
@compute @workgroup_size(1)
fn arm_lakes_rounds() {
    set_args(lake_args[0] != 0u);
    atomicStore(&live[0], 0u);
}

// After a Borůvka round (boruvka.wgsl): the next one at full size if some component hooked
// in this one (some pit was left), else every later round empty.
@compute @workgroup_size(1)
fn next_round() {
    set_lake_args(atomicLoad(&flags[4]) != 0u);
    atomicStore(&flags[4], 0u);
}

// After the spanning tree: Fill's dispatches at full size where the receivers left a pit.
@compute @workgroup_size(1)
fn arm_fill() {
    set_lake_args(atomicLoad(&flags[1]) != 0u);
}

// Marks this step skipped (flags[3]), counts it (flags[2]) and empties its drainage and
// solve dispatches (gate_args[0..1], [4..5]).
fn skip_step() {
    atomicStore(&flags[3], 1u);
    atomicAdd(&flags[2], 1u);
    gate_args[0] = 0u;
    gate_args[1] = 0u;
    gate_args[4] = 0u;
    gate_args[5] = 0u;
}

// A speculative step, before its receivers: where an earlier speculative step since the
// CPU last looked was skipped (flags[2] != 0), this one is skipped too, at once: it would
// start from the same heights (a skipped step leaves them), so meet the same pits or
// chains. Its receivers' dispatch (gate_args[8..11]) and every later one are empty, and it
// is counted in flags[2]; the CPU redoes the skipped steps (settle). Else the receivers run
// at full size and `gate` decides. It also clears the step's flags[0] and flags[1].
@compute @workgroup_size(1)
fn enter() {
    // The step's pit flag (and candidate count), cleared here rather than by a copy.
    atomicStore(&flags[0], 0u);
    atomicStore(&flags[1], 0u);
    let skip = atomicLoad(&flags[2]) != 0u;
    if (skip) {
        skip_step();
        gate_args[8] = 0u;
        gate_args[9] = 0u;
    } else {
        atomicStore(&flags[3], 0u);
        gate_args[8] = p.groups_x;
        gate_args[9] = p.groups_y;
    }
    gate_args[2] = 1u;
    gate_args[6] = 1u;
    gate_args[10] = 1u;
}

// A speculative step (lakes, as if no pit were left), after its receivers (and `enter`):
// where they left a pit the step is skipped (its drainage and solve dispatches empty,
// heights unchanged) and counted in flags[2]; the CPU later redoes it with the lakes routed.
@compute @workgroup_size(1)
fn gate() {
    if (atomicLoad(&flags[3]) != 0u) {
        // Skipped by `enter`.
        return;
    }
    let pits = atomicLoad(&flags[1]) != 0u;
    if (pits) {
        skip_step();
    } else {
        atomicStore(&flags[3], 0u);
        gate_args[0] = p.groups_x;
        gate_args[1] = p.groups_y;
        gate_args[4] = p.tiles_x;
        gate_args[5] = p.tiles_y;
    }
    gate_args[2] = 1u;
    gate_args[6] = 1u;
}
