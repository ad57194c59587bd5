// Drainage and the n = 1 solve by tiles: the GPU form of Barnes 2017's tiled accumulation
// (a tile's flow resolved inside it, then only the links between tiles globally; orogen-core's
// tiles/ does it across ranks). A workgroup per 16 x 16 tile, one invocation a cell:
//
// - tile_a: in workgroup memory, every cell walks its path inside its tile (to its exit:
//   the last cell of the path in the tile, whose receiver is in another tile, or a root),
//   adding its weight to each cell on it: every cell's in-tile upstream sum; each exit is
//   appended to a compact list (its id in cid), with its in-tile sum.
// - link_a: per exit, the exit of its receiver's tile path (the reduced forest's jump).
// - exits.wgsl's rounds sum the reduced forest: every exit's drainage.
// - tile_b: the drainage of the exits of other tiles draining into a cell walks down its
//   tile path, added to tile_a's in-tile sums: every cell's drainage (exact, integers); then every
//   cell's map (h = min(a h_r + b, c), as solve_init.wgsl made it before) composed along its
//   walk down the tile, P_i: its height from its exit's receiver's.
// - link_b: per exit e, the map z_e = h_new(rec e) = P_(rec e)(z_(exit of rec e)).
// - solve.wgsl's compose rounds over the exits, then solve_b: h_new(i) = P_i(z_(exit of i)).
//
// Drainage is 64-bit fixed point summed with integer atomics (workgroup and global): the
// same sums in any order. The maps compose along each chain in an order fixed by the chain,
// so the heights are the same bytes run after run.

@group(0) @binding(1) var<storage, read> receivers: array<u32>;
@group(0) @binding(2) var<storage, read> weights: array<u32>;
// Each cell's exit (global index).
@group(0) @binding(3) var<storage, read_write> exit_of: array<u32>;
// Each exit's id in the compact list.
@group(0) @binding(4) var<storage, read_write> cid: array<u32>;
// The compact list: the exits' cells.
@group(0) @binding(5) var<storage, read_write> exits: array<u32>;
// [0] exits appended this step (control.wgsl's arm_exits moves it to [1] and zeroes it).
@group(0) @binding(6) var<storage, read_write> xcount: array<atomic<u32>>;
// Per exit id: its sum (two words), its jump in the reduced forest.
@group(0) @binding(7) var<storage, read_write> xsum: array<atomic<u32>>;
@group(0) @binding(8) var<storage, read_write> xjump: array<u32>;
// Per cell: the drainage (two words, fixed point), as accumulate.wgsl left it before.
@group(0) @binding(9) var<storage, read_write> sums: array<u32>;
@group(0) @binding(10) var<storage, read_write> heights: array<f32>;
@group(0) @binding(11) var<storage, read> dists: array<f32>;
// Per node: erodibility k, uplift rate u (m/yr).
@group(0) @binding(12) var<storage, read> coefs: array<vec2<f32>>;
// Per cell its map to its exit's receiver, P_i; per exit id its map z (solve.wgsl's rounds).
@group(0) @binding(13) var<storage, read_write> pmaps: array<vec4<f32>>;
@group(0) @binding(14) var<storage, read_write> xmaps: array<vec4<f32>>;

// The tile's side (cells); WG = TILE * TILE invocations.
const TILE: u32 = 16u;

var<workgroup> w_jump: array<u32, 256>;
var<workgroup> w_sum: array<atomic<u32>, 512>;
var<workgroup> w_map: array<vec4<f32>, 256>;
var<workgroup> w_count: atomic<u32>;
var<workgroup> w_base: u32;

struct Cell {
    // Global index (NONE outside the grid), local jump (NONE: its receiver is out of the
    // tile, or itself).
    i: u32,
    jump: u32,
}

// The cell of invocation l of tile wg, and its local jump.
fn cell(wg: vec3<u32>, l: u32) -> Cell {
    let x = wg.x * TILE + l % TILE;
    let y = wg.y * TILE + l / TILE;
    if (x >= p.width || y >= p.height) {
        return Cell(NONE, NONE);
    }
    let i = y * p.width + x;
    let r = receivers[i];
    let ry = r / p.width;
    let rx = r - ry * p.width;
    if (r == i || rx / TILE != wg.x || ry / TILE != wg.y) {
        return Cell(i, NONE);
    }
    return Cell(i, (ry - wg.y * TILE) * TILE + (rx - wg.x * TILE));
}

fn add64(k: u32, lo: u32, hi: u32) {
    let old = atomicAdd(&w_sum[2u * k], lo);
    let carry = select(0u, 1u, old + lo < old);
    atomicAdd(&w_sum[2u * k + 1u], hi + carry);
}

// Starts cell l's sum at (lo0, hi0), then adds (lo, hi) to every cell of its path down the
// tile (every cell walks where `all`, else only those with something to add) and returns
// its exit (local index, where it walked): a walk of the tile's links in workgroup memory (at most 256),
// integer atomics, so the sums do not depend on the order of the walks. A walk per cell
// rather than pointer jumping: no barrier per round, and a tile's paths are mostly short.
fn walk_sums(l: u32, jump: u32, on_grid: bool, all: bool, lo0: u32, hi0: u32, lo: u32, hi: u32) -> u32 {
    w_jump[l] = jump;
    atomicStore(&w_sum[2u * l], lo0);
    atomicStore(&w_sum[2u * l + 1u], hi0);
    workgroupBarrier();
    var cur = l;
    if (on_grid && (all || lo != 0u || hi != 0u)) {
        loop {
            if (lo != 0u || hi != 0u) {
                add64(cur, lo, hi);
            }
            let next = w_jump[cur];
            if (next == NONE) {
                break;
            }
            cur = next;
        }
    }
    workgroupBarrier();
    return cur;
}

@compute @workgroup_size(256)
fn tile_a(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) l: u32) {
    let c = cell(wg, l);
    if (l == 0u) {
        atomicStore(&w_count, 0u);
    }
    var lo = 0u;
    var hi = 0u;
    if (c.i != NONE) {
        lo = weights[2u * c.i];
        hi = weights[2u * c.i + 1u];
    }
    let e = walk_sums(l, c.jump, c.i != NONE, true, 0u, 0u, lo, hi);
    var slot = 0u;
    let is_exit = c.i != NONE && c.jump == NONE;
    if (is_exit) {
        slot = atomicAdd(&w_count, 1u);
    }
    workgroupBarrier();
    if (l == 0u) {
        w_base = atomicAdd(&xcount[0], atomicLoad(&w_count));
    }
    workgroupBarrier();
    if (c.i == NONE) {
        return;
    }
    exit_of[c.i] = (wg.y * TILE + e / TILE) * p.width + wg.x * TILE + e % TILE;
    // The in-tile sum, for tile_b (which writes the drainage over it).
    sums[2u * c.i] = atomicLoad(&w_sum[2u * l]);
    sums[2u * c.i + 1u] = atomicLoad(&w_sum[2u * l + 1u]);
    if (is_exit) {
        let id = w_base + slot;
        cid[c.i] = id;
        exits[id] = c.i;
        atomicStore(&xsum[2u * id], atomicLoad(&w_sum[2u * l]));
        atomicStore(&xsum[2u * id + 1u], atomicLoad(&w_sum[2u * l + 1u]));
    }
}

// The reduced forest's jump of exit `e`: the exit of its receiver's tile path (NONE for a
// root).
fn exit_jump(e: u32) -> u32 {
    let r = receivers[e];
    if (r == e) {
        return NONE;
    }
    return cid[exit_of[r]];
}

@compute @workgroup_size(256)
fn link_a(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let id = node_index(gid, nwg);
    if (id >= atomicLoad(&xcount[1])) {
        return;
    }
    xjump[id] = exit_jump(exits[id]);
}

// The node map of solve_init (before: solve_init.wgsl): h = min(a h_r + b, c), a constant
// (a = 0) for a root.
fn node_map(i: u32, lo: u32, hi: u32) -> vec4<f32> {
    let h = heights[i];
    let r = receivers[i];
    let kc = coefs[i];
    if (r == i) {
        var v = h;
        if (!is_outlet(i, h)) {
            v = h + kc.y * p.dt;
        }
        return vec4<f32>(0.0, v, v, 0.0);
    }
    let up = h + kc.y * p.dt;
    let area = (f32(hi) * 4294967296.0 + f32(lo)) * p.inv_scale;
    let d = dists[i];
    var f = 0.0;
    if (area > 0.0 && d > 0.0) {
        var am = area;
        if (p.m == 0.5) {
            am = sqrt(area);
        } else if (p.m != 1.0) {
            am = pow(area, p.m);
        }
        f = kc.x * am * p.dt / d;
    }
    if (f > 0.0) {
        // Written so that an overflowing F gives a = 1, b = 0 (the node meets its receiver).
        return vec4<f32>(1.0 / (1.0 + 1.0 / f), up / (1.0 + f), up, 0.0);
    }
    return vec4<f32>(0.0, up, up, 0.0);
}

// g after f (solve.wgsl's compose): g(f(x)) = min(a a' x + a b' + b, min(a c' + b, c)).
fn after(g: vec4<f32>, f: vec4<f32>) -> vec4<f32> {
    return vec4<f32>(g.x * f.x, g.x * f.y + g.y, min(g.x * f.z + g.y, g.z), 0.0);
}

// Drainage of every cell (with the exits' inflow), then, with `solve`, the maps P_i.
fn tile_b_body(wg: vec3<u32>, l: u32, solve: bool) {
    let c = cell(wg, l);
    // The cell's in-tile sum (tile_a), and the inflow from other tiles it walks down.
    var lo0 = 0u;
    var hi0 = 0u;
    var lo = 0u;
    var hi = 0u;
    if (c.i != NONE) {
        lo0 = sums[2u * c.i];
        hi0 = sums[2u * c.i + 1u];
        // Exits of other tiles draining into this cell: their drainage, final.
        let x = c.i % p.width;
        let y = c.i / p.width;
        let lx = x % TILE;
        let ly = y % TILE;
        if (lx == 0u || ly == 0u || lx == TILE - 1u || ly == TILE - 1u) {
            for (var k = 0u; k < 8u; k = k + 1u) {
                let j = neighbour(c.i, k);
                if (j == NONE || receivers[j] != c.i) {
                    continue;
                }
                let jx = j % p.width;
                let jy = j / p.width;
                if (jx / TILE == wg.x && jy / TILE == wg.y) {
                    continue;
                }
                let id = cid[j];
                let alo = atomicLoad(&xsum[2u * id]);
                let ahi = atomicLoad(&xsum[2u * id + 1u]);
                let s = lo + alo;
                hi = hi + ahi + select(0u, 1u, s < lo);
                lo = s;
            }
        }
    }
    walk_sums(l, c.jump, c.i != NONE, false, lo0, hi0, lo, hi);
    let dlo = atomicLoad(&w_sum[2u * l]);
    let dhi = atomicLoad(&w_sum[2u * l + 1u]);
    if (c.i != NONE) {
        sums[2u * c.i] = dlo;
        sums[2u * c.i + 1u] = dhi;
    }
    if (!solve) {
        return;
    }
    // The maps, composed down the tile path (FastFlow eq. 4, plus the clamp), a walk per
    // cell as the sums.
    var m = vec4<f32>(0.0, 0.0, 0.0, 0.0);
    if (c.i != NONE) {
        m = node_map(c.i, dlo, dhi);
    }
    w_map[l] = m;
    workgroupBarrier();
    if (c.i != NONE) {
        var g = m;
        var cur = c.jump;
        while (cur != NONE) {
            g = after(g, w_map[cur]);
            cur = w_jump[cur];
        }
        pmaps[c.i] = g;
    }
}

@compute @workgroup_size(256)
fn tile_b(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) l: u32) {
    tile_b_body(wg, l, true);
}

// Drainage alone (a route, or n != 1).
@compute @workgroup_size(256)
fn tile_b_drain(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) l: u32) {
    tile_b_body(wg, l, false);
}

// Per exit e: z_e = h_new(rec e), as the map P_(rec e) of the exit of rec e's z (a root: its
// own constant map).
@compute @workgroup_size(256)
fn link_b(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let id = node_index(gid, nwg);
    if (id >= atomicLoad(&xcount[1])) {
        return;
    }
    let e = exits[id];
    let r = receivers[e];
    if (r == e) {
        xmaps[id] = pmaps[e];
        xjump[id] = NONE;
    } else {
        xmaps[id] = pmaps[r];
        xjump[id] = cid[exit_of[r]];
    }
}

// h_new(i) = P_i(z of i's exit); a path ending at a root in the tile is a constant.
@compute @workgroup_size(256)
fn solve_b(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = node_index(gid, nwg);
    if (i >= p.n) {
        return;
    }
    let g = pmaps[i];
    let x = exit_of[i];
    if (receivers[x] == x) {
        heights[i] = min(g.y, g.z);
        return;
    }
    let f = xmaps[cid[x]];
    let z = min(f.y, f.z);
    heights[i] = min(g.x * z + g.y, g.z);
}
