//! Where a simulator's stream power runs (issue #42): the recipe's `device`. With the `gpu`
//! feature the GPU (orogen-gpu) is opened on the worker thread the first time a run asks for
//! it, never on Godot's main thread, and kept for the rest of the process (each later run and
//! simulator shares it); an open that failed is tried again by the next run.

use orogen_core::stages::{Accelerator, Device, Devices};
use orogen_core::OrogenError;

/// The accelerator a recipe's `device` asks for, and why there is none: nothing for `Cpu`;
/// for `Gpu` the GPU or an error naming `device`; for `Auto` the GPU, or none and why.
pub struct Opened {
    accelerator: Option<&'static dyn Accelerator>,
    missing: String,
}

impl Opened {
    /// The devices to run with.
    pub fn devices(&self, device: Device) -> Devices<'_> {
        Devices {
            device,
            accelerator: self.accelerator,
            missing: &self.missing,
        }
    }
}

/// Opens (or finds opened) the GPU `device` asks for. Call on a worker thread.
pub fn open(device: Device) -> Result<Opened, OrogenError> {
    if device == Device::Cpu {
        return Ok(Opened {
            accelerator: None,
            missing: String::new(),
        });
    }
    match gpu() {
        Ok(a) => match auto_refusal(device) {
            // Auto passes over a software adapter (orogen_gpu::GpuBackend::for_auto).
            Some(why) => Ok(Opened {
                accelerator: None,
                missing: why,
            }),
            None => Ok(Opened {
                accelerator: Some(a),
                missing: String::new(),
            }),
        },
        Err(e) if device == Device::Gpu => Err(e),
        Err(OrogenError::InvalidParameter { reason, .. }) => Ok(Opened {
            accelerator: None,
            missing: reason,
        }),
        Err(e) => Ok(Opened {
            accelerator: None,
            missing: e.to_string(),
        }),
    }
}

/// What `device_used` says of a finished run: the first stage a GPU ran (`gpu: <adapter>`),
/// else the first that says why it is on the CPU (`cpu (Auto: <why>)`), else `cpu`.
pub fn summary<'a>(devices: impl Iterator<Item = &'a str> + Clone) -> String {
    devices
        .clone()
        .find(|d| d.starts_with("gpu"))
        .or_else(|| devices.clone().find(|d| *d != "cpu"))
        .unwrap_or("cpu")
        .to_string()
}

/// The GPU opened in this process, shared by every run.
#[cfg(feature = "gpu")]
static GPU: std::sync::OnceLock<orogen_gpu::GpuBackend> = std::sync::OnceLock::new();

/// Why `Auto` does not take the opened GPU (a software adapter), if it does not.
#[cfg(feature = "gpu")]
fn auto_refusal(device: Device) -> Option<String> {
    if device != Device::Auto {
        return None;
    }
    match GPU.get()?.refused_under_auto()? {
        OrogenError::InvalidParameter { reason, .. } => Some(reason),
        e => Some(e.to_string()),
    }
}

#[cfg(not(feature = "gpu"))]
fn auto_refusal(_: Device) -> Option<String> {
    None
}

#[cfg(feature = "gpu")]
fn gpu() -> Result<&'static dyn Accelerator, OrogenError> {
    use std::sync::Mutex;
    // One open at a time (two simulators starting together open one GPU).
    static OPENING: Mutex<()> = Mutex::new(());
    if let Some(g) = GPU.get() {
        return Ok(g);
    }
    let _one = OPENING.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(g) = GPU.get() {
        return Ok(g);
    }
    let backend = orogen_gpu::GpuBackend::new()?;
    Ok(GPU.get_or_init(|| backend))
}

#[cfg(not(feature = "gpu"))]
fn gpu() -> Result<&'static dyn Accelerator, OrogenError> {
    Err(OrogenError::invalid(
        "device",
        "this Orogen extension was built without the `gpu` feature (CPU only)",
    ))
}
