//! `PlanetWorld`: a tectonic planet (seed 004) drawn as a displaced sphere, stepped live on
//! a worker thread, from which a region becomes a `TerrainWorld` recipe.
//!
//! Like `ErosionSimulator`, the worker is a plain `std::thread` with its own rayon pool; it
//! owns the `Planet`, sends mesh snapshots over a channel at most ~15 times a second, and
//! checks a cancel flag every step. The main thread only builds the `ArrayMesh` from a
//! snapshot's ready arrays. The finished planet stays on the node for `sample`,
//! `pick` and `make_region_recipe`.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, TryRecvError};
use std::sync::Arc;
use std::time::{Duration, Instant};

use godot::classes::mesh::{ArrayType, PrimitiveType};
use godot::classes::{ArrayMesh, INode3D, MeshInstance3D, Node3D, Shader, ShaderMaterial};
use godot::prelude::*;
use orogen_core::planet::{Crust, Planet, PlanetParams};
use orogen_core::stages::planet::{PlanetRegion, PlanetSource, PlanetValue};
use orogen_core::{OrogenError, Recipe};

/// Shortest time between two live meshes.
const SNAPSHOT_INTERVAL: Duration = Duration::from_millis(66);

/// A mesh ready for Godot, made on the worker.
struct MeshArrays {
    vertices: Vec<Vector3>,
    normals: Vec<Vector3>,
    colours: Vec<Color>,
    /// Per vertex, its elevation in metres in x and the same clamped to ±`SHORE_CLAMP_M`
    /// in y (the shader colours by the one and draws the shore from the other).
    elevations: Vec<Vector2>,
    indices: Vec<i32>,
    /// Coloured by elevation (the shader's), else by the vertex colours.
    by_elevation: bool,
}

/// Elevations clamped to this, metres, place the shore in the planet's shader.
const SHORE_CLAMP_M: f32 = 800.0;

/// The planet's surface shader (also at `addons/orogen/runtime/planet.gdshader`).
const SHADER: &str = include_str!("../../../addons/orogen/runtime/planet.gdshader");

enum Msg {
    Step { step: u32, mesh: Option<MeshArrays> },
    Finished(Box<Planet>, MeshArrays),
    Failed(String),
}

type Worker = crate::worker::Worker<Msg>;

/// How the sphere is coloured.
#[derive(Clone, Copy, PartialEq, Eq)]
enum ColourBy {
    Elevation,
    Plates,
}

/// A tectonic planet: plates drift, collide, subduct and rift on a sphere (seed 004).
///
/// `start()` simulates it off the main thread and draws it live; then `sample`, `pick`,
/// `greatest_uplift` and `make_region_recipe` turn a region of it into a terrain recipe.
#[derive(GodotClass)]
#[class(tool, base = Node3D)]
pub struct PlanetWorld {
    /// Points on the sphere (≥ 12).
    #[export]
    points: i32,
    /// Tectonic plates (1 ..= points).
    #[export]
    plates: i32,
    /// Fraction of the plates with continental crust, 0–1.
    #[export]
    continental_fraction: f32,
    /// Simulation steps.
    #[export]
    steps: i32,
    /// Years per step.
    #[export]
    dt_years: f32,
    /// Seed of every random choice.
    #[export]
    seed: i64,
    /// Radius of the drawn sphere, Godot units.
    #[export]
    display_radius: f32,
    /// Relief drawn this many times its true height.
    #[export]
    exaggeration: f32,
    /// 0 colours by elevation, 1 by plate.
    #[export(enum = (Elevation = 0, Plates = 1))]
    colour_by: i32,
    /// Threads of the worker's pool; 0 = one per CPU.
    #[export]
    threads: i32,

    worker: Option<Worker>,
    planet: Option<Arc<Planet>>,
    mesh_instance: Option<Gd<MeshInstance3D>>,
    steps_done: i64,
    last_error: String,
    base: Base<Node3D>,
}

#[godot_api]
impl INode3D for PlanetWorld {
    fn init(base: Base<Node3D>) -> Self {
        let d = PlanetParams::default();
        PlanetWorld {
            points: 20_000,
            plates: d.plates as i32,
            continental_fraction: d.continental_fraction,
            steps: d.steps as i32,
            dt_years: d.dt_years,
            seed: 4,
            display_radius: 10.0,
            exaggeration: 40.0,
            colour_by: 0,
            threads: 0,
            worker: None,
            planet: None,
            mesh_instance: None,
            steps_done: 0,
            last_error: String::new(),
            base,
        }
    }

    fn process(&mut self, _delta: f64) {
        self.poll();
    }

    fn exit_tree(&mut self) {
        if let Some(mut w) = self.worker.take() {
            w.cancel_and_join();
        }
    }
}

#[godot_api]
impl PlanetWorld {
    /// After each step drawn (or skipped for speed): the step number.
    #[signal]
    fn stepped(step: i64);

    /// The run is done; `sample` and `make_region_recipe` now use the final planet.
    #[signal]
    fn finished();

    /// The run failed or was cancelled.
    #[signal]
    fn failed(message: GString);

    /// Starts simulating off the main thread; false (and `failed`) on bad parameters or
    /// while a run is going.
    #[func]
    pub fn start(&mut self) -> bool {
        match self.try_start() {
            Ok(()) => true,
            Err(e) => {
                self.signals().failed().emit(&GString::from(e.as_str()));
                false
            }
        }
    }

    /// Stops the run within one step (`failed("cancelled")` follows).
    #[func]
    pub fn cancel(&mut self) {
        if let Some(w) = &self.worker {
            w.cancel.store(true, Ordering::SeqCst);
        }
    }

    /// True while the worker runs.
    #[func]
    pub fn is_running(&self) -> bool {
        self.worker.is_some()
    }

    /// Steps done by the run shown.
    #[func]
    pub fn get_steps_done(&self) -> i64 {
        self.steps_done
    }

    /// Points of the finished planet (0 before).
    #[func]
    pub fn get_point_count(&self) -> i64 {
        self.planet.as_ref().map_or(0, |p| p.len() as i64)
    }

    /// Vertices of the drawn mesh (0 before the first).
    #[func]
    pub fn get_drawn_vertex_count(&self) -> i64 {
        self.mesh_instance
            .as_ref()
            .and_then(|m| m.get_mesh())
            .and_then(|m| m.try_cast::<ArrayMesh>().ok())
            .map_or(0, |m| {
                if m.get_surface_count() > 0 {
                    m.surface_get_array_len(0) as i64
                } else {
                    0
                }
            })
    }

    /// The finished planet's values at latitude/longitude (degrees): `elevation` (m),
    /// `uplift` (m/yr), `age` (yr), `plate`, `continental`. Empty before a run finished.
    #[func]
    pub fn sample(&self, lat: f64, lon: f64) -> VarDictionary {
        let mut d = VarDictionary::new();
        if let Some(p) = &self.planet {
            let s = p.sample(Planet::direction(lat, lon));
            d.set("elevation", s.elevation);
            d.set("uplift", s.uplift);
            d.set("age", s.age);
            d.set("plate", s.plate as i64);
            d.set("continental", s.crust == Crust::Continental);
        }
        d
    }

    /// Latitude and longitude (degrees, as x and y) where a ray in this node's space
    /// (`from`, `direction`) meets the drawn sphere; NaN when it misses.
    #[func]
    pub fn pick(&self, from: Vector3, direction: Vector3) -> Vector2 {
        let miss = Vector2::new(f32::NAN, f32::NAN);
        let d = direction.normalized();
        if !d.is_finite() || !from.is_finite() {
            return miss;
        }
        let r = self.display_radius;
        let b = from.dot(d);
        let c = from.dot(from) - r * r;
        let disc = b * b - c;
        if disc < 0.0 {
            return miss;
        }
        let t = -b - disc.sqrt();
        let t = if t >= 0.0 { t } else { -b + disc.sqrt() };
        if t < 0.0 {
            return miss;
        }
        let p = godot_to_planet(from + d * t);
        let (lat, lon) = lat_lon(p);
        Vector2::new(lat as f32, lon as f32)
    }

    /// Latitude and longitude (degrees, as x and y) of the finished planet's greatest
    /// uplift: the heart of its strongest collision. NaN before a run finished.
    #[func]
    pub fn greatest_uplift(&self) -> Vector2 {
        let Some(p) = &self.planet else {
            return Vector2::new(f32::NAN, f32::NAN);
        };
        let best = p
            .uplifts()
            .iter()
            .enumerate()
            .filter(|(_, u)| u.is_finite())
            .fold(None::<(usize, f32)>, |b, (i, &u)| match b {
                Some((_, bu)) if bu >= u => b,
                _ => Some((i, u)),
            });
        match best {
            Some((i, _)) => {
                let (lat, lon) = lat_lon(p.positions()[i]);
                Vector2::new(lat as f32, lon as f32)
            }
            None => Vector2::new(f32::NAN, f32::NAN),
        }
    }

    /// RON text of a `TerrainWorld` recipe whose uplift is the region `width_km` wide
    /// around `(lat, lon)` of this planet (the same points, plates, steps and seed, so the
    /// CLI bakes the same planet), on a `size`² grid, eroded by stream power. "" on bad
    /// input, the reason in `get_last_error()`.
    #[func]
    pub fn make_region_recipe(&mut self, lat: f64, lon: f64, width_km: f64, size: i32) -> GString {
        match self.region_recipe(lat, lon, width_km, size) {
            Ok(r) => {
                self.last_error.clear();
                GString::from(r.to_ron_string().as_str())
            }
            Err(e) => {
                self.last_error = e;
                GString::new()
            }
        }
    }

    /// Why the last `make_region_recipe` gave "" (empty after one that worked).
    #[func]
    pub fn get_last_error(&self) -> GString {
        GString::from(self.last_error.as_str())
    }

    /// Applies any finished results; called every frame while running.
    #[func]
    pub fn poll(&mut self) {
        let Some(worker) = &mut self.worker else {
            return;
        };
        let mut latest: Option<MeshArrays> = None;
        let mut stepped: Vec<u32> = Vec::new();
        let mut end: Option<Result<(Box<Planet>, MeshArrays), String>> = None;
        loop {
            match worker.rx.try_recv() {
                Ok(Msg::Step { step, mesh }) => {
                    stepped.push(step);
                    if mesh.is_some() {
                        latest = mesh;
                    }
                }
                Ok(Msg::Finished(p, m)) => {
                    end = Some(Ok((p, m)));
                    break;
                }
                Ok(Msg::Failed(e)) => {
                    end = Some(Err(e));
                    break;
                }
                Err(TryRecvError::Empty) => break,
                Err(TryRecvError::Disconnected) => {
                    end = Some(Err("the planet thread stopped unexpectedly".into()));
                    break;
                }
            }
        }
        if let Some(m) = latest {
            self.show(m);
        }
        for s in stepped {
            self.steps_done = s as i64;
            self.signals().stepped().emit(s as i64);
        }
        if let Some(end) = end {
            if let Some(mut w) = self.worker.take() {
                w.cancel_and_join();
            }
            match end {
                Ok((p, m)) => {
                    self.show(m);
                    self.planet = Some(Arc::from(p));
                    self.signals().finished().emit();
                }
                Err(e) => self.signals().failed().emit(&GString::from(e.as_str())),
            }
        }
    }
}

impl PlanetWorld {
    fn params(&self) -> Result<PlanetParams, String> {
        let count = |name: &str, v: i32| -> Result<u32, String> {
            u32::try_from(v).map_err(|_| format!("invalid value for `{name}`: {v} is negative"))
        };
        let p = PlanetParams {
            points: count("points", self.points)?,
            plates: count("plates", self.plates)?,
            continental_fraction: self.continental_fraction,
            steps: count("steps", self.steps)?,
            dt_years: self.dt_years,
            ..PlanetParams::default()
        };
        p.validate("planet").map_err(|e| e.to_string())?;
        Ok(p)
    }

    fn region_recipe(
        &self,
        lat: f64,
        lon: f64,
        width_km: f64,
        size: i32,
    ) -> Result<Recipe, String> {
        let params = self.params()?;
        if !(33..=4097).contains(&size) {
            return Err(format!(
                "invalid value for `size`: {size}, must be 33 ..= 4097"
            ));
        }
        let mut r = Recipe::built_in("planet-region").ok_or("no planet-region recipe")?;
        let source = PlanetSource {
            region: PlanetRegion { lat, lon, width_km },
            value: Some(PlanetValue::Uplift),
            scale: r.uplift.planet().map_or(1.0, |s| s.scale),
            seek_uplift_km: 0.0,
        };
        source
            .validate_on("uplift.Planet", params.radius_m)
            .map_err(|e| e.to_string())?;
        r.uplift = orogen_core::recipe::ScalarSource::Planet(source);
        r.planet = Some(params);
        r.seed = self.seed as u64;
        r.size = (size as u32, size as u32);
        r.cell_size = ((width_km * 1000.0 / (size - 1) as f64) as f32).into();
        r.validate().map_err(|e| e.to_string())?;
        Ok(r)
    }

    fn try_start(&mut self) -> Result<(), String> {
        if self.worker.is_some() {
            return Err("a run is already going; cancel it first".into());
        }
        if !(0..=256).contains(&self.threads) {
            return Err(format!(
                "invalid value for `threads`: must be between 0 (one per CPU) and 256, got {}",
                self.threads
            ));
        }
        if !(self.display_radius > 0.0 && self.display_radius.is_finite()) {
            return Err(format!(
                "invalid value for `display_radius`: {} must be > 0",
                self.display_radius
            ));
        }
        if !self.exaggeration.is_finite() {
            return Err("invalid value for `exaggeration`: not finite".into());
        }
        let params = self.params()?;
        let seed = self.seed as u64 ^ orogen_core::stages::planet::PLANET_SEED;
        let style = Style {
            radius: self.display_radius,
            exaggeration: self.exaggeration,
            colour_by: if self.colour_by == 1 {
                ColourBy::Plates
            } else {
                ColourBy::Elevation
            },
        };
        let threads = self.threads as usize;
        let (tx, rx) = mpsc::channel();
        let cancel = Arc::new(AtomicBool::new(false));
        let flag = cancel.clone();
        let handle = std::thread::Builder::new()
            .name("orogen-planet".into())
            .spawn(move || {
                let pool = match rayon::ThreadPoolBuilder::new().num_threads(threads).build() {
                    Ok(p) => p,
                    Err(e) => {
                        let _ = tx.send(Msg::Failed(format!("cannot start the pool: {e}")));
                        return;
                    }
                };
                let run = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    pool.install(|| -> Result<(Box<Planet>, MeshArrays), OrogenError> {
                        let mut planet = Planet::new(&params, seed, &flag)?;
                        let mut last = Instant::now();
                        let _ = tx.send(Msg::Step {
                            step: 0,
                            mesh: Some(mesh_arrays(&planet, style)),
                        });
                        for step in 1..=params.steps {
                            if flag.load(Ordering::Relaxed) {
                                return Err(OrogenError::Cancelled);
                            }
                            planet.step()?;
                            let mesh = (last.elapsed() >= SNAPSHOT_INTERVAL).then(|| {
                                last = Instant::now();
                                mesh_arrays(&planet, style)
                            });
                            let _ = tx.send(Msg::Step { step, mesh });
                        }
                        let m = mesh_arrays(&planet, style);
                        Ok((Box::new(planet), m))
                    })
                }));
                let msg = match run {
                    Ok(Ok((p, m))) => Msg::Finished(p, m),
                    Ok(Err(OrogenError::Cancelled)) => Msg::Failed("cancelled".into()),
                    Ok(Err(e)) => Msg::Failed(e.to_string()),
                    Err(_) => Msg::Failed("internal error in the planet simulation".into()),
                };
                let _ = tx.send(msg);
            })
            .map_err(|e| format!("cannot start the planet thread: {e}"))?;
        self.worker = Some(Worker::new(handle, rx, cancel));
        self.steps_done = 0;
        self.base_mut().set_process(true);
        Ok(())
    }

    fn show(&mut self, m: MeshArrays) {
        let mut arrays = VarArray::new();
        arrays.resize(ArrayType::MAX.ord() as usize, &Variant::nil());
        arrays.set(
            ArrayType::VERTEX.ord() as usize,
            &PackedVector3Array::from(m.vertices.as_slice()).to_variant(),
        );
        arrays.set(
            ArrayType::NORMAL.ord() as usize,
            &PackedVector3Array::from(m.normals.as_slice()).to_variant(),
        );
        arrays.set(
            ArrayType::COLOR.ord() as usize,
            &PackedColorArray::from(m.colours.as_slice()).to_variant(),
        );
        arrays.set(
            ArrayType::TEX_UV.ord() as usize,
            &PackedVector2Array::from(m.elevations.as_slice()).to_variant(),
        );
        arrays.set(
            ArrayType::INDEX.ord() as usize,
            &PackedInt32Array::from(m.indices.as_slice()).to_variant(),
        );
        let by_elevation = m.by_elevation;
        let mut mesh = ArrayMesh::new_gd();
        mesh.add_surface_from_arrays(PrimitiveType::TRIANGLES, &arrays);
        let mut mi = match &self.mesh_instance {
            Some(mi) => mi.clone(),
            None => {
                let mut mi = MeshInstance3D::new_alloc();
                let mut shader = Shader::new_gd();
                shader.set_code(SHADER);
                let mut mat = ShaderMaterial::new_gd();
                mat.set_shader(&shader);
                mi.set_material_override(&mat);
                mi.set_name("PlanetMesh");
                self.base_mut().add_child(&mi);
                self.mesh_instance = Some(mi.clone());
                mi
            }
        };
        mi.set_mesh(&mesh);
        if let Some(mut mat) = mi
            .get_material_override()
            .and_then(|m| m.try_cast::<ShaderMaterial>().ok())
        {
            mat.set_shader_parameter("by_elevation", &by_elevation.to_variant());
        }
    }
}

#[derive(Clone, Copy)]
struct Style {
    radius: f32,
    exaggeration: f32,
    colour_by: ColourBy,
}

/// Planet axes (z north) to Godot's (y up): x → x, y → −z, z → y.
fn planet_to_godot(p: [f64; 3]) -> Vector3 {
    Vector3::new(p[0] as f32, p[2] as f32, -p[1] as f32)
}

fn godot_to_planet(v: Vector3) -> [f64; 3] {
    [v.x as f64, -v.z as f64, v.y as f64]
}

fn lat_lon(p: [f64; 3]) -> (f64, f64) {
    let l = (p[0] * p[0] + p[1] * p[1] + p[2] * p[2]).sqrt();
    let lat = (p[2] / l).clamp(-1.0, 1.0).asin().to_degrees();
    let lon = p[1].atan2(p[0]).to_degrees();
    (lat, lon)
}

/// The displaced, coloured sphere of `planet`.
fn mesh_arrays(planet: &Planet, style: Style) -> MeshArrays {
    let radius_m = planet.params().radius_m as f32;
    let scale = style.radius / radius_m;
    let vertices: Vec<Vector3> = planet
        .positions()
        .iter()
        .zip(planet.elevations())
        .map(|(&p, &e)| {
            planet_to_godot(p) * (style.radius + e.max(0.0) * style.exaggeration * scale)
        })
        .collect();
    // Area-weighted vertex normals; the winding is reversed for Godot (clockwise front).
    let mut normals = vec![Vector3::ZERO; vertices.len()];
    let mut indices = Vec::with_capacity(planet.triangles().len() * 3);
    for t in planet.triangles() {
        let [a, b, c] = t.map(|i| i as usize);
        let n = (vertices[b] - vertices[a]).cross(vertices[c] - vertices[a]);
        for i in [a, b, c] {
            normals[i] += n;
        }
        indices.extend_from_slice(&[a as i32, c as i32, b as i32]);
    }
    for (n, v) in normals.iter_mut().zip(&vertices) {
        *n = if n.length_squared() > 0.0 {
            n.normalized()
        } else {
            v.normalized()
        };
    }
    let colours = match style.colour_by {
        ColourBy::Plates => planet
            .plates()
            .iter()
            .map(|&p| {
                let [r, g, b] = orogen_core::io::png16::label_colour(p);
                Color::from_rgb(r as f32 / 255.0, g as f32 / 255.0, b as f32 / 255.0)
            })
            .collect(),
        ColourBy::Elevation => planet
            .elevations()
            .iter()
            .map(|&e| elevation_colour(e))
            .collect(),
    };
    let elevations = planet
        .elevations()
        .iter()
        .map(|&e| Vector2::new(e, e.clamp(-SHORE_CLAMP_M, SHORE_CLAMP_M)))
        .collect();
    let mut mesh = MeshArrays {
        vertices,
        normals,
        colours,
        elevations,
        indices,
        by_elevation: matches!(style.colour_by, ColourBy::Elevation),
    };
    subdivide(&mut mesh);
    mesh
}

/// How far a new vertex moves from its edge's midpoint towards the curved surface the
/// edge's end normals describe (Phong tessellation's α, Boubekeur & Alexa 2008).
const PHONG_ALPHA: f32 = 0.75;

/// Splits every triangle into four at its edges' midpoints, each moved onto the smooth
/// surface through its ends by Phong tessellation, with the ends' mean normal, colour and
/// elevations: the planet's 20,000 points drew each mountain range as a few flat facets
/// tens of kilometres across (the coast view). One new vertex per edge, shared by its two
/// triangles (for a closed sphere of n points: 4n − 6 vertices in all).
fn subdivide(mesh: &mut MeshArrays) {
    let mut edge_vertex: std::collections::HashMap<(i32, i32), i32> =
        std::collections::HashMap::with_capacity(mesh.indices.len());
    let old = std::mem::take(&mut mesh.indices);
    let mut mid = |mesh: &mut MeshArrays, a: i32, b: i32| -> i32 {
        let key = (a.min(b), a.max(b));
        if let Some(&v) = edge_vertex.get(&key) {
            return v;
        }
        let (ia, ib) = (a as usize, b as usize);
        let (pa, pb) = (mesh.vertices[ia], mesh.vertices[ib]);
        let (na, nb) = (mesh.normals[ia], mesh.normals[ib]);
        let m = (pa + pb) * 0.5;
        let onto_a = m - na * (m - pa).dot(na);
        let onto_b = m - nb * (m - pb).dot(nb);
        let p = m * (1.0 - PHONG_ALPHA) + (onto_a + onto_b) * (0.5 * PHONG_ALPHA);
        let n = na + nb;
        let n = if n.length_squared() > 0.0 {
            n.normalized()
        } else {
            p.normalized()
        };
        let (ca, cb) = (mesh.colours[ia], mesh.colours[ib]);
        let v = mesh.vertices.len() as i32;
        mesh.vertices.push(p);
        mesh.normals.push(n);
        mesh.colours.push(Color::from_rgba(
            0.5 * (ca.r + cb.r),
            0.5 * (ca.g + cb.g),
            0.5 * (ca.b + cb.b),
            0.5 * (ca.a + cb.a),
        ));
        mesh.elevations
            .push((mesh.elevations[ia] + mesh.elevations[ib]) * 0.5);
        edge_vertex.insert(key, v);
        v
    };
    let mut indices = Vec::with_capacity(old.len() * 4);
    for t in old.chunks_exact(3) {
        let [a, b, c] = [t[0], t[1], t[2]];
        let (ab, bc, ca) = (mid(mesh, a, b), mid(mesh, b, c), mid(mesh, c, a));
        // The same winding as the triangle's.
        indices.extend_from_slice(&[a, ab, ca, ab, b, bc, ca, bc, c, ab, bc, ca]);
    }
    mesh.indices = indices;
}

/// Deep blue ocean to pale shelf, green lowland to brown highland to snow.
fn elevation_colour(e: f32) -> Color {
    let lerp = |a: [f32; 3], b: [f32; 3], t: f32| {
        let t = t.clamp(0.0, 1.0);
        Color::from_rgb(
            a[0] + (b[0] - a[0]) * t,
            a[1] + (b[1] - a[1]) * t,
            a[2] + (b[2] - a[2]) * t,
        )
    };
    if e < 0.0 {
        lerp([0.25, 0.55, 0.75], [0.03, 0.10, 0.30], -e / 6000.0)
    } else if e < 1500.0 {
        lerp([0.30, 0.55, 0.25], [0.55, 0.50, 0.30], e / 1500.0)
    } else if e < 4000.0 {
        lerp(
            [0.55, 0.50, 0.30],
            [0.45, 0.35, 0.25],
            (e - 1500.0) / 2500.0,
        )
    } else {
        lerp(
            [0.45, 0.35, 0.25],
            [0.95, 0.95, 0.97],
            (e - 4000.0) / 2000.0,
        )
    }
}
