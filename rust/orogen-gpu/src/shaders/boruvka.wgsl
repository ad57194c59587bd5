// The lakes' minimum spanning tree on the GPU, by Borůvka's algorithm over the basin graph
// whose nodes are basins.wgsl's keys (0 the outlet trees, pit + 1 a lake) and whose edges
// are the pairs of neighbours that both keep in their masks (basins.wgsl's `mask`), each
// with its pass: the higher height, in f32::total_cmp order.
//
// Edges are ordered strictly as orogen-core's Kruskal orders them (basin_graph.rs, and
// lakes.rs for the CPU tree): (pass height, lake-side key a, other key b, a's cell na, b's
// cell nb). A cell keeps at most one neighbour per other key, so (a, b, na) already names
// the edge. The order is strict, so the minimum spanning tree is unique: the CPU's.
//
// Each round works on the receivers as carved so far: a component is a tree of the
// receiver forest, labelled by its root (`comp`; OUTLET for the outlet trees, which never
// choose). Every other component (its root a pit) takes its lightest edge to another
// component, found by integer atomicMin over four keys in turn (pick0..pick3; no float
// atomics, so the result does not depend on the order of the invocations). By the cut
// property that edge is in the spanning tree. Two components that chose the same edge
// (with a strict order, the only cycles) are joined once: the one with the lower root
// keeps its pit. The others hook: `carve` walks the receivers from the pass cell down to
// the pit, reversing each link, and points the pass cell across the edge (one invocation
// per hooked component, each in its own tree, so no two write the same node). The root of
// the joined component is still a pit (or an outlet), and `relabel` gives each node its
// new root by following the hooks (the hooks form a forest: mutual choices are joined
// once). The components with a pit at least halve each round.
// Carving the tree lake by lake from the outlets (the CPU) or component by component this
// way ends with the same receivers: a second carve over a chain reverses the first one's
// links back where the tree's orientation changed.

@group(0) @binding(1) var<storage, read> heights: array<f32>;
@group(0) @binding(2) var<storage, read_write> receivers: array<u32>;
// basins.wgsl's keys and masks, of the uncarved receivers.
@group(0) @binding(3) var<storage, read> keys: array<u32>;
@group(0) @binding(4) var<storage, read> masks: array<u32>;
// Each node's component: its root in the carved receivers, OUTLET in an outlet tree.
@group(0) @binding(5) var<storage, read_write> comp: array<atomic<u32>>;
// Per root, four words: the lightest edge's (ordered height, a, b, na).
@group(0) @binding(6) var<storage, read_write> best: array<atomic<u32>>;
// Per root that hooks this round: (from, to), else (NONE, NONE).
@group(0) @binding(7) var<storage, read_write> hooks: array<vec2<u32>>;
// basins.wgsl's counter: [4] set when some component hooked this round.
@group(0) @binding(8) var<storage, read_write> flags: array<atomic<u32>>;
@group(0) @binding(9) var<storage, read_write> dists: array<f32>;

// The label of every outlet tree (they are one node of the basin graph).
const OUTLET: u32 = 0xfffffffeu;

// The components before the first round: the lakes' roots (keys are root + 1).
@compute @workgroup_size(256)
fn init(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = node_index(gid, nwg);
    if (i >= p.n) {
        return;
    }
    let k = keys[i];
    if (k == 0u) {
        atomicStore(&comp[i], OUTLET);
    } else {
        atomicStore(&comp[i], k - 1u);
    }
}

@compute @workgroup_size(256)
fn reset(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = node_index(gid, nwg);
    if (i >= p.n) {
        return;
    }
    for (var k = 0u; k < 4u; k = k + 1u) {
        atomicStore(&best[4u * i + k], NONE);
    }
    hooks[i] = vec2<u32>(NONE, NONE);
}

// Whether label r is a component that chooses (a lake's: not OUTLET).
fn chooses(r: u32) -> bool {
    return r < p.n;
}

// The edge's four keys, for the kept pair (i, j): (ordered height, a, b, na).
fn edge_keys(i: u32, j: u32) -> vec4<u32> {
    let ki = keys[i];
    let kj = keys[j];
    let h = max(ordered(heights[i]), ordered(heights[j]));
    if (ki != 0u && (kj == 0u || ki < kj)) {
        return vec4<u32>(h, ki, kj, i);
    }
    return vec4<u32>(h, kj, ki, j);
}

// Phase `phase` of the lightest edge of each component: atomicMin of key `phase` among the
// edges whose earlier keys equal the component's minima so far.
fn offer(c: u32, e: vec4<u32>, phase: u32) {
    if (!chooses(c)) {
        return;
    }
    let at = 4u * c;
    for (var k = 0u; k < phase; k = k + 1u) {
        if (atomicLoad(&best[at + k]) != e[k]) {
            return;
        }
    }
    atomicMin(&best[at + phase], e[phase]);
}

fn pick(i: u32, phase: u32) {
    let mi = masks[i];
    if ((mi & 0xf0u) == 0u) {
        return;
    }
    let ci = atomicLoad(&comp[i]);
    for (var k = 4u; k < 8u; k = k + 1u) {
        if (((mi >> k) & 1u) == 0u) {
            continue;
        }
        let j = neighbour(i, k);
        if (((masks[j] >> (7u - k)) & 1u) == 0u) {
            continue;
        }
        let cj = atomicLoad(&comp[j]);
        if (ci == cj) {
            continue;
        }
        let e = edge_keys(i, j);
        offer(ci, e, phase);
        offer(cj, e, phase);
    }
}

@compute @workgroup_size(256)
fn pick0(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = node_index(gid, nwg);
    if (i < p.n) {
        pick(i, 0u);
    }
}

@compute @workgroup_size(256)
fn pick1(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = node_index(gid, nwg);
    if (i < p.n) {
        pick(i, 1u);
    }
}

@compute @workgroup_size(256)
fn pick2(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = node_index(gid, nwg);
    if (i < p.n) {
        pick(i, 2u);
    }
}

@compute @workgroup_size(256)
fn pick3(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = node_index(gid, nwg);
    if (i < p.n) {
        pick(i, 3u);
    }
}

fn best_of(c: u32) -> vec4<u32> {
    let at = 4u * c;
    return vec4<u32>(atomicLoad(&best[at]), atomicLoad(&best[at + 1u]),
        atomicLoad(&best[at + 2u]), atomicLoad(&best[at + 3u]));
}

// Per root that chose an edge: the edge's other cell (na's kept neighbour in key b), then
// the hook, unless the component across chose the same edge and has the higher root.
@compute @workgroup_size(256)
fn hook(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let c = node_index(gid, nwg);
    if (c >= p.n || atomicLoad(&comp[c]) != c) {
        return;
    }
    let e = best_of(c);
    if (e.x == NONE) {
        return;
    }
    let na = e.w;
    let mi = masks[na];
    var nb = NONE;
    for (var k = 0u; k < 8u; k = k + 1u) {
        if (((mi >> k) & 1u) == 0u) {
            continue;
        }
        let j = neighbour(na, k);
        if (keys[j] == e.z && ((masks[j] >> (7u - k)) & 1u) == 1u) {
            nb = j;
            break;
        }
    }
    if (nb == NONE) {
        return;
    }
    var src = na;
    var dst = nb;
    if (atomicLoad(&comp[na]) != c) {
        src = nb;
        dst = na;
    }
    // The same edge chosen from both sides: the lower root keeps its pit, the higher hooks.
    let d = atomicLoad(&comp[dst]);
    if (c < d && chooses(d) && all(best_of(d) == e)) {
        return;
    }
    hooks[c] = vec2<u32>(src, dst);
    if (atomicLoad(&flags[4]) == 0u) {
        atomicStore(&flags[4], 1u);
    }
}

// Per hooked root c with pass (src, dst): the chain from src down to c reversed, src
// pointing to dst, each changed link with its length (as carve.wgsl's flips).
@compute @workgroup_size(256)
fn carve(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let c = node_index(gid, nwg);
    if (c >= p.n) {
        return;
    }
    let h = hooks[c];
    if (h.x == NONE) {
        return;
    }
    var prev = h.y;
    var x = h.x;
    loop {
        let next = receivers[x];
        receivers[x] = prev;
        dists[x] = link_length(x, prev);
        if (next == x) {
            break;
        }
        prev = x;
        x = next;
    }
}

// Each node's new label: its component's root followed along the hooks to a root that did
// not hook. Labels are read while others are rewritten, but only ever move along the same
// chain of hooks towards its end, so any value read leads to the same root.
@compute @workgroup_size(256)
fn relabel(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = node_index(gid, nwg);
    if (i >= p.n) {
        return;
    }
    let first = atomicLoad(&comp[i]);
    var x = first;
    loop {
        if (x >= p.n) {
            break;
        }
        let h = hooks[x];
        if (h.x == NONE) {
            break;
        }
        x = atomicLoad(&comp[h.y]);
    }
    if (x != first) {
        atomicStore(&comp[i], x);
    }
}
