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
    // Lake routing: the number of passes uploaded (carve.wgsl), 1 where the receivers keep a
    // node's carved receiver when it has no lower neighbour (Fill's second descent), and
    // Fill's water-surface slope, metres per link.
    count: u32,
    keep: u32,
    epsilon: f32,
    // The slope exponent n of the stream-power law (solve_n.wgsl; solve.wgsl is n = 1).
    slope_exp: f32,
    // tiles.wgsl's workgroups: tiles of 16 x 16 cells along x and y.
    tiles_x: u32,
    tiles_y: u32,
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

// The neighbour of i in the CPU's OFFSETS direction k (0 NW, 1 N, 2 NE, 3 W, 4 E, 5 SW, 6 S,
// 7 SE: increasing index), or NONE outside the grid.
fn neighbour(i: u32, k: u32) -> u32 {
    let y = i32(i / p.width);
    let x = i32(i) - y * i32(p.width);
    var ox = i32(k) - 1;
    var oy = -1;
    if (k == 3u) {
        ox = -1;
        oy = 0;
    } else if (k == 4u) {
        ox = 1;
        oy = 0;
    } else if (k >= 5u) {
        ox = i32(k) - 6;
        oy = 1;
    }
    let nx = x + ox;
    let ny = y + oy;
    if (nx < 0 || ny < 0 || nx >= i32(p.width) || ny >= i32(p.height)) {
        return NONE;
    }
    return u32(ny) * p.width + u32(nx);
}

// The length of the link between neighbours i and j (the CPU's RasterGrid distances, which
// are the same both ways).
fn link_length(i: u32, j: u32) -> f32 {
    let same_row = i / p.width == j / p.width;
    let same_column = i % p.width == j % p.width;
    if (same_row) {
        return p.dx;
    }
    if (same_column) {
        return p.dy;
    }
    return p.diag;
}

// A height's bits mapped to a u32 with the order of Rust's f32::total_cmp (-0 below +0).
fn ordered(h: f32) -> u32 {
    let b = bitcast<u32>(h);
    if ((b & 0x80000000u) != 0u) {
        return ~b;
    }
    return b | 0x80000000u;
}
