//! The planet against Earth (#39): hypsometry (under 1 % of the area above 5 km, none at an
//! elevation clamp) and ocean depth against crust age after Parsons & Sclater 1977 (depth
//! ≈ 2,500 + 350 √t m for t < 70 Myr, flattening towards 6,400 m), from the ages the run
//! itself makes. Areas are each point's share of its triangles (a third of each).

use std::sync::atomic::AtomicBool;

use orogen_core::planet::{spherical_area, Crust, Planet, PlanetParams};

/// Parsons & Sclater 1977: ocean depth (m, positive down) of crust `t_myr` old.
fn parsons_sclater(t_myr: f64) -> f64 {
    if t_myr < 70.0 {
        2500.0 + 350.0 * t_myr.max(0.0).sqrt()
    } else {
        6400.0 - 3200.0 * (-t_myr / 62.8).exp()
    }
}

/// Each point's area on the unit sphere: a third of each triangle it is a corner of.
fn point_areas(planet: &Planet) -> Vec<f64> {
    let pos = planet.positions();
    let mut area = vec![0.0; pos.len()];
    for t in planet.triangles() {
        let a = spherical_area(pos[t[0] as usize], pos[t[1] as usize], pos[t[2] as usize]);
        for &k in t {
            area[k as usize] += a / 3.0;
        }
    }
    area
}

/// Ranks (1-based, ties averaged) of `v`.
fn ranks(v: &[f64]) -> Vec<f64> {
    let mut idx: Vec<usize> = (0..v.len()).collect();
    idx.sort_by(|&a, &b| v[a].total_cmp(&v[b]));
    let mut r = vec![0.0; v.len()];
    let mut i = 0;
    while i < idx.len() {
        let mut j = i;
        while j + 1 < idx.len() && v[idx[j + 1]] == v[idx[i]] {
            j += 1;
        }
        for &k in &idx[i..=j] {
            r[k] = (i + j) as f64 / 2.0 + 1.0;
        }
        i = j + 1;
    }
    r
}

/// Spearman's rank correlation of `x` and `y`.
fn spearman(x: &[f64], y: &[f64]) -> f64 {
    let (rx, ry) = (ranks(x), ranks(y));
    let n = x.len() as f64;
    let (mx, my) = (rx.iter().sum::<f64>() / n, ry.iter().sum::<f64>() / n);
    let (mut sxy, mut sxx, mut syy) = (0.0, 0.0, 0.0);
    for (a, b) in rx.iter().zip(&ry) {
        sxy += (a - mx) * (b - my);
        sxx += (a - mx).powi(2);
        syy += (b - my).powi(2);
    }
    sxy / (sxx * syy).sqrt()
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        0.5 * (v[n / 2 - 1] + v[n / 2])
    }
}

#[test]
fn earthlike_hypsometry_and_ocean_depth_with_age() {
    // The built-in `planet` recipe's planet: 60,000 points, 24 plates, 200 steps of 0.1 Myr.
    let recipe = orogen_core::Recipe::built_in("planet").expect("the built-in planet recipe");
    let p: PlanetParams = recipe.planet.clone().expect("its planet");
    let planet = Planet::run(&p, recipe.seed, &AtomicBool::new(false), &mut |_| {}).unwrap();
    let area = point_areas(&planet);
    let total: f64 = area.iter().sum();
    let z = planet.elevations();
    let share = |f: &dyn Fn(f32) -> bool| {
        z.iter()
            .zip(&area)
            .filter(|(&z, _)| f(z))
            .map(|(_, a)| a)
            .sum::<f64>()
            / total
            + 0.0
    };
    let above_5 = share(&|z| z > 5000.0);
    let above_9 = share(&|z| z > 9000.0);
    let land = share(&|z| z > 0.0);
    let highest = z.iter().copied().fold(f32::MIN, f32::max);
    let lowest = z.iter().copied().fold(f32::MAX, f32::min);
    println!(
        "planet: land {:.1} %, above 5 km {:.2} %, above 9 km {:.3} %, elevations {lowest:.0} … {highest:.0} m",
        land * 100.0,
        above_5 * 100.0,
        above_9 * 100.0
    );
    assert!(
        above_5 < 0.01,
        "{:.2} % of the area is above 5 km (Earth: under 1 %)",
        above_5 * 100.0
    );
    assert!(
        highest < 9_999.0 && lowest > -9_999.0,
        "elevations reach a clamp: {lowest} … {highest} m"
    );

    // Ocean floor: depth against age.
    let (mut ages, mut depths) = (Vec::new(), Vec::new());
    for ((&z, &crust), &age) in z.iter().zip(planet.crust()).zip(planet.ages()) {
        if crust == Crust::Oceanic && z < 0.0 {
            ages.push(age as f64 / 1.0e6);
            depths.push(-z as f64);
        }
    }
    let rho = spearman(&ages, &depths);
    println!(
        "planet: {} ocean points, rank correlation of depth with age {rho:.3}",
        ages.len()
    );
    assert!(
        rho >= 0.6,
        "ocean depth follows age with a rank correlation of only {rho:.3}"
    );
    for (lo, hi) in [
        (0.0, 2.0),
        (2.0, 5.0),
        (5.0, 10.0),
        (10.0, 20.0),
        (20.0, 50.0),
        (50.0, 100.0),
    ] {
        let mut d: Vec<f64> = ages
            .iter()
            .zip(&depths)
            .filter(|(&a, _)| a >= lo && a < hi)
            .map(|(_, &d)| d)
            .collect();
        let mut a: Vec<f64> = ages
            .iter()
            .copied()
            .filter(|&a| a >= lo && a < hi)
            .collect();
        if d.len() < 20 {
            println!(
                "planet: crust {lo}–{hi} Myr: {} points, not compared",
                d.len()
            );
            continue;
        }
        let (got, age) = (median(&mut d), median(&mut a));
        let want = parsons_sclater(age);
        println!(
            "planet: crust {lo}–{hi} Myr ({} points): median depth {got:.0} m, Parsons & Sclater {want:.0} m at {age:.1} Myr",
            d.len()
        );
        assert!(
            (got - want).abs() <= 0.2 * want,
            "crust {lo}–{hi} Myr: median depth {got:.0} m against Parsons & Sclater's {want:.0} m"
        );
    }
}
