//! `orogen`: bake Orogen recipes from the command line.
//!
//! ```text
//! orogen bake [RECIPE] [--out DIR] [--set PATH=VALUE]... [--threads N] [--quiet]
//!             [--target maps|terrain3d|hterrain] [--region-size N] [--device cpu|gpu|auto]
//!             [--tiles NxM]
//! orogen recipe default
//! orogen materials
//! orogen info FILE [--size W,H]
//! ```
//!
//! Exit codes: 0 success, 1 runtime failure (a stage failed, the run was cancelled,
//! writing failed), 2 usage or bad input (arguments, recipe, input files, output folder).

#[cfg(feature = "mpi")]
mod mpi_comm;
mod progress;
mod tiled;

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use clap::{Parser, Subcommand};
use orogen_core::recipe::Device;
use orogen_core::stages::Accelerator;
use orogen_core::{OrogenError, Recipe};

/// Most worker threads `--threads` accepts: beyond a few per core they only add overhead
/// (4096 threads made a 33² bake take a minute), and each one costs a stack.
const MAX_THREADS: usize = 256;

/// Set by Ctrl-C (or SIGTERM); the runner stops within one step and nothing is written.
static CANCEL: AtomicBool = AtomicBool::new(false);

/// True while the outputs are being written (they replace the output folder in one step,
/// so a stop at any moment leaves the earlier bake or the new one, whole).
static WRITING: AtomicBool = AtomicBool::new(false);

#[derive(Parser, Debug)]
#[command(
    name = "orogen",
    version,
    about = "Grow terrain the way geology does: bake Orogen recipes to height, flow and mask maps.",
    after_help = "Exit codes: 0 success, 1 runtime failure, 2 usage or bad input."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Run a recipe and write its maps (height.exr/.png/.r16, preview.png, flow maps, bake.json).
    Bake(BakeArgs),
    /// Print a built-in recipe (RON) by name: `orogen recipe default`, `orogen recipe
    /// coupled`; `orogen recipe` lists them.
    Recipe {
        /// The built-in recipe's name; omit it to list them.
        name: Option<String>,
    },
    /// Print the built-in materials, and the fields of a material, the strata and a strata
    /// layer with their units and ranges (the same descriptions the Godot dock shows).
    Materials,
    /// Write Orogen's eight default ground textures (rock, cliff, scree, soil, grass,
    /// dry grass, sand, snow) as tileable PNG files: `<material>_albedo_height.png` (sRGB
    /// albedo, height in alpha) and `<material>_normal_roughness.png`.
    Textures {
        /// Output folder, created if missing.
        #[arg(long, short, value_name = "DIR", default_value = "textures")]
        out: PathBuf,
        /// Pixels per side, a multiple of 32 from 32 to 4096.
        #[arg(long, value_name = "N", default_value_t = 512)]
        size: usize,
    },
    /// Print a map file's size, format and value range (EXR, PNG, R16, raw f32).
    Info {
        /// The map file (.exr, .png, .r16, .raw/.r32/.f32).
        file: PathBuf,
        /// Size of a headerless raw file, `W,H` (e.g. 1025,1025).
        #[arg(long, value_name = "W,H", value_parser = parse_size)]
        size: Option<(u32, u32)>,
    },
}

#[derive(clap::Args, Debug)]
struct BakeArgs {
    /// Recipe file (RON), or the name of a built-in recipe (`orogen recipe` lists them).
    /// Default: the built-in `default` recipe.
    recipe: Option<PathBuf>,
    /// Output folder, created if missing.
    #[arg(long, short, value_name = "DIR", default_value = "out")]
    out: PathBuf,
    /// Override a recipe value, e.g. `--set seed=7`, `--set size=(513,513)`,
    /// `--set stages[0].iterations=20`. VALUE is RON. Repeatable.
    #[arg(long = "set", value_name = "PATH=VALUE")]
    set: Vec<String>,
    /// Worker threads, 1 to 256 (default: all cores). Output is identical for any count.
    #[arg(long, value_name = "N")]
    threads: Option<usize>,
    /// Refuse a bake whose estimated peak memory exceeds this (e.g. `8G`, `512M`, or
    /// bytes). Default: the memory available to the process.
    #[arg(long, value_name = "SIZE", value_parser = parse_bytes)]
    max_memory: Option<u64>,
    /// No progress output.
    #[arg(long, short)]
    quiet: bool,
    /// What to write: Orogen's maps (default), region tiles for Terrain3D, or a 2ⁿ+1
    /// height, splat and colour map for HTerrain. Each folder gets a README.txt with the
    /// import steps.
    #[arg(long, value_enum, default_value_t = TargetArg::Maps)]
    target: TargetArg,
    /// Terrain3D region size, 64 to 2048, a power of two (default 256). Only with
    /// `--target terrain3d`.
    #[arg(long, value_name = "N")]
    region_size: Option<usize>,
    /// Where the StreamPower stages run, overriding the recipe's `device`: `cpu`, `gpu`
    /// (every one on a GPU through Vulkan, Metal or DX12; an error if there is none, or
    /// for a stage the GPU step does not run) or `auto` (a GPU for the stages it runs, if
    /// one is found, else the CPU). bake.json says which ran each stage. Without a GPU,
    /// Mesa's software Vulkan (lavapipe) runs it, no faster than the CPU;
    /// OROGEN_GPU_DISABLE=1 hides every GPU.
    #[arg(long, value_enum, value_name = "DEVICE")]
    device: Option<DeviceArg>,
    /// Run the recipe cut into COLUMNSxROWS tiles (e.g. 2x2), one rank each, exchanging
    /// only what crosses tile edges. Under `mpirun -np N` (N = the tiles; an orogen built
    /// with the `mpi` feature) each MPI rank runs one tile; otherwise the tiles run on
    /// threads. Each rank writes its tiles (height_rR_cC.exr) into the output folder; with
    /// --merge, rank 0 writes the whole-map bake's files instead, the same bytes. Takes
    /// StreamPower and Thermal stages (and Hydrology with --merge); others are refused.
    #[arg(long, value_name = "NxM")]
    tiles: Option<String>,
    /// With --tiles: gather the whole maps at rank 0 and write the whole-map bake's files
    /// (byte for byte), instead of one file per tile; needed for hydrology maps, river
    /// curves and --target terrain3d or hterrain. Rank 0 then holds the whole maps.
    #[arg(long, requires = "tiles")]
    merge: bool,
}

#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
enum DeviceArg {
    /// The CPU, all cores (the recipe's default).
    Cpu,
    /// A GPU for every StreamPower, Thermal and Hydraulic stage.
    Gpu,
    /// A GPU for the StreamPower, Thermal and Hydraulic stages it runs when one is found,
    /// else the CPU.
    Auto,
}

impl DeviceArg {
    fn device(self) -> Device {
        match self {
            DeviceArg::Cpu => Device::Cpu,
            DeviceArg::Gpu => Device::Gpu,
            DeviceArg::Auto => Device::Auto,
        }
    }
}

/// The GPU a recipe's `device` asks for: none for `Cpu`; for `Gpu` the adapter or an
/// error naming `device` (exit 2); for `Auto` the adapter, or none and why.
fn open_gpu(device: Device) -> Result<(Option<GpuBackend>, String), Failure> {
    if device == Device::Cpu {
        return Ok((None, String::new()));
    }
    let found = if device == Device::Auto {
        GpuBackend::for_auto()
    } else {
        GpuBackend::new()
    };
    match found {
        Ok(gpu) => Ok((Some(gpu), String::new())),
        Err(e) if device == Device::Gpu => Err(Failure::from_core(e)),
        Err(OrogenError::InvalidParameter { reason, .. }) => Ok((None, reason)),
        Err(e) => Ok((None, e.to_string())),
    }
}

#[cfg(feature = "gpu")]
use orogen_gpu::GpuBackend;

/// Without the `gpu` feature: no GPU, ever.
#[cfg(not(feature = "gpu"))]
struct GpuBackend;

#[cfg(not(feature = "gpu"))]
impl GpuBackend {
    fn new() -> orogen_core::Result<Self> {
        Err(OrogenError::invalid(
            "device",
            "this orogen was built without the `gpu` feature",
        ))
    }

    fn for_auto() -> orogen_core::Result<Self> {
        Self::new()
    }
}

#[cfg(not(feature = "gpu"))]
impl orogen_core::stages::Accelerator for GpuBackend {
    fn describe(&self) -> String {
        unreachable!("GpuBackend::new never succeeds without the gpu feature")
    }

    fn supports(
        &self,
        _: &orogen_core::eroders::stream_power::Params,
        _: &orogen_core::flow::OutletParams,
        _: &str,
    ) -> orogen_core::Result<()> {
        unreachable!("GpuBackend::new never succeeds without the gpu feature")
    }

    fn stream_power(
        &self,
        _: orogen_core::Grid,
        _: &orogen_core::flow::OutletParams,
        _: &orogen_core::eroders::stream_power::Params,
        _: orogen_core::eroders::stream_power::Inputs,
        _: &str,
    ) -> orogen_core::Result<Box<dyn orogen_core::stages::StreamPowerStepper>> {
        unreachable!("GpuBackend::new never succeeds without the gpu feature")
    }
}

#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
enum TargetArg {
    /// height.exr/.png/.r16, preview.png, every map, bake.json.
    Maps,
    /// height_X_Z.exr, control_X_Z.exr, color_X_Z.png tiles of one region each.
    Terrain3d,
    /// height.exr, splat.png, color.png on a 2ⁿ+1 square.
    Hterrain,
}

/// The bake target of the arguments; errors name `--region-size`.
fn target_of(args: &BakeArgs) -> Result<orogen_core::bake::Target, Failure> {
    use orogen_core::bake::{export_terrain3d, Target};
    match (args.target, args.region_size) {
        (TargetArg::Terrain3d, size) => {
            let region_size = size.unwrap_or(export_terrain3d::DEFAULT_REGION_SIZE);
            export_terrain3d::check_region_size(region_size).map_err(Failure::from_core)?;
            Ok(Target::Terrain3d { region_size })
        }
        (_, Some(n)) => Err(Failure::usage(format!(
            "--region-size {n} applies only to --target terrain3d"
        ))),
        (TargetArg::Maps, None) => Ok(Target::Maps),
        (TargetArg::Hterrain, None) => Ok(Target::HTerrain),
    }
}

/// `8G`, `512M`, `64K` (powers of 1024) or a number of bytes.
fn parse_bytes(text: &str) -> Result<u64, String> {
    let t = text.trim();
    let (digits, unit) = match t
        .char_indices()
        .find(|(_, c)| !c.is_ascii_digit() && *c != '.')
    {
        Some((i, _)) => (&t[..i], t[i..].trim().to_ascii_uppercase()),
        None => (t, String::new()),
    };
    let shift = match unit.trim_end_matches("IB").trim_end_matches('B') {
        "" => 0,
        "K" => 10,
        "M" => 20,
        "G" => 30,
        "T" => 40,
        _ => return Err(format!("unknown unit in `{text}`; use K, M, G or T")),
    };
    let value: f64 = digits
        .parse()
        .map_err(|_| format!("`{text}` is not a size such as 8G or 512M"))?;
    let bytes = value * (1u64 << shift) as f64;
    if !(bytes >= 1.0 && bytes < u64::MAX as f64) {
        return Err(format!("`{text}` is not a usable size"));
    }
    Ok(bytes as u64)
}

/// A failure with its exit code.
struct Failure {
    code: u8,
    message: String,
}

impl Failure {
    fn usage(message: impl Into<String>) -> Self {
        Failure {
            code: 2,
            message: message.into(),
        }
    }

    fn runtime(message: impl Into<String>) -> Self {
        Failure {
            code: 1,
            message: message.into(),
        }
    }

    /// Bad input (recipe, values, input files) is 2; everything else is 1.
    fn from_core(e: OrogenError) -> Self {
        let code = match &e {
            OrogenError::RecipeSyntax { .. }
            | OrogenError::InvalidParameter { .. }
            | OrogenError::Override { .. }
            | OrogenError::BadFile { .. }
            | OrogenError::ShapeMismatch { .. } => 2,
            OrogenError::Io { action, .. }
                if action.contains("read") || action.contains("open") =>
            {
                2
            }
            _ => 1,
        };
        Failure {
            code,
            message: e.to_string(),
        }
    }
}

fn parse_size(s: &str) -> Result<(u32, u32), String> {
    let (w, h) = s
        .split_once([',', 'x'])
        .ok_or_else(|| format!("`{s}` is not W,H (e.g. 1025,1025)"))?;
    let side = |t: &str| {
        t.trim()
            .parse::<u32>()
            .map_err(|_| format!("`{}` in `{s}` is not a whole number", t.trim()))
    };
    Ok((side(w)?, side(h)?))
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Bake(args) => bake(args),
        Command::Recipe { name } => print_recipe(name.as_deref()),
        Command::Materials => {
            print_materials();
            Ok(())
        }
        Command::Info { file, size } => info(&file, size),
        Command::Textures { out, size } => {
            orogen_core::bake::textures::write_ground_textures(&out, size)
                .map(|files| println!("wrote {} textures into {}", files.len(), out.display()))
                .map_err(Failure::from_core)
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(f) => {
            eprintln!("error: {}", f.message);
            ExitCode::from(f.code)
        }
    }
}

/// Prints the built-in recipe `name`, or lists them all.
fn print_recipe(name: Option<&str>) -> Result<(), Failure> {
    use orogen_core::recipe::BUILT_IN;
    match name {
        None => {
            for (n, what, _) in BUILT_IN {
                println!("{n:10} {what}");
            }
            Ok(())
        }
        Some(name) => match BUILT_IN.iter().find(|(n, _, _)| *n == name) {
            Some((_, _, text)) => {
                print!("{text}");
                Ok(())
            }
            None => Err(Failure::usage(format!(
                "no built-in recipe `{}`; built-in: {}",
                orogen_core::error::shorten(name),
                BUILT_IN.iter().map(|b| b.0).collect::<Vec<_>>().join(", ")
            ))),
        },
    }
}

/// Prints the built-in materials and the material, strata and layer fields.
fn print_materials() {
    use orogen_core::schema::{FieldInfo, FieldKind};
    use orogen_core::stages::strata::{
        built_in_materials, MATERIAL_FIELDS, STRATA_FIELDS, STRATUM_FIELDS,
    };
    println!("Built-in materials (usable by name in `strata`, or redefined in `materials`):");
    println!(
        "  {:10} {:>6} {:>8} {:>9} {:>5} {:>6}  colour",
        "name", "talus°", "thermal", "dissolve", "wind", "erod."
    );
    for m in built_in_materials() {
        println!(
            "  {:10} {:>6} {:>8} {:>9} {:>5} {:>6}  ({}, {}, {})",
            m.name,
            m.talus_deg,
            m.thermal_susceptibility,
            m.dissolubility,
            m.wind_resistance,
            m.erodibility,
            m.colour.0,
            m.colour.1,
            m.colour.2
        );
    }
    let section = |title: &str, fields: &[FieldInfo]| {
        println!("\n{title}:");
        for f in fields {
            let p = &f.param;
            let range = match f.kind {
                FieldKind::Number | FieldKind::Integer | FieldKind::OptionalNumber => {
                    format!("{} .. {} {}", p.min, p.max, p.unit)
                }
                FieldKind::ScalarSource => format!("≥ {} {}", p.min, p.unit),
                FieldKind::Colour => format!("(r, g, b) 0..255 {}", p.unit),
                FieldKind::MaterialName => "material name".to_string(),
                FieldKind::Text => "text".to_string(),
                FieldKind::Ron => "RON".to_string(),
            };
            println!("  {:24} {:22} {}", p.name, range.trim_end(), p.doc);
        }
    };
    section("materials: [( … )]", MATERIAL_FIELDS);
    section("strata: ( … )", STRATA_FIELDS);
    section("strata layers: [(material, thickness)]", STRATUM_FIELDS);
}

/// Loads the recipe (a file, a built-in name, or the default), applies `--set`
/// overrides, validates.
fn load_recipe(args: &BakeArgs) -> Result<(Recipe, PathBuf), Failure> {
    // A name that is not a file on disk picks a built-in recipe.
    let built_in = args
        .recipe
        .as_ref()
        .filter(|p| !p.exists())
        .and_then(|p| p.to_str())
        .and_then(Recipe::built_in);
    let (mut recipe, base_dir) = match (&args.recipe, built_in) {
        (_, Some(r)) => (r, PathBuf::from(".")),
        (Some(path), None) => {
            let text =
                Recipe::read_text(path).map_err(|e| Failure::usage(format!("recipe: {e}")))?;
            let recipe = Recipe::from_ron_str(&text, &path.display().to_string())
                .map_err(|e| Failure::from_core(name_field_in_syntax_error(e, &text)))?;
            let base = match path.parent() {
                Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
                _ => PathBuf::from("."),
            };
            (recipe, base)
        }
        (None, None) => (Recipe::default_recipe(), PathBuf::from(".")),
    };
    for assignment in &args.set {
        recipe = recipe
            .apply_override(assignment)
            .map_err(Failure::from_core)?;
    }
    recipe.validate().map_err(Failure::from_core)?;
    // A missing file is named with its field now, not once the run reaches it.
    recipe.check_files(&base_dir).map_err(Failure::from_core)?;
    Ok((recipe, base_dir))
}

/// The name of the last `field:` written before `(line, column)` (1-based) in `text`.
fn field_before(text: &str, line: usize, column: usize) -> Option<String> {
    let mut offset = 0;
    for (i, l) in text.split_inclusive('\n').enumerate() {
        if i + 1 == line {
            offset += l
                .char_indices()
                .nth(column.saturating_sub(1))
                .map_or(l.len(), |(b, _)| b);
            break;
        }
        offset += l.len();
    }
    let prefix = text.get(..offset.min(text.len()))?;
    let bytes = prefix.as_bytes();
    let mut i = bytes.len();
    while i > 0 {
        i -= 1;
        if bytes[i] != b':' || (i + 1 < bytes.len() && bytes[i + 1] == b':') {
            continue;
        }
        let mut end = i;
        while end > 0 && bytes[end - 1].is_ascii_whitespace() {
            end -= 1;
        }
        let mut start = end;
        while start > 0 && (bytes[start - 1].is_ascii_alphanumeric() || bytes[start - 1] == b'_') {
            start -= 1;
        }
        if start < end {
            return Some(prefix[start..end].to_string());
        }
    }
    None
}

/// Adds the field name to a RON syntax error that names none (e.g. `Expected float`
/// for `cell_size: "ten"`).
fn name_field_in_syntax_error(e: OrogenError, text: &str) -> OrogenError {
    match e {
        OrogenError::RecipeSyntax {
            origin,
            message,
            line,
            column,
        } if !message.contains('`') => {
            let message = match field_before(text, line, column) {
                Some(field) => format!("{message} for field `{field}`"),
                None => message,
            };
            OrogenError::RecipeSyntax {
                origin,
                message,
                line,
                column,
            }
        }
        other => other,
    }
}

/// Creates the output folder and checks a file can be created in it, before any work.
fn prepare_out_dir(dir: &Path) -> Result<(), Failure> {
    let usage = |e: OrogenError| Failure::usage(format!("output folder: {e}"));
    orogen_core::bake::folder::check(dir).map_err(usage)?;
    orogen_core::bake::ensure_dir(dir).map_err(usage)?;
    let probe = dir.join(format!(".orogen-write-test-{}", std::process::id()));
    match std::fs::File::create(&probe) {
        Ok(_) => {
            let _ = std::fs::remove_file(&probe);
            Ok(())
        }
        Err(e) => Err(Failure::usage(format!(
            "output folder `{}` is not writable: {e}",
            dir.display()
        ))),
    }
}

fn bake(args: BakeArgs) -> Result<(), Failure> {
    let start = Instant::now();
    if let Some(n) = args.threads {
        if !(1..=MAX_THREADS).contains(&n) {
            return Err(Failure::usage(format!(
                "--threads must be between 1 and {MAX_THREADS}, got {n}"
            )));
        }
        rayon::ThreadPoolBuilder::new()
            .num_threads(n)
            .build_global()
            .map_err(|e| Failure::runtime(format!("cannot start {n} threads: {e}")))?;
    }
    let target = target_of(&args)?;
    let (mut recipe, base_dir) = load_recipe(&args)?;
    if let Some(d) = args.device {
        recipe.device = d.device();
    }
    // No GPU under `device: Gpu`, or a stage it does not run, fails here, before any work.
    let (gpu, missing) = open_gpu(recipe.device)?;
    let accelerator = gpu.as_ref().map(|g| g as &dyn Accelerator);
    orogen_core::runner::check_devices(
        &recipe,
        orogen_core::stages::Devices {
            device: recipe.device,
            accelerator,
            missing: &missing,
        },
    )
    .map_err(Failure::from_core)?;
    // Refuse a size or region size the target cannot hold before the run, where the
    // recipe gives the size (a heightmap source is checked again once it is read).
    if let Ok(grid) = recipe.grid() {
        target.check(grid).map_err(Failure::from_core)?;
    }
    // The whole map's estimate; a tiled run's ranks each hold their tile (checked once
    // the ranks are known, below), unless --merge gathers the whole maps at rank 0.
    if args.tiles.is_none() || args.merge {
        orogen_core::runner::check_memory_in(&recipe, args.max_memory, &base_dir)
            .map_err(Failure::from_core)?;
    }
    let tiles = match &args.tiles {
        Some(spec) => Some(tiles_of(&recipe, spec, args.merge)?),
        None => None,
    };
    // HTerrain's maps are single whole-map files: they need --merge.
    if tiles.is_some() && !args.merge && target == orogen_core::bake::Target::HTerrain {
        return Err(Failure::usage(
            "--target hterrain: a tiled bake without --merge writes its tiles as Orogen's \
             maps or Terrain3D regions; HTerrain's maps are whole-map files, so add --merge"
                .to_string(),
        ));
    }
    // Under mpirun: MPI started, and its ranks checked against the tiles.
    let mpi = start_mpi(tiles.as_ref())?;
    // Without --merge no process holds a whole map: the estimate is of the tiles this
    // process holds (all of them over threads; under MPI its own, times the ranks Open MPI
    // started on this machine, which share its memory), with their halos.
    if let (Some(layout), false) = (&tiles, args.merge) {
        let largest = (0..layout.count())
            .map(|r| layout.tile(r).halo.len() as u64)
            .max()
            .unwrap_or(0);
        let (here, what) = match &mpi {
            Some(_) => {
                let local = std::env::var("OMPI_COMM_WORLD_LOCAL_SIZE")
                    .ok()
                    .and_then(|v| v.parse::<u64>().ok())
                    .unwrap_or(1);
                (
                    local,
                    format!("{local} MPI ranks on this machine, one tile each,"),
                )
            }
            None => (
                layout.count() as u64,
                format!("{} tiles on threads of one process", layout.count()),
            ),
        };
        orogen_core::runner::check_tile_memory(
            &recipe,
            args.max_memory,
            &base_dir,
            largest.saturating_mul(here),
            &what,
        )
        .map_err(Failure::from_core)?;
    }
    if mpi.as_ref().is_none_or(|m| m.rank() == 0) {
        prepare_out_dir(&args.out)?;
    }

    // Ctrl-C, SIGTERM and SIGHUP all land here.
    on_interrupt(|| {
        let writing = WRITING.load(Ordering::SeqCst);
        if CANCEL.swap(true, Ordering::SeqCst) {
            if writing {
                eprintln!(
                    "\ninterrupted again: stopping now; the output folder holds the earlier \
                     bake or the new one, whole (a later bake cleans up what is left beside it)"
                );
            } else {
                eprintln!("\ninterrupted again: stopping now (no output was replaced)");
            }
            std::process::exit(130);
        }
        if writing {
            eprintln!("\nfinishing writing the outputs (press Ctrl-C again to stop now)…");
        } else {
            eprintln!("\ncancelling after the current step (press Ctrl-C again to stop now)…");
        }
    });

    let mut reporter = progress::Reporter::new(std::io::stderr().is_terminal(), args.quiet);
    let run = match tiles {
        Some(layout) => {
            let how = Tiled {
                recipe: &recipe,
                base_dir: &base_dir,
                layout: &layout,
                merge: args.merge,
                terrain3d: match target {
                    orogen_core::bake::Target::Terrain3d { region_size } => Some(region_size),
                    _ => None,
                },
                out: &args.out,
                recipe_path: args.recipe.as_deref(),
            };
            match run_tiled(&how, mpi)? {
                TiledDone::Merged(output) => Ok(*output),
                TiledDone::Written(files) => {
                    if !args.quiet {
                        println!("wrote {} files to {}:", files.len(), args.out.display());
                        for f in &files {
                            let name = f.file_name().map(|n| n.to_string_lossy());
                            println!("  {}", name.unwrap_or_default());
                        }
                        println!("total {:.2} s", start.elapsed().as_secs_f64());
                    }
                    return Ok(());
                }
                // Another MPI rank than 0: its tile is done and rank 0 writes.
                TiledDone::Nothing => return Ok(()),
            }
        }
        // The reporter shows progress only: no step's world is needed before the end, so
        // a stage on the GPU reads nothing back until then.
        None => orogen_core::runner::run_recipe_watched(
            &recipe,
            &base_dir,
            &CANCEL,
            &mut |e| reporter.event(e),
            orogen_core::stages::Devices {
                device: recipe.device,
                accelerator,
                missing: &missing,
            },
            &mut || false,
        ),
    };
    let output = match run {
        Ok(o) => o,
        Err(OrogenError::Cancelled) => {
            reporter.abandon();
            return Err(Failure::runtime("cancelled; no file was written"));
        }
        Err(e) => {
            reporter.abandon();
            return Err(Failure::from_core(e));
        }
    };

    WRITING.store(true, Ordering::SeqCst);
    let files = orogen_core::bake::write_bake_target(
        &args.out,
        target,
        &recipe,
        &output.world,
        &output.timings,
        args.recipe.as_deref(),
    )
    .map_err(|e| {
        let code = match e {
            OrogenError::InvalidParameter { .. } => 2,
            _ => 1,
        };
        Failure {
            code,
            message: format!("{e} (the earlier outputs are unchanged)"),
        }
    })?;
    WRITING.store(false, Ordering::SeqCst);
    for left in orogen_core::bake::folder::leftovers(&args.out) {
        eprintln!(
            "warning: the earlier bake could not be deleted whole and is left at {} \
             (a file in it is locked or read-only); delete it by hand",
            left.display()
        );
    }

    if !args.quiet {
        let grid = output.world.grid();
        let (lo, hi) = output.world.height.min_max();
        println!("wrote {} files to {}:", files.len(), args.out.display());
        for f in &files {
            let name = f
                .file_name()
                .map(|n| n.to_string_lossy())
                .unwrap_or_default();
            println!("  {name}");
        }
        let cells = if grid.is_square() {
            format!("{}", grid.cell_size)
        } else {
            format!("{} x {}", grid.dx(), grid.dy())
        };
        println!(
            "size {}x{} cells of {} m, height {:.2} .. {:.2} m, total {:.2} s",
            grid.width,
            grid.height,
            cells,
            lo,
            hi,
            start.elapsed().as_secs_f64()
        );
        // Where stream power ran, when the recipe asked for a device.
        if recipe.device != Device::Cpu {
            for t in output
                .timings
                .iter()
                .filter(|t| t.stage != "initial terrain")
            {
                println!("{}: {}", t.stage, t.device);
            }
        }
        // What left the map (open borders), stage by stage.
        for t in &output.timings {
            for (name, value) in &t.figures {
                println!("{}: {name} {value:.6}", t.stage);
            }
        }
    }
    Ok(())
}

/// The tiling `--tiles` asks for over the recipe's grid, after checking that the recipe's
/// stages tile; errors name the flag or the stage's field (exit 2).
fn tiles_of(
    recipe: &Recipe,
    spec: &str,
    merge: bool,
) -> Result<orogen_core::tiles::TileLayout, Failure> {
    let grid = recipe.grid().map_err(|e| {
        Failure::usage(format!(
            "--tiles needs a recipe whose size is known before the run: {e}"
        ))
    })?;
    let layout = tiled::layout(grid, spec).map_err(Failure::from_core)?;
    tiled::check_recipe(recipe, merge).map_err(Failure::from_core)?;
    Ok(layout)
}

/// This process's place in an MPI run: `None` without one (not built with the `mpi`
/// feature, not started by mpirun, or by `mpirun -np 1`: the tiles then run on threads).
#[cfg(feature = "mpi")]
type Mpi = (mpi::environment::Universe, mpi_comm::MpiComm);
#[cfg(not(feature = "mpi"))]
type Mpi = std::convert::Infallible;

trait MpiRank {
    fn rank(&self) -> usize;
}

#[cfg(feature = "mpi")]
impl MpiRank for Mpi {
    fn rank(&self) -> usize {
        use orogen_core::tiles::Comm;
        self.1.rank()
    }
}

#[cfg(not(feature = "mpi"))]
impl MpiRank for Mpi {
    fn rank(&self) -> usize {
        match *self {}
    }
}

/// Starts MPI for a tiled bake under an MPI launcher; errors (naming `--tiles`) when the
/// ranks are not one per tile.
#[cfg(feature = "mpi")]
fn start_mpi(tiles: Option<&orogen_core::tiles::TileLayout>) -> Result<Option<Mpi>, Failure> {
    use orogen_core::tiles::Comm;
    let Some(layout) = tiles else {
        return Ok(None);
    };
    if !mpi_comm::launched_by_mpi() {
        return Ok(None);
    }
    let universe = mpi::initialize()
        .ok_or_else(|| Failure::runtime("MPI is already initialized in this process"))?;
    let comm = mpi_comm::MpiComm::new(universe.world());
    if comm.size() == 1 {
        return Ok(None);
    }
    if comm.size() != layout.count() {
        let (nx, ny) = layout.shape();
        return Err(Failure::usage(format!(
            "--tiles {nx}x{ny} is {} tiles, but mpirun started {} ranks: start one rank per \
             tile (mpirun -np {})",
            layout.count(),
            comm.size(),
            layout.count()
        )));
    }
    Ok(Some((universe, comm)))
}

/// Without the `mpi` feature: threads, or an error under `mpirun -np N` with N > 1 (each
/// process would bake every tile and write the same folder).
#[cfg(not(feature = "mpi"))]
fn start_mpi(tiles: Option<&orogen_core::tiles::TileLayout>) -> Result<Option<Mpi>, Failure> {
    let ranks = ["OMPI_COMM_WORLD_SIZE", "PMI_SIZE"]
        .iter()
        .find_map(|v| std::env::var(v).ok())
        .and_then(|n| n.trim().parse::<usize>().ok())
        .unwrap_or(1);
    if tiles.is_some() && ranks > 1 {
        return Err(Failure::usage(format!(
            "--tiles under an MPI launcher ({ranks} ranks) needs an orogen built with the \
             `mpi` feature (cargo build -p orogen-cli --features mpi); this one would run \
             every tile in each of the {ranks} processes"
        )));
    }
    Ok(None)
}

/// What a tiled run is asked to do.
struct Tiled<'a> {
    recipe: &'a Recipe,
    base_dir: &'a Path,
    layout: &'a orogen_core::tiles::TileLayout,
    merge: bool,
    /// `--target terrain3d`'s region size.
    terrain3d: Option<usize>,
    out: &'a Path,
    recipe_path: Option<&'a Path>,
}

/// How a tiled run ended on this rank.
enum TiledDone {
    /// `--merge`, rank 0: the whole-map output, to write as a whole-map bake does.
    Merged(Box<orogen_core::runner::RunOutput>),
    /// Rank 0 wrote the tiles' folder: its files.
    Written(Vec<std::path::PathBuf>),
    /// Another MPI rank.
    Nothing,
}

/// One rank's whole tiled run: its tile's start world, the stages, and without `--merge`
/// its tiles written (rank 0 also `bake.json`, then the folder put in place).
fn run_rank_and_write<C: orogen_core::tiles::Comm>(
    comm: &mut C,
    shared: &tiled::Shared,
    how: &Tiled,
) -> orogen_core::Result<Option<TiledDone>> {
    let out = tiled::run_rank(comm, shared)?;
    if how.merge {
        return out
            .root
            .map(|root| tiled::finish(how.recipe, root).map(|o| TiledDone::Merged(Box::new(o))))
            .transpose();
    }
    let rank = comm.rank();
    let files = tiled::write_tiles(comm, shared, out, how.out, how.recipe_path)?;
    Ok((rank == 0).then_some(TiledDone::Written(files)))
}

/// A tiled run: every rank makes its own tile of the start world, then the stages over the
/// tiles (MPI ranks, or threads), then the outputs (see `tiled`). A rank that fails
/// mid-run under MPI stops every rank (`MPI_Abort`) after printing its error.
fn run_tiled(how: &Tiled, mpi: Option<Mpi>) -> Result<TiledDone, Failure> {
    #[allow(unused_mut)]
    let mut shared = tiled::Shared {
        recipe: how.recipe,
        base_dir: how.base_dir,
        layout: how.layout,
        transport: "threads",
        merge: how.merge,
        terrain3d: how.terrain3d.filter(|_| !how.merge),
        cancel: &CANCEL,
    };
    let done = match mpi {
        #[cfg(feature = "mpi")]
        Some((universe, mut comm)) => {
            use orogen_core::tiles::Comm;
            shared.transport = "mpi";
            match run_rank_and_write(&mut comm, &shared, how) {
                Ok(done) => {
                    // Every send completed, then MPI finalized.
                    drop(comm);
                    drop(universe);
                    done
                }
                Err(e) => {
                    let f = Failure::from_core(e);
                    let tile = how.layout.tile(comm.rank());
                    eprintln!(
                        "error: rank {} (tile column {}, row {}): {}",
                        tile.rank, tile.col, tile.row, f.message
                    );
                    comm.abort(f.code.into())
                }
            }
        }
        #[cfg(not(feature = "mpi"))]
        Some(never) => match never {},
        None => {
            let out = orogen_core::tiles::run_threads(how.layout.count(), |comm| {
                run_rank_and_write(comm, &shared, how)
            })
            .map_err(Failure::from_core)?;
            Some(
                out.into_iter()
                    .flatten()
                    .next()
                    .ok_or_else(|| Failure::runtime("tiled run: rank 0 returned no output"))?,
            )
        }
    };
    Ok(done.unwrap_or(TiledDone::Nothing))
}

fn info(file: &Path, size: Option<(u32, u32)>) -> Result<(), Failure> {
    let info = orogen_core::io::probe(file, size).map_err(Failure::from_core)?;
    println!("file:   {}", file.display());
    println!("format: {}", info.format);
    println!("size:   {} x {}", info.width, info.height);
    match info.range {
        Some((lo, hi)) => println!("range:  {lo} .. {hi}"),
        None => println!("range:  (colour image)"),
    }
    match (info.cell_size, info.cell_size_y) {
        (Some(dx), Some(dy)) => println!("cell size: {dx} x {dy} m (dx x dy)"),
        (Some(c), None) => println!("cell size: {c} m"),
        _ => {}
    }
    Ok(())
}

/// Runs `handler` on a thread of its own at each Ctrl-C, SIGTERM and SIGHUP: through ctrlc
/// (its `termination` feature), or on macOS through signal-hook's signal iterator.
fn on_interrupt(handler: impl Fn() + Send + 'static) {
    #[cfg(not(target_os = "macos"))]
    {
        let _ = ctrlc::set_handler(handler);
    }
    #[cfg(target_os = "macos")]
    {
        use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
        if let Ok(mut signals) = signal_hook::iterator::Signals::new([SIGINT, SIGTERM, SIGHUP]) {
            std::thread::spawn(move || {
                for _ in signals.forever() {
                    handler();
                }
            });
        }
    }
}
