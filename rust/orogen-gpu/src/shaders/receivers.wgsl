// Steepest-descent (D8) receivers, the same as orogen-core's RasterGrid::steepest_receivers
// (SinkMode::None): an outlet (open side, or at or below the sea) receives itself; any other
// node receives the neighbour of largest slope (h_i - h_j) / d_ij > 0, neighbours taken in
// the CPU's OFFSETS order (row above, same row, row below: increasing index) with a strict
// `>`, so ties go to the lowest index; a node with no lower neighbour receives itself.
// Slopes are the CPU's bits: the subtraction is correctly rounded in WGSL, the division is
// done in integers (div_rn) because WGSL allows 2.5 ulp for `/`, and they are compared as
// bits (positive floats order as their bits), which no flush of subnormals can change.
// div_near gets div_rn's bits from a product and an integer remainder, most often without
// the long division.
// With p.keep (Fill's descent over the filled surface) a node keeps its carved receiver
// where it has no lower neighbour, and a node that receives itself stays a root.

@group(0) @binding(1) var<storage, read> heights: array<f32>;
@group(0) @binding(2) var<storage, read_write> receivers: array<u32>;
@group(0) @binding(3) var<storage, read_write> dists: array<f32>;
// basins.wgsl's counter: [1] set to 1 when some node is a pit (lake routing skips the
// basins otherwise; only ever set to 1, so the order of the writes does not matter).
@group(0) @binding(4) var<storage, read_write> flags: array<atomic<u32>>;

// The 24-bit significand (with its leading one) and the biased exponent of a positive
// finite float's bits, normalised so the significand is in [2^23, 2^24) (subnormals too).
fn unpack(bits: u32) -> vec2<i32> {
    let e = i32(bits >> 23u);
    let m = bits & 0x7fffffu;
    if (e == 0) {
        let s = countLeadingZeros(m) - 8u;
        return vec2<i32>(i32(m << s), 1 - i32(s));
    }
    return vec2<i32>(i32(m | 0x800000u), e);
}

// The bits of a / b rounded to nearest even, IEEE binary32, for finite a > 0 and b > 0
// (a subnormal or zero quotient and an infinite one included): long division of the
// significands, 26 quotient bits and the remainder as the sticky bit.
fn div_rn(a: u32, b: u32) -> u32 {
    let ua = unpack(a);
    let ub = unpack(b);
    var ma = u32(ua.x);
    let mb = u32(ub.x);
    var e = ua.y - ub.y + 127;
    if (ma < mb) {
        ma = ma << 1u;
        e = e - 1;
    }
    // ma / mb in [1, 2).
    var q = 0u;
    var r = ma;
    for (var k = 0u; k < 26u; k = k + 1u) {
        q = q << 1u;
        if (r >= mb) {
            r = r - mb;
            q = q | 1u;
        }
        r = r << 1u;
    }
    if (e >= 255) {
        return 0x7f800000u;
    }
    // q has 26 bits; keep 24 (normal) or fewer (subnormal), round to nearest even.
    var shift = 2u;
    if (e <= 0) {
        // Below 2^-149 / 4 (shift > 31, where WGSL would wrap the shift) the quotient
        // rounds to zero.
        if (e < -28) {
            return 0u;
        }
        shift = u32(3 - e);
    }
    var m = q >> shift;
    let guard = (q >> (shift - 1u)) & 1u;
    let rest = (q & ((1u << (shift - 1u)) - 1u)) != 0u || r != 0u;
    if (guard == 1u && (rest || (m & 1u) == 1u)) {
        m = m + 1u;
    }
    if (e <= 0) {
        // A subnormal; rounding up to 2^23 gives the smallest normal's bits.
        return m;
    }
    // m in [2^23, 2^24]: carrying into the exponent (or to infinity) is the right result.
    return (u32(e - 1) << 23u) + m;
}

// The same bits as div_rn(bitcast<u32>(a), bitcast<u32>(d)) for finite a > 0 and a normal
// d > 0, most often without the long division: the product a * inv_d (inv_d about 1 / d;
// WGSL's `*` is correctly rounded, its `/` within 2.5 ulp) is within a few ulp of a / d,
// and is corrected to the correctly rounded quotient by its remainder, exact in integers.
// With significands ma, md, mq in [2^23, 2^24), R = ma·2^k − 2·mq·md (k from the
// exponents) is 2·md times the quotient's distance from mq in ulps; it is small (a few
// md, under 2^31), so the wrapping u32 arithmetic gives it exactly. mq is right when
// |R| ≤ md (a tie, |R| = md, goes to the even mq). Where a or the estimate is not normal,
// or the result leaves the estimate's binade (or sits at its lower edge, where the ulp
// below is half), div_rn decides.
fn div_near(a: f32, d: f32, inv_d: f32) -> u32 {
    let ab = bitcast<u32>(a);
    let db = bitcast<u32>(d);
    let q0 = bitcast<u32>(a * inv_d);
    let ea = i32(ab >> 23u);
    let ed = i32(db >> 23u);
    let eq = i32(q0 >> 23u);
    let k = ea - ed - eq + 151;
    let ma = (ab & 0x7fffffu) | 0x800000u;
    let md = (db & 0x7fffffu) | 0x800000u;
    var mq = (q0 & 0x7fffffu) | 0x800000u;
    var r = bitcast<i32>((ma << u32(clamp(k, 0, 31))) - 2u * mq * md);
    let imd = i32(md);
    for (var t = 0; t < 4; t = t + 1) {
        if (r > imd) {
            mq = mq + 1u;
            r = r - 2 * imd;
        } else if (r < -imd) {
            mq = mq - 1u;
            r = r + 2 * imd;
        }
    }
    if ((r == imd || r == -imd) && (mq & 1u) == 1u) {
        // A tie: to the even neighbour.
        if (r > 0) {
            mq = mq + 1u;
        } else {
            mq = mq - 1u;
        }
        r = -r;
    }
    let normal = ea != 0 && ed != 0 && eq != 0 && eq < 255 && k >= 16 && k <= 31;
    let inside = r <= imd && r >= -imd && mq > 0x800000u && mq < 0x1000000u;
    if (normal && inside) {
        return (u32(eq) << 23u) | (mq & 0x7fffffu);
    }
    return div_rn(ab, db);
}

@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = node_index(gid, nwg);
    if (i >= p.n) {
        return;
    }
    let hi = heights[i];
    // Fill's second descent (p.keep): a node that receives itself stays so, and one with
    // no lower neighbour keeps its carved receiver (the CPU's `keep`).
    if (is_outlet(i, hi) || (p.keep != 0u && receivers[i] == i)) {
        receivers[i] = i;
        dists[i] = 0.0;
        return;
    }
    let y = i32(i / p.width);
    let x = i32(i) - y * i32(p.width);
    var best = 0u;
    var best_j = i;
    var best_d = 0.0;
    let inv = vec3<f32>(1.0 / p.dx, 1.0 / p.dy, 1.0 / p.diag);
    for (var k = 0; k < 8; k = k + 1) {
        // OFFSETS[k]: (-1,-1) (0,-1) (1,-1) (-1,0) (1,0) (-1,1) (0,1) (1,1).
        var ox = k - 1;
        var oy = -1;
        if (k == 3) {
            ox = -1;
            oy = 0;
        } else if (k == 4) {
            ox = 1;
            oy = 0;
        } else if (k >= 5) {
            ox = k - 6;
            oy = 1;
        }
        let nx = x + ox;
        let ny = y + oy;
        if (nx < 0 || ny < 0 || nx >= i32(p.width) || ny >= i32(p.height)) {
            continue;
        }
        let j = u32(ny) * p.width + u32(nx);
        let diff = hi - heights[j];
        if (!(diff > 0.0)) {
            continue;
        }
        var d = p.dy;
        var inv_d = inv.y;
        if (ox != 0 && oy != 0) {
            d = p.diag;
            inv_d = inv.z;
        } else if (ox != 0) {
            d = p.dx;
            inv_d = inv.x;
        }
        let s = div_near(diff, d, inv_d);
        if (s > best) {
            best = s;
            best_j = j;
            best_d = d;
        }
    }
    if (best_j == i) {
        if (p.keep != 0u) {
            return;
        }
        if (atomicLoad(&flags[1]) == 0u) {
            atomicStore(&flags[1], 1u);
        }
    }
    receivers[i] = best_j;
    dists[i] = best_d;
}

// For the tests: receivers[i] = the bits of heights[i] / dists[i] as div_near rounds it
// (finite heights > 0, normal dists > 0), to compare with the CPU's correctly rounded `/`.
@compute @workgroup_size(256)
fn quotients(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = node_index(gid, nwg);
    if (i >= p.n) {
        return;
    }
    let d = dists[i];
    receivers[i] = div_near(heights[i], d, 1.0 / d);
}
