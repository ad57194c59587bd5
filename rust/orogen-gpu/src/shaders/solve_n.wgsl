// The implicit stream-power step for n != 1: per node, the CPU's (orogen-core's walk_run and
// solve_drop) h = h_r + d with d - d0 + F d^n = 0, d0 = h_up - h_r > 0 (else h = h_up), by
// Newton from the bracket's top, kept in the bracket [hi min(1/2, (1/2)^(1/n)), hi],
// hi = min(d0, (d0/F)^(1/n)), by bisection. The maps h = phi(h_r) do not compose into a
// closed form, so the nodes are solved level by level: levels.wgsl orders them by their
// depth (links to their root), and one dispatch a level solves every node of it from its
// receiver's final height, in place. Each height depends only on its receiver's final
// height: the same bytes whatever the order of the invocations.

struct Node {
    up: f32,
    f: f32,
    r: u32,
    root: u32,
}

@group(0) @binding(1) var<storage, read_write> heights: array<f32>;
@group(0) @binding(2) var<storage, read> receivers: array<u32>;
@group(0) @binding(3) var<storage, read> dists: array<f32>;
@group(0) @binding(4) var<storage, read> sums: array<u32>;
// Per node: erodibility k, uplift rate u (m/yr).
@group(0) @binding(5) var<storage, read> coefs: array<vec2<f32>>;
@group(0) @binding(6) var<storage, read_write> nodes: array<Node>;
// levels.wgsl's order: the nodes of level l (l >= 1) at offsets[l] .. offsets[l + 1].
@group(0) @binding(7) var<storage, read> order: array<u32>;
@group(0) @binding(8) var<storage, read> offsets: array<u32>;
// [0] the deepest level, [1] the level being solved (raised by `next`).
@group(0) @binding(9) var<storage, read_write> info: array<atomic<u32>>;

// x^(n - 1) for x > 0 (n = 2 exactly).
fn pow_n1(x: f32) -> f32 {
    if (p.slope_exp == 2.0) {
        return x;
    }
    return pow(x, p.slope_exp - 1.0);
}

fn drop_of(d0: f32, f: f32) -> f32 {
    let n = p.slope_exp;
    var top = pow(d0 / f, 1.0 / n);
    if (n == 2.0) {
        top = sqrt(d0 / f);
    }
    var hi = min(d0, top);
    var lo = hi * min(0.5, pow(0.5, 1.0 / n));
    var d = hi;
    for (var it = 0; it < 64; it = it + 1) {
        let dn1 = pow_n1(d);
        let g = d - d0 + f * dn1 * d;
        if (g == 0.0) {
            break;
        }
        if (g > 0.0) {
            hi = d;
        } else {
            lo = d;
        }
        let dg = 1.0 + f * n * dn1;
        var next = d - g / dg;
        if (!(next >= lo && next <= hi)) {
            next = 0.5 * (lo + hi);
        }
        // Two f32 ulps: f32 Newton can step back and forth over the root by one.
        if (abs(next - d) <= 2.4e-7 * next || hi - lo <= 2.4e-7 * hi) {
            d = next;
            break;
        }
        d = next;
    }
    return d;
}

@compute @workgroup_size(256)
fn init(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = node_index(gid, nwg);
    if (i >= p.n) {
        return;
    }
    let h = heights[i];
    let r = receivers[i];
    let kc = coefs[i];
    if (r == i) {
        var v = h;
        if (!is_outlet(i, h)) {
            v = h + kc.y * p.dt;
        }
        nodes[i] = Node(v, 0.0, i, 1u);
        heights[i] = v;
        return;
    }
    let up = h + kc.y * p.dt;
    let area = (f32(sums[2u * i + 1u]) * 4294967296.0 + f32(sums[2u * i])) * p.inv_scale;
    let d = dists[i];
    var f = 0.0;
    if (area > 0.0 && d > 0.0) {
        var am = area;
        if (p.m == 0.5) {
            am = sqrt(area);
        } else if (p.m != 1.0) {
            am = pow(area, p.m);
        }
        var dn = pow(d, p.slope_exp);
        if (p.slope_exp == 2.0) {
            dn = d * d;
        }
        f = kc.x * am * p.dt / dn;
    }
    nodes[i] = Node(up, f, r, 0u);
}

// Before each level: the next one.
@compute @workgroup_size(1)
fn next() {
    atomicAdd(&info[1], 1u);
}

// The nodes of the current level, each from its receiver's final height.
@compute @workgroup_size(256)
fn level(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let l = atomicLoad(&info[1]);
    let start = offsets[l];
    let k = node_index(gid, nwg);
    if (k >= offsets[l + 1u] - start) {
        return;
    }
    let i = order[start + k];
    let nd = nodes[i];
    let hr = heights[nd.r];
    let d0 = nd.up - hr;
    var h = nd.up;
    if (d0 > 0.0 && nd.f > 0.0) {
        h = hr + drop_of(d0, nd.f);
    }
    heights[i] = h;
}
