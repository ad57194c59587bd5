// The nodes in order of depth (links to their tree's root), for solve_n.wgsl's walk level
// by level: depth by pointer jumping (each node's jump and the links it spans, doubled each
// round, as the drainage's rounds), then a count per depth (read back: the CPU turns the
// counts into offsets and cursors), then each node appended at its depth's cursor. The
// order within a depth varies from run to run; the heights do not depend on it.

struct Link {
    jump: u32,
    depth: u32,
    pad0: u32,
    pad1: u32,
}

@group(0) @binding(1) var<storage, read> receivers: array<u32>;
@group(0) @binding(2) var<storage, read_write> src: array<Link>;
@group(0) @binding(3) var<storage, read_write> dst: array<Link>;
// Per depth: the count, then (written by the CPU) the next free place in `order`.
@group(0) @binding(4) var<storage, read_write> counts: array<atomic<u32>>;
@group(0) @binding(5) var<storage, read_write> order: array<u32>;
// Set to 1 when a round leaves some jump (control.wgsl).
@group(0) @binding(6) var<storage, read_write> live: array<atomic<u32>>;
// [0] the deepest level, [1] the level solve_n.wgsl is at.
@group(0) @binding(7) var<storage, read_write> info: array<atomic<u32>>;

@compute @workgroup_size(256)
fn depth_init(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = node_index(gid, nwg);
    if (i >= p.n) {
        return;
    }
    let r = receivers[i];
    if (r == i) {
        src[i] = Link(NONE, 0u, 0u, 0u);
    } else {
        src[i] = Link(r, 1u, 0u, 0u);
    }
    atomicStore(&counts[i], 0u);
    if (i == 0u) {
        atomicStore(&info[0], 0u);
        atomicStore(&info[1], 0u);
    }
}

@compute @workgroup_size(256)
fn depth_round(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = node_index(gid, nwg);
    if (i >= p.n) {
        return;
    }
    let g = src[i];
    if (g.jump == NONE) {
        dst[i] = g;
        return;
    }
    let f = src[g.jump];
    dst[i] = Link(f.jump, g.depth + f.depth, 0u, 0u);
    if (f.jump != NONE && atomicLoad(&live[0]) == 0u) {
        atomicStore(&live[0], 1u);
    }
}

@compute @workgroup_size(256)
fn histogram(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = node_index(gid, nwg);
    if (i >= p.n) {
        return;
    }
    let d = src[i].depth;
    if (d > 0u) {
        atomicAdd(&counts[d], 1u);
        atomicMax(&info[0], d);
    }
}

@compute @workgroup_size(256)
fn scatter(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = node_index(gid, nwg);
    if (i >= p.n) {
        return;
    }
    let d = src[i].depth;
    if (d > 0u) {
        order[atomicAdd(&counts[d], 1u)] = i;
    }
}
