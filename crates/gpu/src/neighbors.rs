//! [`GpuNeighborSearch`]: the counting-sort grid and the neighbor lists,
//! built and searched on the device.

use crate::buffer::{DeviceBuffer, read_back, upload_bytes, upload_rows};
use crate::context::GpuContext;
use crate::error::GpuError;
use crate::grid::{
    FILL_WG, MAX_GROUPS, MAX_SHORT_ROW, Params, ScanParams, WG, fill_groups, groups,
};
use crate::grid::{plan, plan_periodic};
use crate::grid::{validate, validate_periodic};
use crate::timing::{CallClock, DevicePasses, GpuTimings, Stage, Timestamps, pass_descriptor};
use broadphase_neighbors::{NeighborListSearch, NeighborLists, PeriodicDomain};
use broadphase_storage::Aabb;
use glam::Vec3;
use wgpu::BufferUsages as Use;

/// Tuning of [`GpuNeighborSearch`].
///
/// # Examples
///
/// ```
/// use broadphase_gpu::GpuSearchConfig;
/// assert_eq!(GpuSearchConfig::default().max_points, usize::MAX);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GpuSearchConfig {
    /// The most points one call accepts (more is
    /// [`PointError::TooManyPoints`](broadphase_neighbors::PointError::TooManyPoints)),
    /// lowered to what the device's buffers and dispatches allow.
    pub max_points: usize,
}

impl Default for GpuSearchConfig {
    fn default() -> Self {
        Self { max_points: usize::MAX }
    }
}

/// Fixed-radius neighbor search on the GPU: the counting-sort grid of
/// [`CountingSortGrid`](broadphase_neighbors::CountingSortGrid), built on
/// the device, then per-point neighbor lists in CSR form.
///
/// One call runs, on the device: **insert** (each point's cell, and its
/// place in the cell from an atomic counter), a **prefix sum** of the cell
/// counts, the **scatter** into cell order, a **count** pass (each point's
/// neighbors among the 3×3×3 cells around it), a prefix sum of the counts
/// (the CSR offsets), then a **fill** pass that writes each row and sorts
/// it. Only what the caller asks for is read back: the offsets and entries
/// for [`find_neighbor_lists`](NeighborListSearch::find_neighbor_lists),
/// the counts alone for [`neighbor_counts`](Self::neighbor_counts).
///
/// **Exact.** The answer is the canonical one of [`NeighborListSearch`]
/// (row `i` is point `i`, entries ascending, `(dx·dx + dy·dy) + dz·dz <=
/// r·r` in `f32`), identical bit for bit to the CPU structures': the
/// device's distance is guarded against fused multiply-adds, the cells are
/// sized so rounding never hides a neighbor two cells away, and radii below
/// [`MIN_RADIUS`](crate::MIN_RADIUS) (where flushed subnormals could
/// matter) are refused. `docs/GPU.md` has the reasoning.
///
/// **Memory.** Device buffers are sized by capacity and kept: a call on no
/// more points (and neighbors) than an earlier one creates no buffer
/// ([`buffer_allocations`](Self::buffer_allocations) counts them).
///
/// # Examples
///
/// ```no_run
/// use broadphase_gpu::{GpuContext, GpuNeighborSearch};
/// use broadphase_neighbors::{CountingSortGrid, NeighborListSearch, NeighborLists};
/// use glam::Vec3;
///
/// let points: Vec<Vec3> = (0..1000)
///     .map(|i| Vec3::new((i % 10) as f32, ((i / 10) % 10) as f32, (i / 100) as f32))
///     .collect();
/// let context = GpuContext::new()?;
/// let mut gpu = GpuNeighborSearch::new(&context);
/// let (mut on_gpu, mut on_cpu) = (NeighborLists::default(), NeighborLists::default());
/// gpu.find_neighbor_lists(&points, 1.0, &mut on_gpu)?;
/// CountingSortGrid::default().find_neighbor_lists(&points, 1.0, &mut on_cpu)?;
/// assert_eq!(on_gpu.offsets(), on_cpu.offsets());
/// assert_eq!(on_gpu.indices(), on_cpu.indices());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct GpuNeighborSearch {
    context: GpuContext,
    config: GpuSearchConfig,
    pipelines: Pipelines,
    buffers: Buffers,
    /// Made on first use, remade when a buffer they name is remade.
    bind_groups: Option<BindGroups>,
    /// Device buffers created, the fixed ones included.
    allocations: u64,
    /// The most bytes one storage buffer may bind on this device.
    max_binding: u64,
    /// Where the device has them: the passes' timestamps.
    timestamps: Option<Timestamps>,
    /// The last call's, see [`GpuTimings`].
    timings: GpuTimings,
}

#[derive(Debug)]
struct Pipelines {
    count: wgpu::ComputePipeline,
    scan_blocks: wgpu::ComputePipeline,
    scan_block_sums: wgpu::ComputePipeline,
    add_block_offsets: wgpu::ComputePipeline,
    scatter: wgpu::ComputePipeline,
    count_neighbors: wgpu::ComputePipeline,
    fill: wgpu::ComputePipeline,
    box_count: wgpu::ComputePipeline,
    box_fill: wgpu::ComputePipeline,
    sphere_count: wgpu::ComputePipeline,
    sphere_fill: wgpu::ComputePipeline,
}

#[derive(Debug)]
struct Buffers {
    params: DeviceBuffer,
    cell_scan: DeviceBuffer,
    row_scan: DeviceBuffer,
    points: DeviceBuffer,
    cell_of: DeviceBuffer,
    slot: DeviceBuffer,
    cell_count: DeviceBuffer,
    cell_start: DeviceBuffer,
    cell_blocks: DeviceBuffer,
    sorted_pos: DeviceBuffer,
    sorted_id: DeviceBuffer,
    row_count: DeviceBuffer,
    row_start: DeviceBuffer,
    row_blocks: DeviceBuffer,
    entries: DeviceBuffer,
    read_total: DeviceBuffer,
    read_rows: DeviceBuffer,
    read_entries: DeviceBuffer,
}

/// A prefix sum's three bind groups (see `scan.wgsl`).
#[derive(Debug)]
struct ScanBindGroups {
    blocks: wgpu::BindGroup,
    block_sums: wgpu::BindGroup,
    add: wgpu::BindGroup,
}

#[derive(Debug)]
struct BindGroups {
    count: wgpu::BindGroup,
    cell_scan: ScanBindGroups,
    scatter: wgpu::BindGroup,
    count_neighbors: wgpu::BindGroup,
    row_scan: ScanBindGroups,
    fill: wgpu::BindGroup,
    box_count: wgpu::BindGroup,
    box_fill: wgpu::BindGroup,
    sphere_count: wgpu::BindGroup,
    sphere_fill: wgpu::BindGroup,
}

/// What a call searches for: the pass pair (count, fill) it runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Walk {
    /// Points within a radius (`neighbors.wgsl`).
    Neighbors,
    /// Overlapping boxes, each pair once (`boxes.wgsl`).
    Boxes,
    /// Touching spheres, each pair once (`spheres.wgsl`).
    Spheres,
}

/// The items a call uploads: `params.stride` floats each.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Items<'a> {
    Points(&'a [Vec3]),
    Boxes(&'a [Aabb]),
    /// Centers and radii of the same length.
    Spheres(&'a [Vec3], &'a [f32]),
}

impl GpuNeighborSearch {
    /// A search on `context`'s device with the default configuration;
    /// compiles its shaders now, allocates its buffers on first use.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// let context = broadphase_gpu::GpuContext::new()?;
    /// let gpu = broadphase_gpu::GpuNeighborSearch::new(&context);
    /// assert!(gpu.max_points() > 1_000_000);
    /// # Ok::<(), broadphase_gpu::GpuError>(())
    /// ```
    pub fn new(context: &GpuContext) -> Self {
        Self::with_config(context, GpuSearchConfig::default())
    }

    /// A search on `context`'s device with `config`.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// use broadphase_gpu::{GpuContext, GpuNeighborSearch, GpuSearchConfig};
    /// let context = GpuContext::new()?;
    /// let gpu = GpuNeighborSearch::with_config(&context, GpuSearchConfig { max_points: 100 });
    /// assert_eq!(gpu.max_points(), 100);
    /// # Ok::<(), broadphase_gpu::GpuError>(())
    /// ```
    pub fn with_config(context: &GpuContext, config: GpuSearchConfig) -> Self {
        Self::with_short_row(context, config, MAX_SHORT_ROW)
    }

    /// A search whose fills sort rows of up to `short_row` entries in each
    /// invocation's own memory ([`MAX_SHORT_ROW`] outside tests).
    pub(crate) fn with_short_row(
        context: &GpuContext,
        config: GpuSearchConfig,
        short_row: u32,
    ) -> Self {
        let context = context.clone();
        let limits = &context.limits;
        let max_binding = limits.max_storage_buffer_binding_size.min(limits.max_buffer_size);
        let buffer = |label, usage| DeviceBuffer::new(&context, label, usage);
        let storage = Use::STORAGE;
        let buffers = Buffers {
            params: buffer("params", Use::UNIFORM | Use::COPY_DST),
            cell_scan: buffer("cell scan params", Use::UNIFORM | Use::COPY_DST),
            row_scan: buffer("row scan params", Use::UNIFORM | Use::COPY_DST),
            points: buffer("points", storage | Use::COPY_DST),
            cell_of: buffer("cell of point", storage),
            slot: buffer("slot in cell", storage),
            cell_count: buffer("cell counts", storage | Use::COPY_DST),
            cell_start: buffer("cell starts", storage),
            cell_blocks: buffer("cell scan blocks", storage),
            sorted_pos: buffer("sorted positions", storage),
            sorted_id: buffer("sorted ids", storage),
            row_count: buffer("neighbor counts", storage | Use::COPY_SRC),
            row_start: buffer("row offsets", storage | Use::COPY_SRC),
            row_blocks: buffer("row scan blocks", storage),
            entries: buffer("entries", storage | Use::COPY_SRC),
            read_total: buffer("read total", Use::MAP_READ | Use::COPY_DST),
            read_rows: buffer("read rows", Use::MAP_READ | Use::COPY_DST),
            read_entries: buffer("read entries", Use::MAP_READ | Use::COPY_DST),
        };
        let pipelines = Pipelines::new(&context, short_row);
        let timestamps = Timestamps::new(&context);
        let allocations = 18 + timestamps.as_ref().map_or(0, |_| Timestamps::BUFFERS);
        Self {
            context,
            config,
            pipelines,
            buffers,
            bind_groups: None,
            allocations,
            max_binding,
            timestamps,
            timings: GpuTimings::default(),
        }
    }

    /// The most points one call accepts: the configuration's
    /// [`max_points`](GpuSearchConfig::max_points), lowered to what one
    /// dispatch (`65535 · 256` points) and the device's buffers allow.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// let context = broadphase_gpu::GpuContext::new()?;
    /// let gpu = broadphase_gpu::GpuNeighborSearch::new(&context);
    /// assert!(gpu.max_points() <= 65_535 * 256);
    /// # Ok::<(), broadphase_gpu::GpuError>(())
    /// ```
    pub fn max_points(&self) -> usize {
        let dispatch = (MAX_GROUPS * WG) as usize;
        // Sorted positions take 16 bytes a point.
        let memory = usize::try_from(self.max_binding / 16).unwrap_or(usize::MAX);
        self.config.max_points.min(dispatch).min(memory)
    }

    /// How many device buffers this search has created so far: a warm
    /// call (no more points or neighbors than one before) adds none.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// use broadphase_gpu::{GpuContext, GpuNeighborSearch};
    /// use glam::Vec3;
    /// let context = GpuContext::new()?;
    /// let mut gpu = GpuNeighborSearch::new(&context);
    /// let mut counts = Vec::new();
    /// gpu.neighbor_counts(&[Vec3::ZERO, Vec3::X], 1.0, &mut counts)?;
    /// let warm = gpu.buffer_allocations();
    /// gpu.neighbor_counts(&[Vec3::X, Vec3::ZERO], 1.0, &mut counts)?;
    /// assert_eq!(gpu.buffer_allocations(), warm);
    /// # Ok::<(), broadphase_gpu::GpuError>(())
    /// ```
    pub fn buffer_allocations(&self) -> u64 {
        self.allocations
    }

    /// Where the last call that reached the device spent its time:
    /// upload, the compute passes, read-back (see [`GpuTimings`]). All
    /// zero before the first.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// use broadphase_gpu::{GpuContext, GpuNeighborSearch};
    /// use glam::Vec3;
    /// let mut gpu = GpuNeighborSearch::new(&GpuContext::new()?);
    /// assert_eq!(gpu.timings().total, std::time::Duration::ZERO);
    /// let mut counts = Vec::new();
    /// gpu.neighbor_counts(&[Vec3::ZERO, Vec3::X], 1.0, &mut counts)?;
    /// assert!(gpu.timings().passes > std::time::Duration::ZERO);
    /// # Ok::<(), broadphase_gpu::GpuError>(())
    /// ```
    pub fn timings(&self) -> GpuTimings {
        self.timings
    }

    /// The bytes of device memory this search holds.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// let context = broadphase_gpu::GpuContext::new()?;
    /// let gpu = broadphase_gpu::GpuNeighborSearch::new(&context);
    /// assert!(gpu.device_bytes() > 0);
    /// # Ok::<(), broadphase_gpu::GpuError>(())
    /// ```
    pub fn device_bytes(&self) -> u64 {
        self.buffers.all().iter().map(|b| b.bytes()).sum()
    }

    /// Replaces `out` with each point's number of neighbors within
    /// `radius` (`out[i]` for point `i`, itself not counted): the lists'
    /// row lengths, without building or reading back the lists.
    ///
    /// # Errors
    ///
    /// [`GpuError::Point`] for bad input (see
    /// [`find_neighbor_lists`](NeighborListSearch::find_neighbor_lists));
    /// device failures. `out` is then left untouched.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// use broadphase_gpu::{GpuContext, GpuNeighborSearch};
    /// use glam::Vec3;
    /// let context = GpuContext::new()?;
    /// let mut gpu = GpuNeighborSearch::new(&context);
    /// let points = [Vec3::ZERO, Vec3::X, Vec3::new(3.0, 0.0, 0.0)];
    /// let mut counts = Vec::new();
    /// gpu.neighbor_counts(&points, 1.0, &mut counts)?; // exactly 1 apart counts
    /// assert_eq!(counts, [1, 1, 0]);
    /// # Ok::<(), broadphase_gpu::GpuError>(())
    /// ```
    pub fn neighbor_counts(
        &mut self,
        points: &[Vec3],
        radius: f32,
        out: &mut Vec<u32>,
    ) -> Result<(), GpuError> {
        let mut clock = CallClock::start();
        let Some((lo, hi)) = validate(points, radius, self.max_points())? else {
            out.clear();
            return Ok(());
        };
        let params = plan(points.len(), lo, hi, radius, self.max_cells());
        self.counts(&mut clock, params, Items::Points(points), Walk::Neighbors, false)?;
        let device_passes = self.device_passes(counted_stages(false))?;
        let bytes = u64::from(params.n) * 4;
        let (context, b) = (&self.context, &self.buffers);
        clock.readback(|| {
            let mut encoder = context.device.create_command_encoder(&Default::default());
            encoder.copy_buffer_to_buffer(&b.row_count.buffer, 0, &b.read_rows.buffer, 0, bytes);
            context.queue.submit([encoder.finish()]);
            read_back(context, [(&b.read_rows.buffer, bytes)], |[counts]| {
                out.clear();
                out.extend_from_slice(counts);
            })
        })?;
        self.timings = clock.finish(device_passes);
        Ok(())
    }

    /// The device's times for `stages` of the call, from their timestamps
    /// where the device has them. Read before the results are handed out,
    /// so a read that fails fails the call with the caller's output
    /// untouched.
    fn device_passes(&self, stages: &[Stage]) -> Result<Option<DevicePasses>, GpuError> {
        self.timestamps.as_ref().map(|t| t.read(&self.context, stages)).transpose()
    }

    /// The most cells a grid may have: one dispatch scans them, one
    /// buffer holds their starts.
    pub(crate) fn max_cells(&self) -> u32 {
        u32::try_from(self.max_binding / 4 - 1).unwrap_or(u32::MAX).min(MAX_GROUPS * WG)
    }

    /// Uploads `items` and the grid `params` (planned for them), and runs
    /// everything up to the counts of `walk` (with `rows`, their prefix sum
    /// too), waiting for each part so `clock` times them apart.
    fn counts(
        &mut self,
        clock: &mut CallClock,
        params: Params,
        items: Items<'_>,
        walk: Walk,
        rows: bool,
    ) -> Result<(), GpuError> {
        let n = params.n;
        let cells = params.dims.iter().product::<u32>();
        let (cell_scan, row_scan) = (ScanParams::of(cells), ScanParams::of(n));
        clock.upload(|| {
            self.reserve(params, cells, cell_scan.blocks, row_scan.blocks);
            let (context, b) = (&self.context, &self.buffers);
            upload_bytes(context, &b.params, bytemuck::bytes_of(&params))?;
            upload_bytes(context, &b.cell_scan, bytemuck::bytes_of(&cell_scan))?;
            upload_bytes(context, &b.row_scan, bytemuck::bytes_of(&row_scan))?;
            match items {
                Items::Points(points) => {
                    upload_bytes(context, &b.points, bytemuck::cast_slice(points))?;
                }
                Items::Boxes(boxes) => upload_boxes(context, &b.points, boxes)?,
                Items::Spheres(centers, radii) => {
                    upload_spheres(context, &b.points, centers, radii)?;
                }
            }
            // Submitting nothing sends the writes alone.
            context.queue.submit([]);
            context.wait()
        })?;
        let bind_groups = self
            .bind_groups
            .get_or_insert_with(|| BindGroups::new(&self.context, &self.pipelines, &self.buffers));

        let (b, p, timestamps) = (&self.buffers, &self.pipelines, self.timestamps.as_ref());
        let mut encoder = self.context.device.create_command_encoder(&Default::default());
        encoder.clear_buffer(&b.cell_count.buffer, 0, Some(u64::from(cells) * 4));
        // One compute pass per stage, so the device can time each.
        let mut stage =
            |stage: Stage, dispatches: &[(&wgpu::ComputePipeline, &wgpu::BindGroup, u32)]| {
                let mut pass = encoder.begin_compute_pass(&pass_descriptor(timestamps, stage));
                for &(pipeline, group, x) in dispatches {
                    pass.set_pipeline(pipeline);
                    pass.set_bind_group(0, group, &[]);
                    pass.dispatch_workgroups(x, 1, 1);
                }
            };
        stage(Stage::Insert, &[(&p.count, &bind_groups.count, groups(n))]);
        stage(Stage::CellScan, &p.scan(&bind_groups.cell_scan, cell_scan.blocks));
        stage(Stage::Scatter, &[(&p.scatter, &bind_groups.scatter, groups(n))]);
        let count = match walk {
            Walk::Neighbors => (&p.count_neighbors, &bind_groups.count_neighbors, groups(n)),
            Walk::Boxes => (&p.box_count, &bind_groups.box_count, groups(n)),
            Walk::Spheres => (&p.sphere_count, &bind_groups.sphere_count, groups(n)),
        };
        stage(Stage::Count, &[count]);
        if rows {
            stage(Stage::RowScan, &p.scan(&bind_groups.row_scan, row_scan.blocks));
        }
        if let Some(timestamps) = timestamps {
            timestamps.resolve(&mut encoder, counted_stages(rows));
        }
        clock.passes(|| {
            self.context.queue.submit([encoder.finish()]);
            self.context.wait()
        })
    }

    /// Grows the buffers for `n` points and `cells` cells; drops the bind
    /// groups if any buffer was remade.
    fn reserve(&mut self, params: Params, cells: u32, cell_blocks: u32, row_blocks: u32) {
        let (n, cells, stride) = (u64::from(params.n), u64::from(cells), u64::from(params.stride));
        let most = self.max_binding;
        let b = &mut self.buffers;
        let wanted: [(&mut DeviceBuffer, u64); 13] = [
            (&mut b.points, 4 * stride * n),
            (&mut b.cell_of, 4 * n),
            (&mut b.slot, 4 * n),
            (&mut b.cell_count, 4 * cells),
            (&mut b.cell_start, 4 * (cells + 1)),
            (&mut b.cell_blocks, 4 * u64::from(cell_blocks)),
            (&mut b.sorted_pos, 16 * n),
            (&mut b.sorted_id, 4 * n),
            (&mut b.row_count, 4 * n),
            (&mut b.row_start, 4 * (n + 1)),
            (&mut b.row_blocks, 4 * u64::from(row_blocks)),
            (&mut b.read_rows, 4 * (n + 1)),
            (&mut b.params, std::mem::size_of::<Params>() as u64),
        ];
        let mut remade = 0;
        for (buffer, bytes) in wanted {
            remade += u64::from(buffer.reserve(&self.context, bytes, most));
        }
        // The scan params (16 bytes) and the total (4) fit every buffer's
        // first size.
        if remade > 0 {
            self.allocations += remade;
            self.bind_groups = None;
        }
    }
}

impl NeighborListSearch for GpuNeighborSearch {
    type Error = GpuError;

    /// Runs the whole search on the device and reads back the CSR lists:
    /// row `i` is point `i`, entries ascending, exactly as
    /// every CPU structure gives them.
    ///
    /// # Errors
    ///
    /// [`GpuError::Point`] with the [`PointError`](broadphase_neighbors::PointError)
    /// a CPU build gives (the first non-finite point; more than
    /// [`max_points`](GpuNeighborSearch::max_points) points) or for a
    /// radius outside [`MIN_RADIUS`](crate::MIN_RADIUS)`..=`[`MAX_RADIUS`](broadphase_neighbors::MAX_RADIUS);
    /// [`GpuError::TooManyNeighbors`] when the lists outgrow one device
    /// buffer; device failures. `out` is then left untouched.
    fn find_neighbor_lists(
        &mut self,
        points: &[Vec3],
        radius: f32,
        out: &mut NeighborLists,
    ) -> Result<(), GpuError> {
        let clock = CallClock::start();
        let Some((lo, hi)) = validate(points, radius, self.max_points())? else {
            out.copy_from_csr(&[0], &[]);
            return Ok(());
        };
        let params = plan(points.len(), lo, hi, radius, self.max_cells());
        self.rows(clock, params, Items::Points(points), Walk::Neighbors, |offsets, entries| {
            out.copy_from_csr(offsets, entries);
        })
    }
}

impl GpuNeighborSearch {
    /// [`find_neighbor_lists`](NeighborListSearch::find_neighbor_lists) in
    /// a [`PeriodicDomain`]: distances through the nearest image on its
    /// periodic axes, by the CPU's rule (see [`PeriodicDomain::offset`]);
    /// the same lists as
    /// [`PeriodicGrid`](broadphase_neighbors::PeriodicGrid)'s, rows sorted.
    ///
    /// # Errors
    ///
    /// [`GpuError::Periodic`] with what [`PeriodicGrid::build`](broadphase_neighbors::PeriodicGrid::build)
    /// refuses (a radius below [`MIN_RADIUS`](crate::MIN_RADIUS) too);
    /// otherwise as [`find_neighbor_lists`](NeighborListSearch::find_neighbor_lists).
    /// `out` is then left untouched.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// use broadphase_gpu::{GpuContext, GpuNeighborSearch};
    /// use broadphase_neighbors::{NeighborLists, PeriodicDomain};
    /// use glam::Vec3;
    /// let domain = PeriodicDomain::new(Vec3::ZERO, Vec3::splat(10.0), [true, true, false])?;
    /// let points = [Vec3::new(0.2, 5.0, 5.0), Vec3::new(9.9, 5.0, 5.0), Vec3::new(5.0, 5.0, 0.1)];
    /// let mut gpu = GpuNeighborSearch::new(&GpuContext::new()?);
    /// let mut lists = NeighborLists::default();
    /// gpu.find_periodic_neighbor_lists(&domain, &points, 1.0, &mut lists)?;
    /// assert_eq!(lists.neighbors(0), [1]); // 0.3 apart through the x faces
    /// assert!(lists.neighbors(2).is_empty()); // z has walls
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn find_periodic_neighbor_lists(
        &mut self,
        domain: &PeriodicDomain,
        points: &[Vec3],
        radius: f32,
        out: &mut NeighborLists,
    ) -> Result<(), GpuError> {
        let clock = CallClock::start();
        if !validate_periodic(domain, points, radius, self.max_points())? {
            out.copy_from_csr(&[0], &[]);
            return Ok(());
        }
        let params = plan_periodic(points.len(), domain, radius, self.max_cells());
        self.rows(clock, params, Items::Points(points), Walk::Neighbors, |offsets, entries| {
            out.copy_from_csr(offsets, entries);
        })
    }

    /// Runs `walk` for a planned grid and hands the CSR rows read back
    /// (offsets, entries) to `take`; `clock` started with the call.
    pub(crate) fn rows(
        &mut self,
        mut clock: CallClock,
        params: Params,
        items: Items<'_>,
        walk: Walk,
        take: impl FnOnce(&[u32], &[u32]),
    ) -> Result<(), GpuError> {
        self.counts(&mut clock, params, items, walk, true)?;
        let n = params.n;
        let mut total = 0u32;
        let (context, b) = (&self.context, &self.buffers);
        clock.readback(|| {
            let mut encoder = context.device.create_command_encoder(&Default::default());
            let total_at = u64::from(n) * 4;
            encoder.copy_buffer_to_buffer(
                &b.row_start.buffer,
                total_at,
                &b.read_total.buffer,
                0,
                4,
            );
            context.queue.submit([encoder.finish()]);
            read_back(context, [(&b.read_total.buffer, 4)], |[t]| total = t[0])
        })?;
        let max = self.max_binding / 4;
        // The scan saturates: u32::MAX means "at least that many".
        if total == u32::MAX || u64::from(total) > max {
            return Err(GpuError::TooManyNeighbors { total: u64::from(total), max });
        }
        let entry_bytes = u64::from(total) * 4;
        let most = self.max_binding;
        let b = &mut self.buffers;
        let remade = clock.upload(|| {
            u64::from(b.entries.reserve(&self.context, entry_bytes, most))
                + u64::from(b.read_entries.reserve(&self.context, entry_bytes, most))
        });
        if remade > 0 {
            self.allocations += remade;
            self.bind_groups = None;
        }
        let bind_groups = self
            .bind_groups
            .get_or_insert_with(|| BindGroups::new(&self.context, &self.pipelines, &self.buffers));

        let (context, b, timestamps) = (&self.context, &self.buffers, self.timestamps.as_ref());
        let mut encoder = context.device.create_command_encoder(&Default::default());
        {
            let mut pass = encoder.begin_compute_pass(&pass_descriptor(timestamps, Stage::Fill));
            let (pipeline, group) = match walk {
                Walk::Neighbors => (&self.pipelines.fill, &bind_groups.fill),
                Walk::Boxes => (&self.pipelines.box_fill, &bind_groups.box_fill),
                Walk::Spheres => (&self.pipelines.sphere_fill, &bind_groups.sphere_fill),
            };
            pass.set_pipeline(pipeline);
            pass.set_bind_group(0, group, &[]);
            let (x, y) = fill_groups(n);
            pass.dispatch_workgroups(x, y, 1);
        }
        if let Some(timestamps) = timestamps {
            timestamps.resolve(&mut encoder, &[Stage::Fill]);
        }
        clock.passes(|| {
            context.queue.submit([encoder.finish()]);
            context.wait()
        })?;
        let device_passes = self.device_passes(&Stage::ALL)?;
        clock.readback(|| {
            let mut encoder = context.device.create_command_encoder(&Default::default());
            let row_bytes = (u64::from(n) + 1) * 4;
            encoder.copy_buffer_to_buffer(
                &b.row_start.buffer,
                0,
                &b.read_rows.buffer,
                0,
                row_bytes,
            );
            if entry_bytes > 0 {
                encoder.copy_buffer_to_buffer(
                    &b.entries.buffer,
                    0,
                    &b.read_entries.buffer,
                    0,
                    entry_bytes,
                );
            }
            context.queue.submit([encoder.finish()]);
            let reads = [(&b.read_rows.buffer, row_bytes), (&b.read_entries.buffer, entry_bytes)];
            read_back(context, reads, |[offsets, entries]| take(offsets, entries))
        })?;
        self.timings = clock.finish(device_passes);
        Ok(())
    }
}

/// The stages `counts` runs: the row scan too when `rows`.
fn counted_stages(rows: bool) -> &'static [Stage] {
    let last = if rows { Stage::RowScan } else { Stage::Count };
    &Stage::ALL[..=last as usize]
}

impl Buffers {
    fn all(&self) -> [&DeviceBuffer; 18] {
        [
            &self.params,
            &self.cell_scan,
            &self.row_scan,
            &self.points,
            &self.cell_of,
            &self.slot,
            &self.cell_count,
            &self.cell_start,
            &self.cell_blocks,
            &self.sorted_pos,
            &self.sorted_id,
            &self.row_count,
            &self.row_start,
            &self.row_blocks,
            &self.entries,
            &self.read_total,
            &self.read_rows,
            &self.read_entries,
        ]
    }
}

impl Pipelines {
    /// The pipelines, with fills that sort rows of up to `short_row`
    /// entries in each invocation's own memory.
    fn new(context: &GpuContext, short_row: u32) -> Self {
        let device = &context.device;
        let module = |label: &str, parts: &[&str]| {
            device.create_shader_module(wgpu::ShaderModuleDescriptor {
                label: Some(label),
                source: wgpu::ShaderSource::Wgsl(parts.concat().into()),
            })
        };
        let pipeline = |module: &wgpu::ShaderModule, entry: &str| {
            device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
                label: Some(entry),
                // Each entry point's layout holds the bindings it uses.
                layout: None,
                module,
                entry_point: Some(entry),
                compilation_options: Default::default(),
                cache: None,
            })
        };
        let common = include_str!("shaders/common.wgsl");
        let stencil = include_str!("shaders/stencil.wgsl");
        let rows = format!(
            "const FILL_WG: u32 = {FILL_WG}u;\nconst SHORT_ROW: u32 = {short_row}u;\n{}",
            include_str!("shaders/rows.wgsl")
        );
        let rows = rows.as_str();
        let count = module("count", &[common, include_str!("shaders/count.wgsl")]);
        let scan = module("scan", &[include_str!("shaders/scan.wgsl")]);
        let scatter = module("scatter", &[common, include_str!("shaders/scatter.wgsl")]);
        let neighbors =
            module("neighbors", &[common, stencil, rows, include_str!("shaders/neighbors.wgsl")]);
        let boxes = module("boxes", &[common, stencil, rows, include_str!("shaders/boxes.wgsl")]);
        let spheres =
            module("spheres", &[common, stencil, rows, include_str!("shaders/spheres.wgsl")]);
        Self {
            count: pipeline(&count, "main"),
            scan_blocks: pipeline(&scan, "scan_blocks"),
            scan_block_sums: pipeline(&scan, "scan_block_sums"),
            add_block_offsets: pipeline(&scan, "add_block_offsets"),
            scatter: pipeline(&scatter, "main"),
            count_neighbors: pipeline(&neighbors, "count"),
            fill: pipeline(&neighbors, "fill"),
            box_count: pipeline(&boxes, "box_count"),
            box_fill: pipeline(&boxes, "box_fill"),
            sphere_count: pipeline(&spheres, "sphere_count"),
            sphere_fill: pipeline(&spheres, "sphere_fill"),
        }
    }

    /// The dispatches of a prefix sum over `blocks` blocks of 256 counts.
    fn scan<'a>(
        &'a self,
        groups: &'a ScanBindGroups,
        blocks: u32,
    ) -> [(&'a wgpu::ComputePipeline, &'a wgpu::BindGroup, u32); 3] {
        [
            (&self.scan_blocks, &groups.blocks, blocks),
            (&self.scan_block_sums, &groups.block_sums, 1),
            (&self.add_block_offsets, &groups.add, blocks),
        ]
    }
}

impl BindGroups {
    fn new(context: &GpuContext, p: &Pipelines, b: &Buffers) -> Self {
        let group = |pipeline: &wgpu::ComputePipeline, buffers: &[(u32, &DeviceBuffer)]| {
            let entries: Vec<wgpu::BindGroupEntry<'_>> = buffers
                .iter()
                .map(|&(binding, buffer)| wgpu::BindGroupEntry {
                    binding,
                    resource: buffer.buffer.as_entire_binding(),
                })
                .collect();
            context.device.create_bind_group(&wgpu::BindGroupDescriptor {
                label: None,
                layout: &pipeline.get_bind_group_layout(0),
                entries: &entries,
            })
        };
        let scan = |params, counts, sums, blocks| ScanBindGroups {
            blocks: group(&p.scan_blocks, &[(0, params), (1, counts), (2, sums), (3, blocks)]),
            block_sums: group(&p.scan_block_sums, &[(0, params), (3, blocks)]),
            add: group(&p.add_block_offsets, &[(0, params), (2, sums), (3, blocks)]),
        };
        // The count and fill passes of points, boxes and spheres read the
        // sorted particles and write rows through the same bindings (boxes
        // read their own bounds too); each pipeline still needs its own
        // group, as its layout is its own.
        // The count and fill passes run one walk, which writes the entries
        // only when filling; it names them, so the counts bind them too.
        let counting = [
            (0, &b.params),
            (1, &b.sorted_pos),
            (2, &b.sorted_id),
            (3, &b.cell_start),
            (4, &b.row_count),
            (6, &b.entries),
        ];
        let filling = [
            (0, &b.params),
            (1, &b.sorted_pos),
            (2, &b.sorted_id),
            (3, &b.cell_start),
            (5, &b.row_start),
            (6, &b.entries),
        ];
        Self {
            count: group(
                &p.count,
                &[
                    (0, &b.params),
                    (1, &b.points),
                    (2, &b.cell_count),
                    (3, &b.cell_of),
                    (4, &b.slot),
                ],
            ),
            cell_scan: scan(&b.cell_scan, &b.cell_count, &b.cell_start, &b.cell_blocks),
            scatter: group(
                &p.scatter,
                &[
                    (0, &b.params),
                    (1, &b.points),
                    (2, &b.cell_start),
                    (3, &b.cell_of),
                    (4, &b.slot),
                    (5, &b.sorted_pos),
                    (6, &b.sorted_id),
                ],
            ),
            count_neighbors: group(&p.count_neighbors, &counting),
            row_scan: scan(&b.row_scan, &b.row_count, &b.row_start, &b.row_blocks),
            fill: group(&p.fill, &filling),
            box_count: group(&p.box_count, &[counting.as_slice(), &[(7, &b.points)]].concat()),
            box_fill: group(&p.box_fill, &[filling.as_slice(), &[(7, &b.points)]].concat()),
            sphere_count: group(&p.sphere_count, &counting),
            sphere_fill: group(&p.sphere_fill, &filling),
        }
    }
}

/// Writes the boxes as six floats each (min, then max).
fn upload_boxes(
    context: &GpuContext,
    buffer: &DeviceBuffer,
    boxes: &[Aabb],
) -> Result<(), GpuError> {
    upload_rows(context, buffer, boxes.len(), |i| {
        let b = &boxes[i];
        [b.min.x, b.min.y, b.min.z, b.max.x, b.max.y, b.max.z]
    })
}

/// Writes the spheres as four floats each (center, then radius).
fn upload_spheres(
    context: &GpuContext,
    buffer: &DeviceBuffer,
    centers: &[Vec3],
    radii: &[f32],
) -> Result<(), GpuError> {
    upload_rows(context, buffer, centers.len(), |i| {
        let c = centers[i];
        [c.x, c.y, c.z, radii[i]]
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use broadphase_neighbors::CountingSortGrid;

    /// Rows either side of the longest a fill sorts in private memory, set
    /// far below the default (which the oracle tests cover): piles of 8 to 11
    /// coincident points, interleaved, and a cloud with rows on both
    /// sides of 8, against the CPU grid.
    #[test]
    fn rows_either_side_of_a_small_short_row() {
        let Some(context) = crate::context::test_context() else { return };
        let mut gpu = GpuNeighborSearch::with_short_row(&context, GpuSearchConfig::default(), 8);
        let mut left = [8usize, 9, 10, 11];
        let mut piles = Vec::new();
        while left.iter().any(|&k| k > 0) {
            for (pile, k) in left.iter_mut().enumerate().filter(|(_, k)| **k > 0) {
                piles.push(Vec3::new(10.0 * pile as f32, 0.0, 0.0));
                *k -= 1;
            }
        }
        let mut cloud = Vec::new();
        let mut state = 7u32;
        for _ in 0..3000 {
            let mut next = || {
                state = state.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
                (state >> 8) as f32 / (1u32 << 24) as f32 * 12.0
            };
            cloud.push(Vec3::new(next(), next(), next()));
        }
        for (what, points) in [("piles of 8 to 11", &piles), ("a cloud", &cloud)] {
            let (mut got, mut expected) = (NeighborLists::default(), NeighborLists::default());
            gpu.find_neighbor_lists(points, 1.0, &mut got).unwrap();
            CountingSortGrid::default().find_neighbor_lists(points, 1.0, &mut expected).unwrap();
            assert_eq!(got.offsets(), expected.offsets(), "{what}");
            assert_eq!(got.indices(), expected.indices(), "{what}");
        }
        let mut lengths = |points: &[Vec3]| {
            let mut lists = NeighborLists::default();
            gpu.find_neighbor_lists(points, 1.0, &mut lists).unwrap();
            lists.rows().map(|r| r.len()).collect::<Vec<_>>()
        };
        let cloud_rows = lengths(&cloud);
        assert!(cloud_rows.iter().any(|&n| n < 8) && cloud_rows.iter().any(|&n| n > 8));
        let pile_rows = lengths(&piles);
        assert_eq!(pile_rows.iter().filter(|&&n| n == 8).count(), 9, "rows at the capacity");
        assert_eq!(pile_rows.iter().filter(|&&n| n > 8).count(), 10 + 11, "rows beyond it");
    }
}
