// Carving (fastscapelib's carve, orogen-core's router.rs `carve`): each lake drains through
// its pass (from, to), chosen on the CPU by the spanning tree of basins.wgsl's candidates;
// the receivers from the pass node `from` down to the pit are reversed, and `from` receives
// `to`. The chains lie in their own lakes' trees, so they do not meet.
//
// The chain is marked by an accumulation (accumulate.wgsl's rounds) of 1 at each `from`
// over the old receivers: the nodes with a non-zero sum are `from` and the nodes below it.
// Each such node other than the pit gives its old receiver a new one, itself (flip_chain);
// `from` gets `to` (flip_pass); then the flips are applied with their links' lengths.

@group(0) @binding(1) var<storage, read_write> receivers: array<u32>;
@group(0) @binding(2) var<storage, read_write> dists: array<f32>;
// The accumulation's first buffers: two words a node, and the first jumps.
@group(0) @binding(3) var<storage, read_write> sums: array<u32>;
@group(0) @binding(4) var<storage, read_write> jump: array<u32>;
// Per lake: (from, to), p.count of them.
@group(0) @binding(5) var<storage, read> passes: array<vec2<u32>>;
@group(0) @binding(6) var<storage, read_write> flip: array<u32>;

@compute @workgroup_size(256)
fn mark_init(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = node_index(gid, nwg);
    if (i >= p.n) {
        return;
    }
    sums[2u * i] = 0u;
    sums[2u * i + 1u] = 0u;
    let r = receivers[i];
    if (r == i) {
        jump[i] = NONE;
    } else {
        jump[i] = r;
    }
    flip[i] = NONE;
}

// One invocation per pass.
@compute @workgroup_size(256)
fn mark_seed(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let k = node_index(gid, nwg);
    if (k >= p.count) {
        return;
    }
    sums[2u * passes[k].x] = 1u;
}

@compute @workgroup_size(256)
fn flip_chain(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = node_index(gid, nwg);
    if (i >= p.n) {
        return;
    }
    if (sums[2u * i] == 0u && sums[2u * i + 1u] == 0u) {
        return;
    }
    let r = receivers[i];
    if (r != i) {
        flip[r] = i;
    }
}

@compute @workgroup_size(256)
fn flip_pass(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let k = node_index(gid, nwg);
    if (k >= p.count) {
        return;
    }
    let ft = passes[k];
    flip[ft.x] = ft.y;
}

@compute @workgroup_size(256)
fn flip_apply(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = node_index(gid, nwg);
    if (i >= p.n) {
        return;
    }
    let t = flip[i];
    if (t == NONE) {
        return;
    }
    receivers[i] = t;
    dists[i] = link_length(i, t);
}

// Borůvka's rounds (boruvka.wgsl): `passes` holds one entry per node, (from, to) at the
// roots that hook this round, else NONE.
@compute @workgroup_size(256)
fn mark_seed_roots(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = node_index(gid, nwg);
    if (i >= p.n) {
        return;
    }
    let ft = passes[i];
    if (ft.x != NONE) {
        sums[2u * ft.x] = 1u;
    }
}

@compute @workgroup_size(256)
fn flip_pass_roots(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = node_index(gid, nwg);
    if (i >= p.n) {
        return;
    }
    let ft = passes[i];
    if (ft.x != NONE) {
        flip[ft.x] = ft.y;
    }
}
