// Shared by every Orogen compute shader: the step's parameters, the node index of an
// invocation and the outlet test (the CPU's RasterGrid::is_outlet plus the sea level).

struct Params {
    width: u32,
    height: u32,
    n: u32,
    // Open sides, bits: 1 north (y = 0), 2 south (y = h - 1), 4 east (x = w - 1), 8 west (x = 0).
    open: u32,
    has_sea: u32,
    sea: f32,
    dt: f32,
    m: f32,
    // Link lengths: along x, along y, diagonal (the CPU's RasterGrid distances).
    dx: f32,
    dy: f32,
    diag: f32,
    // 1 / the fixed-point scale of the drainage sums (a power of two).
    inv_scale: f32,
    // The workgroups of a full-grid dispatch (control.wgsl writes them as indirect
    // arguments).
    groups_x: u32,
    groups_y: u32,
    pad0: u32,
    pad1: u32,
}

@group(0) @binding(0) var<uniform> p: Params;

// "No node": the jump past a tree's root.
const NONE: u32 = 0xffffffffu;
// Invocations per workgroup (the Rust side's WORKGROUP).
const WG: u32 = 256u;

// Dispatches are two-dimensional (at most 65535 workgroups a side); rows of nwg.x groups.
fn node_index(gid: vec3<u32>, nwg: vec3<u32>) -> u32 {
    return gid.x + gid.y * nwg.x * WG;
}

fn is_outlet(i: u32, h: f32) -> bool {
    let y = i / p.width;
    let x = i - y * p.width;
    if (p.has_sea != 0u && h <= p.sea) {
        return true;
    }
    return ((p.open & 1u) != 0u && y == 0u) || ((p.open & 2u) != 0u && y + 1u == p.height)
        || ((p.open & 4u) != 0u && x + 1u == p.width) || ((p.open & 8u) != 0u && x == 0u);
}
