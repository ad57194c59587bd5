//! The stream tree's rivers as polylines (Cordonnier et al. 2016 §7, rivers carved from the
//! graph's elevation and drainage), with discharge, width and Strahler order.
//!
//! A node is a river node when its discharge reaches [`RiverParams::threshold`], or when a
//! river flows into it (so every river runs on to its outlet). Strahler orders are counted
//! over the river nodes of the stream tree: a source is order 1; where two or more donors of
//! the highest order `k` meet the order becomes `k + 1`, otherwise it stays the donors'
//! highest. Each [`River`] is one maximal run of nodes of one order: it starts at a source
//! or at the confluence that raised the order, and ends at the node where it joins a river
//! of higher order (that junction node is its last point and a point of the river it joins)
//! or at an outlet.

use crate::math;
use serde::Serialize;

use super::StreamSurface;
use crate::error::{check_finite, check_range, OrogenError, Result};
use crate::mesh::graph::alloc;

/// Largest accepted [`RiverParams::smoothing`].
pub const MAX_SMOOTHING: u32 = 6;

/// One river reach: a polyline from source to mouth.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct River {
    /// Points from source to mouth: x, y (metres, the graph's frame) and bed height
    /// (metres). The bed never rises downstream.
    pub points: Vec<[f64; 3]>,
    /// Discharge at each point (the unit of [`StreamSurface::discharge`]).
    pub discharge: Vec<f32>,
    /// Channel width at each point, metres: `width_coeff · discharge^0.5`.
    pub width: Vec<f32>,
    /// Strahler order, 1 for a reach from a source.
    pub order: u32,
}

/// How rivers are picked, sized and smoothed.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RiverParams {
    /// Discharge from which a node is a river node (unit of the discharge); 0 means 1 % of
    /// the largest discharge. Default 0.
    pub threshold: f32,
    /// `a` in the channel width `w = a·Q^0.5` (metres per square root of the discharge
    /// unit). Default 0.004: with drainage area in m², a 100 km² basin is 40 m wide.
    pub width_coeff: f32,
    /// Centripetal Catmull-Rom subdivision levels: each link between two nodes becomes
    /// `2^smoothing` segments of a curve through the nodes (0 keeps the straight links).
    /// At most [`MAX_SMOOTHING`]. Default 2.
    pub smoothing: u32,
}

impl Default for RiverParams {
    fn default() -> Self {
        RiverParams {
            threshold: 0.0,
            width_coeff: 0.004,
            smoothing: 2,
        }
    }
}

impl RiverParams {
    /// Checks ranges; `field` prefixes error names.
    pub fn validate(&self, field: &str) -> Result<()> {
        check_range(
            &format!("{field}.threshold"),
            self.threshold as f64,
            0.0,
            f32::MAX as f64,
        )?;
        check_range(
            &format!("{field}.width_coeff"),
            self.width_coeff as f64,
            0.0,
            1e3,
        )?;
        if self.smoothing > MAX_SMOOTHING {
            return Err(OrogenError::invalid(
                format!("{field}.smoothing"),
                format!(
                    "at most {MAX_SMOOTHING} subdivision levels, got {}",
                    self.smoothing
                ),
            ));
        }
        Ok(())
    }
}

/// Checks that every per-node slice of `s` has one finite entry per node, that receivers
/// name nodes and that triangles name nodes. Shared by the rasterisers.
pub(crate) fn check_surface(s: &StreamSurface) -> Result<()> {
    let n = s.graph.len();
    for (field, len) in [
        ("heights", s.heights.len()),
        ("receivers", s.receivers.len()),
        ("discharge", s.discharge.len()),
        ("water_level", s.water_level.len()),
    ] {
        if len != n {
            return Err(OrogenError::invalid(
                field,
                format!("one value per node expected ({n}), got {len}"),
            ));
        }
    }
    for (field, values) in [
        ("heights", s.heights),
        ("discharge", s.discharge),
        ("water_level", s.water_level),
    ] {
        if let Some(i) = values.iter().position(|v| !v.is_finite()) {
            check_finite(&format!("{field}[{i}]"), values[i] as f64)?;
        }
    }
    if let Some(i) = s.discharge.iter().position(|&q| q < 0.0) {
        return Err(OrogenError::invalid(
            format!("discharge[{i}]"),
            format!("must be ≥ 0, got {}", s.discharge[i]),
        ));
    }
    if let Some(i) = s.receivers.iter().position(|&r| r as usize >= n) {
        return Err(OrogenError::invalid(
            format!("receivers[{i}]"),
            format!("{} names a node beyond the {n} nodes", s.receivers[i]),
        ));
    }
    for (k, t) in s.triangles.iter().enumerate() {
        if t.iter().any(|&v| v as usize >= n) {
            return Err(OrogenError::invalid(
                format!("triangles[{k}]"),
                format!("{t:?} names a node beyond the {n} nodes"),
            ));
        }
    }
    Ok(())
}

/// The nodes in stream order, outlets first, every receiver before its donors; errors when
/// the receivers hold a cycle (then some node never reaches an outlet).
pub(crate) fn stream_order(receivers: &[u32]) -> Result<Vec<u32>> {
    let n = receivers.len();
    // Donors in compressed rows.
    let mut offsets: Vec<u32> = alloc(n + 1, "donor offsets")?;
    offsets.resize(n + 1, 0);
    for (i, &r) in receivers.iter().enumerate() {
        if r as usize != i {
            offsets[r as usize + 1] += 1;
        }
    }
    for i in 0..n {
        offsets[i + 1] += offsets[i];
    }
    let mut donors: Vec<u32> = alloc(offsets[n] as usize, "donors")?;
    donors.resize(offsets[n] as usize, 0);
    let mut fill: Vec<u32> = alloc(n, "donor cursors")?;
    fill.extend_from_slice(&offsets[..n]);
    for (i, &r) in receivers.iter().enumerate() {
        if r as usize != i {
            donors[fill[r as usize] as usize] = i as u32;
            fill[r as usize] += 1;
        }
    }
    drop(fill);
    let mut stack: Vec<u32> = alloc(n, "stream order")?;
    stack.extend((0..n as u32).filter(|&i| receivers[i as usize] == i));
    let mut head = 0;
    while head < stack.len() {
        let c = stack[head] as usize;
        head += 1;
        stack.extend_from_slice(&donors[offsets[c] as usize..offsets[c + 1] as usize]);
    }
    if stack.len() != n {
        let mut seen: Vec<bool> = alloc(n, "stream order check")?;
        seen.resize(n, false);
        for &c in &stack {
            seen[c as usize] = true;
        }
        let i = seen.iter().position(|&s| !s).unwrap_or(0);
        return Err(OrogenError::invalid(
            format!("receivers[{i}]"),
            "the receivers hold a cycle: this node never reaches an outlet (one that receives itself)",
        ));
    }
    Ok(stack)
}

/// The bed of every node: its water level, raised to its receiver's bed so that it never
/// rises downstream (`bed_i = max(water_level_i, bed_receiver)`), walking `stack`.
pub(crate) fn beds(s: &StreamSurface, stack: &[u32]) -> Result<Vec<f32>> {
    let n = s.graph.len();
    let mut bed: Vec<f32> = alloc(n, "river beds")?;
    bed.resize(n, 0.0);
    for &c in stack {
        let c = c as usize;
        let r = s.receivers[c] as usize;
        let w = s.water_level[c].max(s.heights[c]);
        bed[c] = if r == c { w } else { w.max(bed[r]) };
    }
    Ok(bed)
}

/// Strahler order of every node (0 for nodes that are not river nodes), and the river
/// threshold used.
pub(crate) fn strahler(s: &StreamSurface, p: &RiverParams, stack: &[u32]) -> Result<Vec<u32>> {
    let n = s.graph.len();
    let max_q = s.discharge.iter().fold(0.0f32, |a, &q| a.max(q));
    let threshold = if p.threshold > 0.0 {
        p.threshold
    } else {
        0.01 * max_q
    };
    let mut river: Vec<bool> = alloc(n, "river nodes")?;
    river.extend(s.discharge.iter().map(|&q| q > 0.0 && q >= threshold));
    strahler_orders(s.receivers, river, stack)
}

/// Strahler order of every node of `river` (true for river nodes; 0 for the others),
/// over the stream tree of `receivers` walked in `stack` order. A river flows on to its
/// outlet: every node downstream of a river node is made a river node first.
pub(crate) fn strahler_orders(
    receivers: &[u32],
    mut river: Vec<bool>,
    stack: &[u32],
) -> Result<Vec<u32>> {
    let n = receivers.len();
    // A river flows on to its outlet: donors come after their receivers in the stack.
    for &c in stack.iter().rev() {
        let c = c as usize;
        if river[c] {
            river[receivers[c] as usize] = true;
        }
    }
    // Per node: highest donor order and how many donors have it.
    let mut top: Vec<u32> = alloc(n, "strahler top order")?;
    top.resize(n, 0);
    let mut count: Vec<u32> = alloc(n, "strahler counts")?;
    count.resize(n, 0);
    let mut order: Vec<u32> = alloc(n, "strahler orders")?;
    order.resize(n, 0);
    for &c in stack.iter().rev() {
        let c = c as usize;
        if !river[c] {
            continue;
        }
        let o = match (top[c], count[c]) {
            (0, _) => 1,
            (k, 1) => k,
            (k, _) => k + 1,
        };
        order[c] = o;
        let r = receivers[c] as usize;
        if r != c {
            if o > top[r] {
                top[r] = o;
                count[r] = 1;
            } else if o == top[r] {
                count[r] += 1;
            }
        }
    }
    Ok(order)
}

/// The Strahler reaches of the stream tree: for each, its node run from its start (a
/// source, or the confluence that raised the order) to its mouth (the node where it joins
/// a river of another order, included, or its outlet), sorted by mouth node then start
/// node. An outlet river node nothing flows into makes no reach.
pub(crate) fn reaches(receivers: &[u32], order: &[u32]) -> Result<Vec<Vec<u32>>> {
    let n = receivers.len();
    // Does some river donor of the same order flow into each node? Then it is not a start.
    let mut continued: Vec<bool> = alloc(n, "river starts")?;
    continued.resize(n, false);
    for c in 0..n {
        let r = receivers[c] as usize;
        if order[c] > 0 && r != c && order[r] == order[c] {
            continued[r] = true;
        }
    }
    let mut reaches: Vec<(u32, u32, Vec<u32>)> = Vec::new();
    for start in 0..n {
        if order[start] == 0 || continued[start] {
            continue;
        }
        let mut nodes = vec![start as u32];
        let mut c = start;
        loop {
            let r = receivers[c] as usize;
            if r == c {
                break;
            }
            nodes.push(r as u32);
            if order[r] != order[start] {
                break;
            }
            c = r;
        }
        if nodes.len() < 2 {
            // An outlet river node nothing flows into: no reach to draw.
            continue;
        }
        let mouth = *nodes.last().unwrap_or(&(start as u32));
        reaches.push((mouth, start as u32, nodes));
    }
    reaches.sort_unstable_by_key(|r| (r.0, r.1));
    Ok(reaches.into_iter().map(|r| r.2).collect())
}

/// The rivers of `s`, sorted by mouth node then source node. Errors naming the field for
/// invalid parameters, slices of the wrong length, receivers out of range or in a cycle,
/// non-finite values, negative discharge, or when memory runs out.
pub fn extract_rivers(s: &StreamSurface, p: &RiverParams) -> Result<Vec<River>> {
    // Cordonnier et al. 2016 §7: rivers from the stream graph's elevation and drainage.
    p.validate("rivers")?;
    check_surface(s)?;
    let stack = stream_order(s.receivers)?;
    let order = strahler(s, p, &stack)?;
    let bed = beds(s, &stack)?;

    let reaches = reaches(s.receivers, &order)?;

    let levels = 1usize << p.smoothing;
    let mut rivers: Vec<River> = alloc(reaches.len(), "rivers")?;
    for nodes in reaches {
        let start = nodes[0];
        let pos: Vec<[f64; 2]> = nodes
            .iter()
            .map(|&i| {
                let q = s.graph.position(i as usize);
                [q.x, q.y]
            })
            .collect();
        let z: Vec<f64> = nodes.iter().map(|&i| bed[i as usize] as f64).collect();
        let q: Vec<f64> = nodes
            .iter()
            .map(|&i| s.discharge[i as usize] as f64)
            .collect();
        let m = nodes.len();
        let count = (m - 1) * levels + 1;
        let mut points = Vec::with_capacity(count);
        let mut discharge = Vec::with_capacity(count);
        for k in 0..m - 1 {
            let p0 = if k == 0 {
                mirror(pos[1], pos[0])
            } else {
                pos[k - 1]
            };
            let p3 = if k + 2 < m {
                pos[k + 2]
            } else {
                mirror(pos[m - 2], pos[m - 1])
            };
            for j in 0..levels {
                let t = j as f64 / levels as f64;
                let xy = if j == 0 {
                    pos[k]
                } else {
                    catmull_rom(p0, pos[k], pos[k + 1], p3, t)
                };
                points.push([xy[0], xy[1], lerp(z[k], z[k + 1], t)]);
                discharge.push(lerp(q[k], q[k + 1], t) as f32);
            }
        }
        points.push([pos[m - 1][0], pos[m - 1][1], z[m - 1]]);
        discharge.push(q[m - 1] as f32);
        let width = discharge
            .iter()
            .map(|&q| p.width_coeff * q.max(0.0).sqrt())
            .collect();
        rivers.push(River {
            points,
            discharge,
            width,
            order: order[start as usize],
        });
    }
    Ok(rivers)
}

/// `a + (b − a)·t`: exactly `a` when `a == b` (a flat lake stays flat).
#[inline]
pub(crate) fn lerp(a: f64, b: f64, t: f64) -> f64 {
    a + (b - a) * t
}

/// The reflection of `a` through `b`: a phantom end point for the spline.
pub(crate) fn mirror(a: [f64; 2], b: [f64; 2]) -> [f64; 2] {
    [2.0 * b[0] - a[0], 2.0 * b[1] - a[1]]
}

/// Centripetal Catmull-Rom (α = 0.5) between `p1` (t = 0) and `p2` (t = 1): no cusp or
/// self-intersection within a segment (Yuksel et al. 2011).
pub(crate) fn catmull_rom(
    p0: [f64; 2],
    p1: [f64; 2],
    p2: [f64; 2],
    p3: [f64; 2],
    t: f64,
) -> [f64; 2] {
    let knot = |a: [f64; 2], b: [f64; 2]| (math::hypot(b[0] - a[0], b[1] - a[1])).sqrt().max(1e-12);
    let t0 = 0.0;
    let t1 = t0 + knot(p0, p1);
    let t2 = t1 + knot(p1, p2);
    let t3 = t2 + knot(p2, p3);
    let u = t1 + (t2 - t1) * t;
    let mix = |a: [f64; 2], b: [f64; 2], ta: f64, tb: f64| {
        let wa = (tb - u) / (tb - ta);
        let wb = (u - ta) / (tb - ta);
        [wa * a[0] + wb * b[0], wa * a[1] + wb * b[1]]
    };
    let a1 = mix(p0, p1, t0, t1);
    let a2 = mix(p1, p2, t1, t2);
    let a3 = mix(p2, p3, t2, t3);
    let b1 = mix(a1, a2, t0, t2);
    let b2 = mix(a2, a3, t1, t3);
    mix(b1, b2, t1, t2)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mesh::NodeGraph;
    use glam::DVec2;

    /// A Y of rivers: 0 → 2, 1 → 2, 2 → 3 → 4 (outlet), all above the threshold.
    #[test]
    fn strahler_y() {
        let pos = vec![
            DVec2::new(0.0, 0.0),
            DVec2::new(2.0, 0.0),
            DVec2::new(1.0, 1.0),
            DVec2::new(1.0, 2.0),
            DVec2::new(1.0, 3.0),
        ];
        let g =
            NodeGraph::from_edges(pos, &[[0, 2], [1, 2], [2, 3], [3, 4]], vec![1.0; 5]).unwrap();
        let heights = [5.0, 5.0, 4.0, 3.0, 2.0];
        let s = StreamSurface {
            graph: &g,
            triangles: &[],
            heights: &heights,
            receivers: &[2, 2, 3, 4, 4],
            discharge: &[1.0, 1.0, 3.0, 4.0, 5.0],
            water_level: &heights,
        };
        let r = extract_rivers(
            &s,
            &RiverParams {
                smoothing: 0,
                ..Default::default()
            },
        )
        .unwrap();
        assert_eq!(r.len(), 3);
        // Sorted by mouth node: the two sources (mouth 2), then the trunk (mouth 4).
        assert_eq!((r[0].order, r[1].order, r[2].order), (1, 1, 2));
        assert_eq!(r[2].points.len(), 3);
        assert_eq!(r[0].points.last().unwrap()[..2], [1.0, 1.0]);
        assert_eq!(r[2].points[0][..2], [1.0, 1.0]);
    }
}
