// The drainage rounds of tiles.wgsl over the compact list of tile exits (the reduced
// forest): accumulate.wgsl's copy and scatter (FastFlow's doubling, Jain et al. 2024,
// Algorithm 6, run upstream), bounded by the exits' count instead of the grid's.

@group(0) @binding(1) var<storage, read> xcount: array<u32>;
@group(0) @binding(2) var<storage, read_write> src_sum: array<atomic<u32>>;
@group(0) @binding(3) var<storage, read_write> src_jump: array<u32>;
@group(0) @binding(4) var<storage, read_write> dst_sum: array<atomic<u32>>;
@group(0) @binding(5) var<storage, read_write> dst_jump: array<u32>;
// Set to 1 when a round leaves some jump (control.wgsl).
@group(0) @binding(6) var<storage, read_write> live: array<atomic<u32>>;

@compute @workgroup_size(256)
fn copy(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = node_index(gid, nwg);
    if (i >= xcount[1]) {
        return;
    }
    atomicStore(&dst_sum[2u * i], atomicLoad(&src_sum[2u * i]));
    atomicStore(&dst_sum[2u * i + 1u], atomicLoad(&src_sum[2u * i + 1u]));
    let j = src_jump[i];
    if (j == NONE) {
        dst_jump[i] = NONE;
    } else {
        let next = src_jump[j];
        dst_jump[i] = next;
        if (next != NONE && atomicLoad(&live[0]) == 0u) {
            atomicStore(&live[0], 1u);
        }
    }
}

@compute @workgroup_size(256)
fn scatter(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = node_index(gid, nwg);
    if (i >= xcount[1]) {
        return;
    }
    let j = src_jump[i];
    if (j == NONE) {
        return;
    }
    let lo = atomicLoad(&src_sum[2u * i]);
    let hi = atomicLoad(&src_sum[2u * i + 1u]);
    if (lo == 0u && hi == 0u) {
        return;
    }
    // Each wrap of the low word is seen by exactly the add that caused it.
    let old = atomicAdd(&dst_sum[2u * j], lo);
    let carry = select(0u, 1u, old + lo < old);
    atomicAdd(&dst_sum[2u * j + 1u], hi + carry);
}
