//! Finding a GPU: the adapter, its device and queue, and the errors wgpu reports on them.

use std::sync::{Arc, Mutex};

use orogen_core::{OrogenError, Result};

/// What to tell a user who has no adapter.
pub const NO_ADAPTER_HELP: &str = "no GPU adapter found (Vulkan, Metal or DX12); install a GPU \
     driver, or Mesa's software Vulkan (Debian: apt-get install mesa-vulkan-drivers libvulkan1, \
     which scripts/install-vulkan.sh does)";

/// A GPU device and its queue, with the adapter's description. Cheap to clone (the device
/// and queue are shared).
#[derive(Clone)]
pub struct GpuContext {
    pub(crate) device: wgpu::Device,
    pub(crate) queue: wgpu::Queue,
    info: wgpu::AdapterInfo,
    /// Errors wgpu raised outside an error scope (validation, out of memory, device lost),
    /// taken by [`GpuContext::check`].
    errors: Arc<Mutex<Vec<String>>>,
}

/// Set to `1` (or any value but `0` or empty), no adapter is looked for: `GpuContext::new`
/// fails as on a machine without a GPU (for tests of that path, and to keep a run off a
/// GPU whatever its recipe says). `VK_ICD_FILENAMES=/nonexistent` does the same for Vulkan
/// alone.
pub const DISABLE_ENV: &str = "OROGEN_GPU_DISABLE";

/// True when [`DISABLE_ENV`] is set to anything but `0` or nothing.
fn disabled() -> bool {
    std::env::var_os(DISABLE_ENV).is_some_and(|v| !v.is_empty() && v != "0")
}

/// Preference among adapter kinds: a discrete GPU first, software last.
fn rank(t: wgpu::DeviceType) -> u8 {
    match t {
        wgpu::DeviceType::DiscreteGpu => 0,
        wgpu::DeviceType::IntegratedGpu => 1,
        wgpu::DeviceType::VirtualGpu => 2,
        wgpu::DeviceType::Other => 3,
        wgpu::DeviceType::Cpu => 4,
    }
}

impl GpuContext {
    /// The best adapter of this machine (discrete, integrated, virtual, then software such as
    /// lavapipe; the first listed among equals) with a device whose buffer limits are the
    /// adapter's own. An error naming `device` when there is none or it cannot start, or
    /// when `OROGEN_GPU_DISABLE` is set ([`DISABLE_ENV`]); never a panic.
    pub fn new() -> Result<Self> {
        if disabled() {
            return Err(OrogenError::invalid(
                "device",
                format!("no GPU adapter looked for: {DISABLE_ENV} is set"),
            ));
        }
        let backends = wgpu::Backends::VULKAN | wgpu::Backends::METAL | wgpu::Backends::DX12;
        let instance = wgpu::Instance::new(&wgpu::InstanceDescriptor {
            backends,
            flags: wgpu::InstanceFlags::empty().with_env(),
            ..Default::default()
        });
        let adapter = instance
            .enumerate_adapters(backends)
            .into_iter()
            .enumerate()
            .min_by_key(|(k, a)| (rank(a.get_info().device_type), *k))
            .map(|(_, a)| a)
            .ok_or_else(|| OrogenError::invalid("device", NO_ADAPTER_HELP))?;
        let info = adapter.get_info();
        // The adapter's own limits: the maps of a 4096² grid need bindings beyond WebGPU's
        // default 128 MiB, and the step binds up to 7 storage buffers a shader.
        let required_limits = adapter.limits();
        let (device, queue) = pollster::block_on(adapter.request_device(&wgpu::DeviceDescriptor {
            label: Some("orogen-gpu"),
            // Timestamps for GpuStreamPower::profile_step, where the adapter has them.
            required_features: adapter.features() & wgpu::Features::TIMESTAMP_QUERY,
            required_limits,
            ..Default::default()
        }))
        .map_err(|e| {
            OrogenError::invalid(
                "device",
                format!("the GPU adapter {} would not start: {e}", info.name),
            )
        })?;
        let errors: Arc<Mutex<Vec<String>>> = Arc::default();
        let sink = errors.clone();
        device.on_uncaptured_error(Arc::new(move |e: wgpu::Error| {
            if let Ok(mut list) = sink.lock() {
                list.push(e.to_string());
            }
        }));
        Ok(GpuContext {
            device,
            queue,
            info,
            errors,
        })
    }

    /// The adapter's name and backend, e.g. `llvmpipe (LLVM 15.0.6, 256 bits) (Vulkan, Cpu)`.
    pub fn describe(&self) -> String {
        format!(
            "{} ({:?}, {:?})",
            self.info.name, self.info.backend, self.info.device_type
        )
    }

    /// True for a software adapter (lavapipe, WARP): correct, but no faster than the CPU.
    pub fn is_software(&self) -> bool {
        self.info.device_type == wgpu::DeviceType::Cpu
    }

    /// True where the device takes GPU timestamps (`wgpu::Features::TIMESTAMP_QUERY`).
    pub fn has_timestamps(&self) -> bool {
        self.device
            .features()
            .contains(wgpu::Features::TIMESTAMP_QUERY)
    }

    /// The device's limits.
    pub fn limits(&self) -> wgpu::Limits {
        self.device.limits()
    }

    /// Waits for all submitted work, then reports any error wgpu raised since the last check
    /// as an error naming `field`.
    pub fn check(&self, field: &str) -> Result<()> {
        self.device
            .poll(wgpu::PollType::wait_indefinitely())
            .map_err(|e| OrogenError::invalid(field, format!("the GPU failed: {e}")))?;
        let mut list = self
            .errors
            .lock()
            .map_err(|_| OrogenError::invalid(field, "the GPU error log was poisoned"))?;
        if list.is_empty() {
            return Ok(());
        }
        let all = list.join("; ");
        list.clear();
        Err(OrogenError::invalid(
            field,
            format!("the GPU failed: {all}"),
        ))
    }
}

/// Whether a GPU step can index `grid`'s nodes with 32-bit integers: `Ok`, or the error
/// naming `grid`.
pub(crate) fn check_nodes(grid: orogen_core::Grid) -> orogen_core::Result<()> {
    let n = grid.len();
    if n < 1 || n >= u32::MAX as usize {
        return Err(orogen_core::OrogenError::invalid(
            "grid",
            format!("the GPU step needs 1 to {} nodes, got {n}", u32::MAX - 1),
        ));
    }
    Ok(())
}

/// Whether `ctx` can bind a storage buffer of `bytes_per_node` bytes for each of `grid`'s
/// nodes (a step's largest): `Ok`, or the error naming `grid` with the sizes.
pub(crate) fn check_binding(
    ctx: &GpuContext,
    grid: orogen_core::Grid,
    bytes_per_node: u64,
) -> orogen_core::Result<()> {
    let limits = ctx.limits();
    let largest = bytes_per_node * grid.len() as u64;
    let max_binding = (limits.max_storage_buffer_binding_size as u64).min(limits.max_buffer_size);
    if largest > max_binding {
        return Err(orogen_core::OrogenError::invalid(
            "grid",
            format!(
                "{}x{} needs GPU buffers of {largest} bytes, {} allows {max_binding}",
                grid.width,
                grid.height,
                ctx.describe()
            ),
        ));
    }
    Ok(())
}
