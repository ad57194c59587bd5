//! The runs `device: Gpu | Auto` gives a `StreamPower` or `Thermal` stage: stepped by an
//! accelerator ([`AcceleratedRun`], [`AcceleratedThermal`]), or on the CPU with the reason
//! it is not ([`Noted`]). A `TimeLoop` steps the accelerated ones of its processes through
//! [`DeviceProcess`], the heights kept on the device between them. The switch itself and
//! the hook are in [`crate::stages::device`].

use crate::error::{OrogenError, Result};
use crate::stages::device::{
    DeviceProcess, HydrologyMapper, SharedHeights, StreamPowerStepper, ThermalStepper,
};
use crate::stages::hydrology::{insert_device_maps, write_hydrology_maps, HydrologyParams};
pub(crate) use crate::stages::kind::Noted;
use crate::stages::kind::StageRun;
use crate::world::World;

/// `after`, the heights an accelerator returned, copied into `world` (and returned, for
/// the caller to remember as what the device holds); an error naming `field` if their
/// count is not the world's.
pub(crate) fn take_heights(field: &str, after: Vec<f32>, world: &mut World) -> Result<Vec<f32>> {
    check_count(field, &after, world)?;
    world.height.data.copy_from_slice(&after);
    Ok(after)
}

/// An error naming `field` if `after`, heights an accelerator returned, are not one a
/// cell of `world`.
fn check_count(field: &str, after: &[f32], world: &World) -> Result<()> {
    if after.len() != world.height.data.len() {
        return Err(OrogenError::invalid(
            field,
            format!(
                "the GPU returned {} heights for {} cells",
                after.len(),
                world.height.data.len()
            ),
        ));
    }
    Ok(())
}

/// A `StreamPower` stage stepped by an accelerator: the world's heights are handed over
/// when they changed since the last step (a `TimeLoop`'s other processes), and read back
/// after every step, so progress, live views, cancel and `tolerance` work as on the CPU;
/// live painting steps it with [`StageRun::step_deferred`] and reads the heights back only
/// for the views it shows ([`StageRun::sync`]). The hydrology maps at the end are routed
/// on the accelerator (`mapper`) where it can, else on the CPU, from the final heights.
pub(crate) struct AcceleratedRun {
    pub stepper: Box<dyn StreamPowerStepper>,
    /// The routing of the maps at the end (`hydrology`) on the accelerator, if it can.
    pub mapper: Option<Box<dyn HydrologyMapper>>,
    pub dt: f64,
    pub tolerance: Option<f32>,
    pub hydrology: Option<HydrologyParams>,
    pub base_dir: std::path::PathBuf,
    pub field: String,
    pub device: String,
    /// The heights the stepper holds (empty before the first step).
    pub held: Vec<f32>,
    /// Steps run by `step_deferred` since the heights were last read back into the world.
    pub ahead: u32,
    /// The heights read back for a view since the last step (`shared_heights`), which
    /// `sync` takes rather than reading back again.
    pub viewed: Option<std::sync::Arc<Vec<f32>>>,
}

impl StageRun for AcceleratedRun {
    fn step(&mut self, world: &mut World) -> Result<bool> {
        self.sync(world)?;
        if self.held != world.height.data {
            self.stepper.set_heights(&world.height.data)?;
        }
        self.stepper.step(self.dt)?;
        let after = self.stepper.heights()?;
        let converged = match self.tolerance {
            Some(t) => {
                let change = after
                    .iter()
                    .zip(&world.height.data)
                    .map(|(a, b)| (a - b).abs())
                    .fold(0.0f32, f32::max);
                change < t
            }
            None => false,
        };
        self.held = take_heights(&self.field, after, world)?;
        Ok(converged)
    }

    fn step_deferred(&mut self, world: &mut World) -> Result<bool> {
        // While ahead, the world is the one last read back (the caller leaves it alone).
        if self.ahead == 0 && self.held != world.height.data {
            self.stepper.set_heights(&world.height.data)?;
            self.held.clone_from(&world.height.data);
        }
        self.viewed = None;
        self.stepper.step(self.dt)?;
        // Waiting (a fence, nothing read back) keeps the queue one step deep, so a stop
        // comes within a step and the steps counted are the steps done.
        self.stepper.wait()?;
        self.ahead += 1;
        Ok(false)
    }

    fn sync(&mut self, world: &mut World) -> Result<()> {
        if self.ahead == 0 {
            return Ok(());
        }
        let after = match self.viewed.take() {
            // The view's buffer itself once no one else holds it (a view kept still).
            Some(v) => std::sync::Arc::try_unwrap(v).unwrap_or_else(|v| v.to_vec()),
            None => self.stepper.heights()?,
        };
        self.held = take_heights(&self.field, after, world)?;
        self.ahead = 0;
        Ok(())
    }

    fn shared_heights(&mut self, world: &mut World) -> Result<Option<std::sync::Arc<Vec<f32>>>> {
        if self.ahead == 0 {
            return Ok(None);
        }
        if self.viewed.is_none() {
            let after = self.stepper.heights()?;
            check_count(&self.field, &after, world)?;
            self.viewed = Some(std::sync::Arc::new(after));
        }
        Ok(self.viewed.clone())
    }

    fn finish(&mut self, world: &mut World) -> Result<()> {
        self.sync(world)?;
        match (&self.hydrology, &mut self.mapper) {
            (Some(p), Some(mapper)) => {
                let fields = mapper.maps(&world.height.data)?;
                insert_device_maps(world, p, fields)
            }
            (Some(p), None) => write_hydrology_maps(world, p, &self.base_dir, &self.field),
            (None, _) => Ok(()),
        }
    }

    fn device(&self) -> Option<String> {
        Some(self.device.clone())
    }

    fn defers(&self) -> bool {
        // With a tolerance each step's convergence needs its heights.
        self.tolerance.is_none()
    }

    fn take_inputs(&mut self, inputs: &crate::eroders::stream_power::Inputs) -> Result<bool> {
        // Only a synced run (steps in flight were submitted with the old inputs), and one
        // whose end maps, if any, are routed on the accelerator: the CPU's routing would
        // need the new precipitation as the stage's source (the maps' other settings are
        // the stage's, unchanged).
        let cpu_maps = self.hydrology.is_some() && self.mapper.is_none();
        if self.ahead != 0 || cpu_maps || !self.stepper.set_inputs(inputs)? {
            return Ok(false);
        }
        if let Some(mapper) = &mut self.mapper {
            if !mapper.set_precipitation(inputs.precipitation.as_deref())? {
                return Ok(false);
            }
        }
        Ok(true)
    }

    fn on_device(&mut self) -> Option<&mut dyn DeviceProcess> {
        // With a tolerance its convergence needs the heights before and after each step.
        if self.tolerance.is_some() {
            return None;
        }
        Some(self)
    }
}

impl DeviceProcess for AcceleratedRun {
    fn can_adopt(&self) -> bool {
        false
    }

    fn shared(&mut self) -> Result<Option<SharedHeights>> {
        self.stepper.shared_heights()
    }

    fn adopt(&mut self, _shared: &SharedHeights) -> Result<bool> {
        Ok(false)
    }

    fn upload(&mut self, heights: &[f32]) -> Result<()> {
        self.stepper.set_heights(heights)
    }

    fn changed(&mut self) {
        self.stepper.heights_changed()
    }

    fn step_device(&mut self) -> Result<()> {
        self.stepper.step(self.dt)?;
        // Speculative steps are settled (a 32-byte read) before another process moves
        // the heights under them.
        self.stepper.wait()
    }

    fn converged(&mut self) -> Result<bool> {
        // Only without a tolerance is it stepped this way (`on_device`).
        Ok(false)
    }

    fn download(&mut self) -> Result<Vec<f32>> {
        self.stepper.heights()
    }
}

/// A `Thermal` stage stepped by an accelerator: on its own, the heights handed over when
/// they changed and read back after every step (with the largest excess, for
/// `tolerance`), as [`AcceleratedRun`]; in a `TimeLoop`, the stream power's heights
/// stepped on the device ([`DeviceProcess`]).
pub(crate) struct AcceleratedThermal {
    pub stepper: Box<dyn ThermalStepper>,
    pub tolerance: f32,
    pub field: String,
    pub device: String,
    /// The heights the stepper holds.
    pub held: Vec<f32>,
}

impl StageRun for AcceleratedThermal {
    fn step(&mut self, world: &mut World) -> Result<bool> {
        if self.held != world.height.data {
            self.stepper.set_heights(&world.height.data)?;
        }
        self.stepper.step()?;
        let after = self.stepper.heights()?;
        let excess = self.stepper.max_excess()?;
        self.held = take_heights(&self.field, after, world)?;
        Ok(excess <= self.tolerance)
    }

    fn device(&self) -> Option<String> {
        Some(self.device.clone())
    }

    fn on_device(&mut self) -> Option<&mut dyn DeviceProcess> {
        Some(self)
    }
}

impl DeviceProcess for AcceleratedThermal {
    fn can_adopt(&self) -> bool {
        true
    }

    fn shared(&mut self) -> Result<Option<SharedHeights>> {
        self.stepper.shared_heights()
    }

    fn adopt(&mut self, shared: &SharedHeights) -> Result<bool> {
        self.stepper.share_heights(shared)
    }

    fn upload(&mut self, heights: &[f32]) -> Result<()> {
        self.stepper.set_heights(heights)
    }

    fn changed(&mut self) {}

    fn step_device(&mut self) -> Result<()> {
        self.stepper.step()
    }

    fn converged(&mut self) -> Result<bool> {
        Ok(self.stepper.max_excess()? <= self.tolerance)
    }

    fn download(&mut self) -> Result<Vec<f32>> {
        self.stepper.heights()
    }
}
