// Fill (orogen-core's water_surface over the carved receivers): w = max(h, w_receiver + ε)
// from the outlets up, by pointer jumping (FastFlow, Jain et al. 2024, Algorithm 6, with the
// two corrections of the CPU's water_surface_pointer_jumping: a node keeps its running
// maximum, and jumps stop at the roots). Per node (w, e, jump, 0): w the surface so far, e
// the ε carried over the jump (k links: k ε), jump the node 2^r links down or NONE. With
// ε = 0 every value is a maximum of heights, exact: the CPU's bytes.

// The jump is kept as a u32 (a float's bits could be flushed or canonicalised).
struct Surface {
    w: f32,
    e: f32,
    jump: u32,
    pad: u32,
}

@group(0) @binding(1) var<storage, read_write> heights: array<f32>;
@group(0) @binding(2) var<storage, read> receivers: array<u32>;
@group(0) @binding(3) var<storage, read_write> src: array<Surface>;
@group(0) @binding(4) var<storage, read_write> dst: array<Surface>;
// Set to 1 when a round leaves some jump (control.wgsl).
@group(0) @binding(5) var<storage, read_write> live: array<atomic<u32>>;

@compute @workgroup_size(256)
fn init(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = node_index(gid, nwg);
    if (i >= p.n) {
        return;
    }
    let r = receivers[i];
    if (r == i) {
        src[i] = Surface(heights[i], 0.0, NONE, 0u);
    } else {
        src[i] = Surface(heights[i], p.epsilon, r, 0u);
    }
}

@compute @workgroup_size(256)
fn round(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = node_index(gid, nwg);
    if (i >= p.n) {
        return;
    }
    let g = src[i];
    let j = g.jump;
    if (j == NONE) {
        dst[i] = g;
        return;
    }
    let f = src[j];
    dst[i] = Surface(max(g.w, f.w + g.e), g.e + f.e, f.jump, 0u);
    if (f.jump != NONE && atomicLoad(&live[0]) == 0u) {
        atomicStore(&live[0], 1u);
    }
}

@compute @workgroup_size(256)
fn finish(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = node_index(gid, nwg);
    if (i >= p.n) {
        return;
    }
    heights[i] = src[i].w;
}
