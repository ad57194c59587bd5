// Composes the maps of the tile exits (tiles.wgsl's link_b) down the reduced forest by
// pointer jumping: map_i <- map_i o map_jump(i), jump(i) <- jump(jump(i)), at most
// ceil(log2 n) rounds, after which every map is a constant (its chain reached a root);
// control.wgsl stops the rounds early once every chain has. For g(x) = min(a x + b, c) after
// f(x) = min(a' x + b', c'), with a >= 0: g(f(x)) = min(a a' x + a b' + b, min(a c' + b, c)).

@group(0) @binding(1) var<storage, read_write> src_maps: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read_write> src_jump: array<u32>;
@group(0) @binding(3) var<storage, read_write> dst_maps: array<vec4<f32>>;
@group(0) @binding(4) var<storage, read_write> dst_jump: array<u32>;
// [1]: the exits of this step (tiles.wgsl).
@group(0) @binding(5) var<storage, read> xcount: array<u32>;
// Set to 1 when a round leaves some jump (control.wgsl).
@group(0) @binding(6) var<storage, read_write> live: array<atomic<u32>>;

@compute @workgroup_size(256)
fn compose(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = node_index(gid, nwg);
    if (i >= xcount[1]) {
        return;
    }
    let g = src_maps[i];
    let j = src_jump[i];
    if (j == NONE) {
        dst_maps[i] = g;
        dst_jump[i] = NONE;
        return;
    }
    let f = src_maps[j];
    dst_maps[i] = vec4<f32>(g.x * f.x, g.x * f.y + g.y, min(g.x * f.z + g.y, g.z), 0.0);
    let next = src_jump[j];
    dst_jump[i] = next;
    if (next != NONE && atomicLoad(&live[0]) == 0u) {
        atomicStore(&live[0], 1u);
    }
}
