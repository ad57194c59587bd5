// The basin graph's candidate passes, for the lake routing of carve.wgsl (Cordonnier et al.
// 2019, as orogen-core's basin_graph.rs; FastFlow, Jain et al. 2024, finds basins the same
// way, by pointer jumping to each tree's root).
//
// 1. label_*: each node's tree root by pointer jumping on the receivers, then its
//    basin-graph node key: 0 for every outlet tree (merged, as on the CPU), root + 1 for a
//    pit's tree (a lake). Keys order lakes as the CPU numbers them (by pit index).
// 2. mask: per cell, the CPU's keep_mask: the neighbours in another key whose pass (the
//    higher of the two heights, in f32::total_cmp order) is the lowest from this cell to
//    that key, ties to the lower OFFSETS index. Any other pair has a lower pair between
//    the same two keys, so it is in no minimum spanning tree.
// 3. emit: each pair of neighbours (from a cell to its E, SW, S and SE neighbours, so once)
//    that both cells keep, appended as (height bits, a, b, na, nb): a the lake side (the
//    lower key of two lakes, or the lake facing an outlet tree), na its cell. The order of
//    the appends varies from run to run; the CPU sorts the list by the strict order of
//    passes, so the spanning tree does not depend on it.

@group(0) @binding(1) var<storage, read> heights: array<f32>;
@group(0) @binding(2) var<storage, read> receivers: array<u32>;
@group(0) @binding(3) var<storage, read_write> keys: array<atomic<u32>>;
@group(0) @binding(4) var<storage, read_write> masks: array<u32>;
@group(0) @binding(5) var<storage, read_write> candidates: array<u32>;
// [0]: candidates found (those past the buffer's room are counted, not written).
@group(0) @binding(6) var<storage, read_write> counter: array<atomic<u32>>;
// Set to 1 when a round leaves some jump (control.wgsl).
@group(0) @binding(7) var<storage, read_write> live: array<atomic<u32>>;

@compute @workgroup_size(256)
fn label_init(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = node_index(gid, nwg);
    if (i >= p.n) {
        return;
    }
    atomicStore(&keys[i], receivers[i]);
}

// In place: a node reads some node further down its own chain (or the root), whatever the
// order of the other writes, so the labels only move down and reach the root within
// ceil(log2 n) rounds; a round that changes nothing leaves every label at a root.
@compute @workgroup_size(256)
fn label_jump(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = node_index(gid, nwg);
    if (i >= p.n) {
        return;
    }
    let j = atomicLoad(&keys[i]);
    let k = atomicLoad(&keys[j]);
    if (k != j) {
        atomicStore(&keys[i], k);
        if (atomicLoad(&live[0]) == 0u) {
            atomicStore(&live[0], 1u);
        }
    }
}

// Roots to keys, in place (each node reads and writes only its own entry).
@compute @workgroup_size(256)
fn label_key(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = node_index(gid, nwg);
    if (i >= p.n) {
        return;
    }
    let r = atomicLoad(&keys[i]);
    if (is_outlet(r, heights[r])) {
        atomicStore(&keys[i], 0u);
    } else {
        if (r == i) {
            // A pit: one lake more (counter[5]).
            atomicAdd(&counter[5], 1u);
        }
        atomicStore(&keys[i], r + 1u);
    }
}

@compute @workgroup_size(256)
fn mask(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = node_index(gid, nwg);
    if (i >= p.n) {
        return;
    }
    let centre = atomicLoad(&keys[i]);
    let own = ordered(heights[i]);
    var nk: array<u32, 8>;
    var pk: array<u32, 8>;
    var present = 0u;
    for (var k = 0u; k < 8u; k = k + 1u) {
        let j = neighbour(i, k);
        if (j == NONE) {
            nk[k] = NONE;
            pk[k] = 0u;
            continue;
        }
        present = present | (1u << k);
        nk[k] = atomicLoad(&keys[j]);
        pk[k] = max(ordered(heights[j]), own);
    }
    var dominated = 0u;
    for (var l = 0u; l < 8u; l = l + 1u) {
        for (var k = l + 1u; k < 8u; k = k + 1u) {
            let both = ((present >> l) & (present >> k) & 1u) == 1u;
            if (both && nk[l] == nk[k]) {
                if (pk[l] <= pk[k]) {
                    dominated = dominated | (1u << k);
                } else {
                    dominated = dominated | (1u << l);
                }
            }
        }
    }
    var m = 0u;
    for (var k = 0u; k < 8u; k = k + 1u) {
        if (((present >> k) & 1u) == 1u && nk[k] != centre && ((dominated >> k) & 1u) == 0u) {
            m = m | (1u << k);
        }
    }
    masks[i] = m;
}

@compute @workgroup_size(256)
fn emit(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = node_index(gid, nwg);
    if (i >= p.n) {
        return;
    }
    let mi = masks[i];
    if ((mi & 0xf0u) == 0u) {
        return;
    }
    let ki = atomicLoad(&keys[i]);
    let room = arrayLength(&candidates) / 5u;
    for (var k = 4u; k < 8u; k = k + 1u) {
        if (((mi >> k) & 1u) == 0u) {
            continue;
        }
        // The neighbour is in the grid (the mask has only present neighbours).
        let j = neighbour(i, k);
        // The opposite direction of k is 7 - k.
        if (((masks[j] >> (7u - k)) & 1u) == 0u) {
            continue;
        }
        let kj = atomicLoad(&keys[j]);
        let hi = heights[i];
        let hj = heights[j];
        var h = hj;
        if (ordered(hi) >= ordered(hj)) {
            h = hi;
        }
        let lake_i = ki != 0u && (kj == 0u || ki < kj);
        let slot = atomicAdd(&counter[0], 1u);
        if (slot >= room) {
            continue;
        }
        let at = 5u * slot;
        candidates[at] = bitcast<u32>(h);
        if (lake_i) {
            candidates[at + 1u] = ki;
            candidates[at + 2u] = kj;
            candidates[at + 3u] = i;
            candidates[at + 4u] = j;
        } else {
            candidates[at + 1u] = kj;
            candidates[at + 2u] = ki;
            candidates[at + 3u] = j;
            candidates[at + 4u] = i;
        }
    }
}
