//! [`GpuContext`]: one wgpu device and its queue, opened once and shared by
//! the searches made from it.

use crate::error::GpuError;

/// Which adapters [`GpuContext::with_config`] may open.
///
/// # Examples
///
/// ```
/// use broadphase_gpu::GpuContextConfig;
/// assert_eq!(GpuContextConfig::default().backends, broadphase_gpu::wgpu::Backends::VULKAN);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GpuContextConfig {
    /// The backends to look for adapters in. Only Vulkan is compiled in
    /// (a GPU's driver, or lavapipe on the CPU); asking for none finds none.
    pub backends: wgpu::Backends,
}

impl Default for GpuContextConfig {
    fn default() -> Self {
        Self { backends: wgpu::Backends::VULKAN }
    }
}

/// A wgpu device and queue with the adapter's own limits (so buffers may
/// be as large as the device allows). Cheap to clone: the handles are
/// shared.
///
/// # Examples
///
/// ```no_run
/// use broadphase_gpu::GpuContext;
/// let context = GpuContext::new()?;
/// println!("searching on {}", context.adapter_name());
/// # Ok::<(), broadphase_gpu::GpuError>(())
/// ```
#[derive(Clone, Debug)]
pub struct GpuContext {
    pub(crate) device: wgpu::Device,
    pub(crate) queue: wgpu::Queue,
    info: wgpu::AdapterInfo,
    pub(crate) limits: wgpu::Limits,
}

impl GpuContext {
    /// Opens the first Vulkan adapter, a discrete GPU preferred.
    ///
    /// # Errors
    ///
    /// [`GpuError::NoAdapter`] when none exists, [`GpuError::RequestDevice`] when
    /// it refuses a device.
    ///
    /// # Examples
    ///
    /// ```
    /// match broadphase_gpu::GpuContext::new() {
    ///     Ok(context) => println!("adapter: {}", context.adapter_name()),
    ///     Err(e) => println!("no GPU search here: {e}"),
    /// }
    /// ```
    pub fn new() -> Result<Self, GpuError> {
        Self::with_config(GpuContextConfig::default())
    }

    /// Opens the first adapter of `config.backends`.
    ///
    /// # Errors
    ///
    /// As [`new`](Self::new).
    ///
    /// # Examples
    ///
    /// ```
    /// use broadphase_gpu::{GpuContext, GpuContextConfig, GpuError, wgpu::Backends};
    /// let none = GpuContext::with_config(GpuContextConfig { backends: Backends::empty() });
    /// assert!(matches!(none, Err(GpuError::NoAdapter { .. })));
    /// ```
    pub fn with_config(config: GpuContextConfig) -> Result<Self, GpuError> {
        let instance = wgpu::Instance::new(wgpu::InstanceDescriptor {
            backends: config.backends,
            ..wgpu::InstanceDescriptor::new_without_display_handle()
        });
        let adapter = pollster::block_on(instance.request_adapter(&wgpu::RequestAdapterOptions {
            power_preference: wgpu::PowerPreference::HighPerformance,
            force_fallback_adapter: false,
            compatible_surface: None,
            ..Default::default()
        }))
        .map_err(|e| GpuError::NoAdapter { reason: e.to_string() })?;
        let limits = adapter.limits();
        // Timestamps time the passes on the device (`GpuTimings`); without
        // them the host's clock does.
        let features = adapter.features() & wgpu::Features::TIMESTAMP_QUERY;
        let (device, queue) = pollster::block_on(adapter.request_device(&wgpu::DeviceDescriptor {
            label: Some("broadphase-gpu"),
            required_features: features,
            required_limits: limits.clone(),
            ..Default::default()
        }))
        .map_err(GpuError::RequestDevice)?;
        Ok(Self { device, queue, info: adapter.get_info(), limits })
    }

    /// The adapter's name, e.g. `llvmpipe (LLVM 15.0.6, 256 bits)` for lavapipe.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// let context = broadphase_gpu::GpuContext::new()?;
    /// assert!(!context.adapter_name().is_empty());
    /// # Ok::<(), broadphase_gpu::GpuError>(())
    /// ```
    pub fn adapter_name(&self) -> &str {
        &self.info.name
    }

    /// Whether the adapter runs on the CPU (lavapipe), not on a GPU.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// let context = broadphase_gpu::GpuContext::new()?;
    /// println!("software adapter: {}", context.is_cpu());
    /// # Ok::<(), broadphase_gpu::GpuError>(())
    /// ```
    pub fn is_cpu(&self) -> bool {
        self.info.device_type == wgpu::DeviceType::Cpu
    }

    /// Whether the device times its compute passes itself (the adapter
    /// has `TIMESTAMP_QUERY`); see [`PassClock`](crate::PassClock).
    ///
    /// # Examples
    ///
    /// ```no_run
    /// let context = broadphase_gpu::GpuContext::new()?;
    /// println!("device timestamps: {}", context.has_timestamps());
    /// # Ok::<(), broadphase_gpu::GpuError>(())
    /// ```
    pub fn has_timestamps(&self) -> bool {
        self.device.features().contains(wgpu::Features::TIMESTAMP_QUERY)
    }

    /// Blocks until the device has finished all submitted work.
    pub(crate) fn wait(&self) -> Result<(), GpuError> {
        self.device.poll(wgpu::PollType::wait_indefinitely()).map_err(GpuError::Poll)?;
        Ok(())
    }
}

/// A device of its own for a unit test (one test destroys its device), or
/// `None` when there is no adapter, the test then skipping, unless
/// `BROADPHASE_GPU_REQUIRED=1` asks for one: then it fails. The integration
/// tests have their twin in `tests/support`, which cannot reach this.
#[cfg(test)]
pub(crate) fn test_context() -> Option<GpuContext> {
    match GpuContext::new() {
        Ok(context) => Some(context),
        Err(e) => {
            let required = std::env::var("BROADPHASE_GPU_REQUIRED").is_ok_and(|v| v == "1");
            assert!(!required, "BROADPHASE_GPU_REQUIRED=1 but no adapter: {e}");
            eprintln!("SKIPPED: no GPU adapter ({e}); set BROADPHASE_GPU_REQUIRED=1 to fail");
            None
        }
    }
}
