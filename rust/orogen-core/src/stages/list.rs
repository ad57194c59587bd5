//! The one list of stages. Each line makes a stage kind a recipe entry (`Stage`) and, for
//! every kind but the loop itself, a process a `TimeLoop` can run (`Process`): adding a
//! stage is a new module plus one line here.

use serde::{Deserialize, Serialize};

use crate::error::Result;
use crate::schema::ParamInfo;
use crate::stages::hydraulic::HydraulicParams;
use crate::stages::hydrology::HydrologyParams;
use crate::stages::kind::{drive, Env, LoopProcess, StageKind, StageRun};
use crate::stages::layered_thermal::LayeredThermalParams;
use crate::stages::stream_power::StreamPowerParams;
use crate::stages::thermal::ThermalParams;
use crate::stages::time_loop::TimeLoopParams;
use crate::stages::wind::WindParams;
use crate::world::World;

use crate::stages::context::StageContext;

/// Generates `Process` (the listed kinds) and `Stage` (the listed kinds plus `TimeLoop`),
/// with their names, schema, defaults, validation and dispatch.
macro_rules! stage_list {
    ($( $(#[$doc:meta])* $name:ident($ty:ty), )*) => {
        /// A process inside a `TimeLoop`: any stage but a loop.
        #[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
        pub enum Process {
            $( $(#[$doc])* $name($ty), )*
        }

        /// One stage of a recipe.
        #[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
        pub enum Stage {
            $( $(#[$doc])* $name($ty), )*
            /// Several processes in one time loop: all every step, or one drawn by
            /// proportions (the thesis's mixing).
            TimeLoop(TimeLoopParams<Process>),
        }

        impl LoopProcess for Process {
            fn name(&self) -> &'static str {
                match self { $( Process::$name(_) => stringify!($name), )* }
            }

            fn validate(&self, field: &str) -> Result<()> {
                match self { $( Process::$name(p) => p.validate(field), )* }
            }

            fn start(&self, world: &World, env: &Env) -> Result<Box<dyn StageRun>> {
                match self { $( Process::$name(p) => p.start(world, env), )* }
            }

            fn bytes_per_cell(&self) -> u64 {
                match self { $( Process::$name(p) => p.bytes_per_cell(), )* }
            }
        }

        impl Stage {
            /// Every stage's name, in schema order.
            pub const NAMES: &'static [&'static str] = &[$( stringify!($name), )* "TimeLoop"];

            /// The stage's name as shown in progress reports and `bake.json`.
            pub fn name(&self) -> &'static str {
                match self {
                    $( Stage::$name(_) => stringify!($name), )*
                    Stage::TimeLoop(_) => "TimeLoop",
                }
            }

            /// The scalar parameters of the stage called `name` (empty for an unknown name).
            pub fn describe(name: &str) -> &'static [ParamInfo] {
                match name {
                    $( stringify!($name) => <$ty as StageKind>::describe(), )*
                    "TimeLoop" => <TimeLoopParams<Process> as StageKind>::describe(),
                    _ => &[],
                }
            }

            /// A stage with default parameters, by name.
            pub fn default_named(name: &str) -> Option<Stage> {
                match name {
                    $( stringify!($name) => Some(Stage::$name(Default::default())), )*
                    "TimeLoop" => Some(Stage::TimeLoop(Default::default())),
                    _ => None,
                }
            }

            /// The stage's parameters.
            /// True when the stage can run on a Graph domain: `StreamPower`, `Thermal`,
            /// `Hydrology` (which leaves the graph's maps to the end), and `TimeLoop`s of
            /// only those.
            pub fn runs_on_graph(&self) -> bool {
                match self {
                    Stage::TimeLoop(l) => l.processes.iter().all(|p| {
                        matches!(
                            p,
                            Process::StreamPower(_) | Process::Thermal(_) | Process::Hydrology(_)
                        )
                    }),
                    s => matches!(
                        s,
                        Stage::StreamPower(_) | Stage::Thermal(_) | Stage::Hydrology(_)
                    ),
                }
            }

            /// The first `StreamPower` stage's parameters (inside a `TimeLoop` too).
            pub fn stream_power(&self) -> Option<&StreamPowerParams> {
                match self {
                    Stage::StreamPower(p) => Some(p),
                    Stage::TimeLoop(l) => l.processes.iter().find_map(|p| match p {
                        Process::StreamPower(p) => Some(p),
                        _ => None,
                    }),
                    _ => None,
                }
            }

            /// Every `StreamPower` stage's or process's parameters, to change them.
            pub fn stream_power_mut(&mut self) -> Vec<&mut StreamPowerParams> {
                match self {
                    Stage::StreamPower(p) => vec![p],
                    Stage::TimeLoop(l) => l
                        .processes
                        .iter_mut()
                        .filter_map(|p| match p {
                            Process::StreamPower(p) => Some(p),
                            _ => None,
                        })
                        .collect(),
                    _ => Vec::new(),
                }
            }

            pub fn kind(&self) -> &dyn StageKind {
                match self {
                    $( Stage::$name(p) => p, )*
                    Stage::TimeLoop(p) => p,
                }
            }
        }
    };
}

stage_list! {
    /// Stream-power fluvial erosion under uplift, with lake routing (Cordonnier 2016).
    StreamPower(StreamPowerParams),
    /// Thermal erosion: slopes relax to their talus angle.
    Thermal(ThermalParams),
    /// Route water only; writes the hydrology maps without changing a height.
    Hydrology(HydrologyParams),
    /// Pipe-model water erosion over layered rock (Mei 2007, thesis §4.3.2).
    Hydraulic(HydraulicParams),
    /// Thermal erosion over layered rock (Olsen 2004, thesis §4.3.1).
    LayeredThermal(LayeredThermalParams),
    /// Wind erosion over layered rock (thesis §4.3.3).
    Wind(WindParams),
}

impl Stage {
    /// Checks the stage's parameters; `prefix` is e.g. `stages[2]`.
    pub fn validate(&self, prefix: &str) -> Result<()> {
        self.kind().validate(&format!("{prefix}.{}", self.name()))
    }

    /// Runs the stage on its own over `world`, reporting through `ctx`.
    pub fn run(&self, world: &mut World, ctx: &mut StageContext) -> Result<()> {
        drive(self.kind(), world, ctx)
    }
}
