//! What the GPU test files share.

use broadphase_gpu::GpuContext;

/// The device context, or `None` (the caller's tests then skip) when
/// there is no adapter, unless `BROADPHASE_GPU_REQUIRED=1` asks for one:
/// then a missing adapter fails the test.
pub(crate) fn context() -> Option<GpuContext> {
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
