// The pipe model of `Hydraulic` on the GPU (issue #42): orogen-core's `Hydraulic::step`
// (eroders/hydraulic.rs; Mei, Decaudin & Hu 2007 as the thesis digest's "Hydraulic step"
// gives it), one invocation a cell, explicit stencils, no atomics:
//   water_in:  d += the sources' depth this step (uniform rain `rd` is added on reading);
//   flux:      f_i ← max(0, f_i + c·Δh_i)·mask (÷ Chézy friction), scaled by
//              K = min(1, d1·area/(Σf·Δt)); the slope factor max(sin α, min_slope);
//   depth:     d2 from the fluxes in and out, velocity, capacity, then dissolve or
//              deposit at the cell itself; evaporation; the sediment per unit outflow q;
//   sediment:  donor-cell transport along the same fluxes into `s_next`.
// Every pass reads its neighbours' values from arrays no invocation of it writes, and
// changes only its own cell, so results do not depend on the order of invocations. The
// expressions are the CPU's, in its order.

struct Params {
    width: u32,
    height: u32,
    n: u32,
    groups_x: u32,
    // Uniform rain, metres a step.
    rd: f32,
    // Δt·A·g / l.
    c: f32,
    area: f32,
    dt: f32,
    l: f32,
    // 1 with open borders, else 0.
    edge: f32,
    min_slope: f32,
    // Friction Δt·A·g / (C²·l²); 0 none.
    kf: f32,
    dt_area: f32,
    keep: f32,
    cut: f32,
    min_depth: f32,
    kc: f32,
    // 1 under the stream-power capacity law, else 0.
    cd: f32,
    ks: f32,
    kd: f32,
    diss: f32,
    friction: u32,
    open: u32,
    pad: u32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read_write> bed: array<f32>;
@group(0) @binding(2) var<storage, read_write> water: array<f32>;
@group(0) @binding(3) var<storage, read_write> sed: array<f32>;
@group(0) @binding(4) var<storage, read_write> flux: array<vec4<f32>>;
// Per cell: velocity (u, v), then the water m³ and sediment (m of a cell) it has sent
// out through open borders, summed over the steps.
@group(0) @binding(5) var<storage, read_write> cellv: array<vec4<f32>>;
@group(0) @binding(6) var<storage, read> add: array<f32>;
// The slope factor (flux → depth), then the sediment per unit outflow (depth → sediment).
@group(0) @binding(7) var<storage, read_write> scratch: array<f32>;
@group(0) @binding(8) var<storage, read_write> s_next: array<f32>;

const WG: u32 = 256u;

fn cell_of(gid: vec3<u32>) -> u32 {
    return gid.x + gid.y * p.groups_x * WG;
}

// A cell's neighbours (itself across a border) and masks (1 where the neighbour exists).
struct Around {
    il: u32,
    ir: u32,
    iu: u32,
    id: u32,
    el: f32,
    er: f32,
    eu: f32,
    ed: f32,
}

fn around(i: u32) -> Around {
    let x = i % p.width;
    let y = i / p.width;
    var a: Around;
    a.el = select(0.0, 1.0, x > 0u);
    a.er = select(0.0, 1.0, x + 1u < p.width);
    a.eu = select(0.0, 1.0, y > 0u);
    a.ed = select(0.0, 1.0, y + 1u < p.height);
    a.il = select(i, i - 1u, x > 0u);
    a.ir = select(i, i + 1u, x + 1u < p.width);
    a.iu = select(i, i - p.width, y > 0u);
    a.id = select(i, i + p.width, y + 1u < p.height);
    return a;
}

@compute @workgroup_size(256)
fn water_in(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = cell_of(gid);
    if i >= p.n {
        return;
    }
    water[i] = water[i] + add[i];
}

@compute @workgroup_size(256)
fn fluxes(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = cell_of(gid);
    if i >= p.n {
        return;
    }
    let a = around(i);
    let bi = bed[i];
    let di = water[i] + p.rd;
    let hi = bi + di;
    // An outside neighbour (e = 0) has its water surface at our bed.
    let hl = bed[a.il] + (water[a.il] + p.rd) * a.el;
    let hr = bed[a.ir] + (water[a.ir] + p.rd) * a.er;
    let hu = bed[a.iu] + (water[a.iu] + p.rd) * a.eu;
    let hd = bed[a.id] + (water[a.id] + p.rd) * a.ed;
    let f = flux[i];
    let ml = max(a.el, p.edge);
    let mr = max(a.er, p.edge);
    let mu = max(a.eu, p.edge);
    let md = max(a.ed, p.edge);
    var fl = max(f.x + p.c * (hi - hl), 0.0) * ml;
    var fr = max(f.y + p.c * (hi - hr), 0.0) * mr;
    var fu = max(f.z + p.c * (hi - hu), 0.0) * mu;
    var fd = max(f.w + p.c * (hi - hd), 0.0) * md;
    if p.friction != 0u {
        let kd = p.kf / (di * di * di + 1e-20);
        fl = fl / (1.0 + kd * f.x);
        fr = fr / (1.0 + kd * f.y);
        fu = fu / (1.0 + kd * f.z);
        fd = fd / (1.0 + kd * f.w);
    }
    let sum = fl + fr + fu + fd;
    var k = 0.0;
    if sum > 0.0 {
        k = min((di * p.area) / (sum * p.dt), 1.0);
    }
    flux[i] = vec4<f32>(fl * k, fr * k, fu * k, fd * k);
    let span_x = (a.el + a.er) * p.l;
    var gx = 0.0;
    if span_x > 0.0 {
        gx = (bed[a.ir] - bed[a.il]) / span_x;
    }
    let span_y = (a.eu + a.ed) * p.l;
    var inv_sy = 0.0;
    if span_y > 0.0 {
        inv_sy = 1.0 / span_y;
    }
    let gy = (bed[a.id] - bed[a.iu]) * inv_sy;
    let t2 = gx * gx + gy * gy;
    scratch[i] = max(sqrt(t2 / (1.0 + t2)), p.min_slope);
}

@compute @workgroup_size(256)
fn depth(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = cell_of(gid);
    if i >= p.n {
        return;
    }
    let a = around(i);
    let fc = flux[i];
    let from_l = (flux[a.il].y) * a.el;
    let from_r = (flux[a.ir].x) * a.er;
    let from_u = (flux[a.iu].w) * a.eu;
    let from_d = (flux[a.id].z) * a.ed;
    let out = fc.x + fc.y + fc.z + fc.w;
    let inflow = from_l + from_r + from_u + from_d;
    let d1 = water[i] + p.rd;
    let d2 = max(d1 + (inflow - out) * p.dt_area, 0.0);
    // Evaporation on the new depth.
    let de = d2 * p.keep;
    water[i] = select(de, 0.0, de < p.cut);
    // Water through open border pipes (zero on closed borders).
    let border = fc.x * (1.0 - a.el) + fc.y * (1.0 - a.er) + fc.z * (1.0 - a.eu)
        + fc.w * (1.0 - a.ed);
    let dbar = 0.5 * (d1 + d2);
    var inv = 0.0;
    if dbar > p.min_depth {
        inv = 1.0 / (p.l * dbar);
    }
    let u = 0.5 * (from_l - fc.x + fc.y - from_r) * inv;
    let v = 0.5 * (from_u - fc.z + fc.w - from_d) * inv;
    let speed = sqrt(u * u + v * v);
    let slope = scratch[i];
    var cap = p.kc * slope * speed * (p.cd * dbar + (1.0 - p.cd));
    let s = sed[i];
    if p.open != 0u && a.el * a.er * a.eu * a.ed == 0.0 {
        // An open border cell's bed is held (the CPU's reason): capacity = load.
        cap = s;
    }
    // Dissolve or deposit (one material: its dissolubility `diss`).
    let b = bed[i];
    var s1 = s;
    if cap > s {
        let ask = p.ks * (cap - s);
        let taken = ask * p.diss;
        let bn = b - taken;
        // What the surface really lost, so material is conserved to the bit.
        s1 = s + (b - bn);
        bed[i] = bn;
    } else {
        let drop = p.kd * (s - cap);
        let bn = b + drop;
        let gained = bn - b;
        if gained <= s {
            s1 = s - gained;
            bed[i] = bn;
        }
    }
    sed[i] = s1;
    var q = 0.0;
    if d1 > 0.0 {
        q = (s1 * p.dt_area) / d1;
    }
    scratch[i] = q;
    let cv = cellv[i];
    cellv[i] = vec4<f32>(u, v, cv.z + border * p.dt, cv.w);
}

@compute @workgroup_size(256)
fn sediment(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = cell_of(gid);
    if i >= p.n {
        return;
    }
    let a = around(i);
    let f = flux[i];
    let q = scratch[i];
    let gone = q * f.x + q * f.y + q * f.z + q * f.w;
    let came = (scratch[a.il] * flux[a.il].y) * a.el + (scratch[a.ir] * flux[a.ir].x) * a.er
        + (scratch[a.iu] * flux[a.iu].w) * a.eu + (scratch[a.id] * flux[a.id].z) * a.ed;
    let border = (q * f.x) * (1.0 - a.el) + (q * f.y) * (1.0 - a.er)
        + (q * f.z) * (1.0 - a.eu) + (q * f.w) * (1.0 - a.ed);
    s_next[i] = max(sed[i] - gone + came, 0.0);
    cellv[i].w = cellv[i].w + border;
}
