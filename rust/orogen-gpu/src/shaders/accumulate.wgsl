// Drainage accumulation over the receiver forest by pointer jumping, without floating-point
// atomics: weights are 64-bit fixed point (two u32 words a node, scaled on the CPU by a power
// of two), summed with integer atomics, whose result does not depend on their order.
//
// After round k, sum[i] holds the weights of the nodes whose path to i is shorter than 2^k
// steps and jump[i] is the node 2^k steps down (NONE past the root). A round: dst = src
// (copy, jump doubled), then every node adds its src sum to its jump target's dst (scatter):
// D_{k+1} = D_k + P^(2^k) D_k. After ceil(log2 n) rounds sum[i] is i's drainage. This is the
// doubling of FastFlow (Jain et al. 2024, Algorithm 6: a value carried 2^(i-1) steps down the
// receivers per round), run upstream.

@group(0) @binding(1) var<storage, read> receivers: array<u32>;
@group(0) @binding(2) var<storage, read> weights: array<u32>;
@group(0) @binding(3) var<storage, read_write> src_sum: array<atomic<u32>>;
@group(0) @binding(4) var<storage, read_write> src_jump: array<u32>;
@group(0) @binding(5) var<storage, read_write> dst_sum: array<atomic<u32>>;
@group(0) @binding(6) var<storage, read_write> dst_jump: array<u32>;
// Set to 1 when a round leaves some jump (control.wgsl).
@group(0) @binding(7) var<storage, read_write> live: array<atomic<u32>>;

@compute @workgroup_size(256)
fn init(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = node_index(gid, nwg);
    if (i >= p.n) {
        return;
    }
    atomicStore(&src_sum[2u * i], weights[2u * i]);
    atomicStore(&src_sum[2u * i + 1u], weights[2u * i + 1u]);
    let r = receivers[i];
    if (r == i) {
        src_jump[i] = NONE;
    } else {
        src_jump[i] = r;
    }
}

@compute @workgroup_size(256)
fn copy(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = node_index(gid, nwg);
    if (i >= p.n) {
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
    if (i >= p.n) {
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
