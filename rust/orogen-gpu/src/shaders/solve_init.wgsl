// The implicit stream-power step for n = 1, as node maps to compose by pointer jumping.
//
// The CPU (orogen-core's uplift_and_erode) walks the stack: h_up = h + u dt, then, with
// F = k A^m dt / d and h_r the receiver's new height, h = (h_up + F h_r) / (1 + F) where
// h_up > h_r, else h = h_up (no erosion where a node is not above its receiver). That is
// h = min(a h_r + b, c) with a = F / (1 + F), b = h_up / (1 + F), c = h_up, and maps of this
// form (a >= 0) compose into the same form (FastFlow eq. 4, z = alpha z_r + beta, plus the
// clamp). Roots are constants: an outlet keeps its height, a pit rises with the uplift.
// Each map is (a, b, c, 0).

@group(0) @binding(1) var<storage, read> heights: array<f32>;
@group(0) @binding(2) var<storage, read> receivers: array<u32>;
@group(0) @binding(3) var<storage, read> dists: array<f32>;
@group(0) @binding(4) var<storage, read> sums: array<u32>;
// Per node: erodibility k, uplift rate u (m/yr).
@group(0) @binding(5) var<storage, read> coefs: array<vec2<f32>>;
@group(0) @binding(6) var<storage, read_write> maps: array<vec4<f32>>;
@group(0) @binding(7) var<storage, read_write> jump: array<u32>;

@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
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
        maps[i] = vec4<f32>(0.0, v, v, 0.0);
        jump[i] = NONE;
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
        f = kc.x * am * p.dt / d;
    }
    if (f > 0.0) {
        // Written so that an overflowing F gives a = 1, b = 0 (the node meets its receiver).
        maps[i] = vec4<f32>(1.0 / (1.0 + 1.0 / f), up / (1.0 + f), up, 0.0);
    } else {
        maps[i] = vec4<f32>(0.0, up, up, 0.0);
    }
    jump[i] = r;
}
