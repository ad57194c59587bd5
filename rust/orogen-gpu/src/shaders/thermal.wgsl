// Thermal erosion on the GPU (issue #42): orogen-core's `thermal_step`
// (eroders/thermal.rs; Musgrave 1989 / Olsen 2004, the thesis digest's "Thermal step"),
// the same three Jacobi passes from the old heights, one invocation a cell, no atomics but
// an integer max of the largest excess (the same whatever the order):
//   senders:   k_i = rate·d_max / (2·Σ e_j), e_j = max(h_i − h_j − tan_i·l_ij, 0);
//   receivers: s_j = min(1, rate·e_max/2 / Σ k_i·e_i), so a cell gains at most rate·e_max/2;
//   settle:    h_c + Σ k_j·e_in·s_c − Σ k_c·e_out·s_j, summed as float-float (the CPU
//              sums in f64), or h_c unchanged where no excess is over the tolerance.
// Neighbours in the CPU's fixed order (rows above to below, left to right), at l or l·√2;
// off-grid neighbours are left out, so no material leaves the grid.

struct Params {
    width: u32,
    height: u32,
    n: u32,
    groups_x: u32,
    rate: f32,
    tolerance: f32,
    // Link lengths: orthogonal, diagonal.
    dist0: f32,
    dist1: f32,
    // A height-dependent talus: tangents below and from `talus_height`.
    talus_height: f32,
    tan_below: f32,
    tan_above: f32,
    pad: u32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> h: array<f32>;
@group(0) @binding(2) var<storage, read_write> tan_talus: array<f32>;
@group(0) @binding(3) var<storage, read_write> k: array<f32>;
@group(0) @binding(4) var<storage, read_write> s: array<f32>;
@group(0) @binding(5) var<storage, read_write> next: array<f32>;
// [0] the bits of the largest excess (non-negative floats order as their bits).
@group(0) @binding(6) var<storage, read_write> stats: array<atomic<u32>>;

const WG: u32 = 256u;
const NONE: u32 = 0xffffffffu;

fn cell_of(gid: vec3<u32>) -> u32 {
    return gid.x + gid.y * p.groups_x * WG;
}

// Neighbour q (0..8, the CPU's order) of (x, y), or NONE off the grid.
fn neighbour(x: u32, y: u32, q: u32) -> u32 {
    let slot = select(q, q + 1u, q >= 4u);
    let nx = i32(x) + i32(slot % 3u) - 1;
    let ny = i32(y) + i32(slot / 3u) - 1;
    if nx < 0 || ny < 0 || nx >= i32(p.width) || ny >= i32(p.height) {
        return NONE;
    }
    return u32(ny) * p.width + u32(nx);
}

// Diagonal neighbours: 0, 2, 5 and 7.
fn is_diag(q: u32) -> bool {
    return q == 0u || q == 2u || q == 5u || q == 7u;
}

fn link(q: u32) -> f32 {
    return select(p.dist0, p.dist1, is_diag(q));
}

// The CPU's `excess(hi, hj, drop).max(0.0)`, never −0.
fn over(hi: f32, hj: f32, drop: f32) -> f32 {
    let e = hi - hj - drop;
    return select(0.0, e, e > 0.0);
}

@compute @workgroup_size(256)
fn talus(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = cell_of(gid);
    if i >= p.n {
        return;
    }
    tan_talus[i] = select(p.tan_above, p.tan_below, h[i] < p.talus_height);
}

@compute @workgroup_size(256)
fn senders(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = cell_of(gid);
    if i >= p.n {
        return;
    }
    let x = i % p.width;
    let y = i / p.width;
    let hi = h[i];
    let t = tan_talus[i];
    let drop0 = t * p.dist0;
    let drop1 = t * p.dist1;
    var dmax = 0.0;
    var sum = 0.0;
    for (var q = 0u; q < 8u; q++) {
        let j = neighbour(x, y, q);
        if j == NONE {
            continue;
        }
        let e = over(hi, h[j], select(drop0, drop1, is_diag(q)));
        dmax = max(dmax, e);
        sum += e;
    }
    k[i] = select(0.0, p.rate * dmax / (2.0 * sum), sum > 0.0);
    if dmax > 0.0 {
        atomicMax(&stats[0], bitcast<u32>(dmax));
    }
}

@compute @workgroup_size(256)
fn receivers(@builtin(global_invocation_id) gid: vec3<u32>) {
    let j = cell_of(gid);
    if j >= p.n {
        return;
    }
    let x = j % p.width;
    let y = j / p.width;
    let hj = h[j];
    var want = 0.0;
    var emax = 0.0;
    for (var q = 0u; q < 8u; q++) {
        let i = neighbour(x, y, q);
        if i == NONE {
            continue;
        }
        let e = over(h[i], hj, tan_talus[i] * link(q));
        want += k[i] * e;
        emax = max(emax, e);
    }
    let cap = 0.5 * p.rate * emax;
    s[j] = select(1.0, cap / want, want > cap);
}

// a + b exactly as a pair (Knuth's two-sum).
fn two_sum(a: f32, b: f32) -> vec2<f32> {
    let t = a + b;
    let bb = t - a;
    return vec2(t, (a - (t - bb)) + (b - bb));
}

// The float-float `x + y`, renormalised.
fn ff_add(x: vec2<f32>, y: vec2<f32>) -> vec2<f32> {
    let t = two_sum(x.x, y.x);
    let lo = t.y + (x.y + y.y);
    let hi = t.x + lo;
    return vec2(hi, lo - (hi - t.x));
}

@compute @workgroup_size(256)
fn settle(@builtin(global_invocation_id) gid: vec3<u32>) {
    let c = cell_of(gid);
    if c >= p.n {
        return;
    }
    let hc = h[c];
    if bitcast<f32>(atomicLoad(&stats[0])) <= p.tolerance {
        next[c] = hc;
        return;
    }
    let x = c % p.width;
    let y = c / p.width;
    let kc = k[c];
    let sc = s[c];
    let tc = tan_talus[c];
    var gain = vec2(0.0, 0.0);
    var loss = vec2(0.0, 0.0);
    for (var q = 0u; q < 8u; q++) {
        let j = neighbour(x, y, q);
        if j == NONE {
            continue;
        }
        let l = link(q);
        let hj = h[j];
        let e_out = over(hc, hj, tc * l);
        loss = ff_add(loss, vec2(kc * e_out * s[j], 0.0));
        let e_in = over(hj, hc, tan_talus[j] * l);
        gain = ff_add(gain, vec2(k[j] * e_in * sc, 0.0));
    }
    let r = ff_add(ff_add(gain, -loss), vec2(hc, 0.0));
    next[c] = r.x + r.y;
}
