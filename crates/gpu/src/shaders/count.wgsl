// Insert: each point's cell, and its place in that cell from an atomic
// counter (the order within a cell is whatever the atomics gave; the lists
// are sorted at the end, so it never shows).
@group(0) @binding(1) var<storage, read> points: array<f32>; // x, y, z first of every item
@group(0) @binding(2) var<storage, read_write> cell_count: array<atomic<u32>>;
@group(0) @binding(3) var<storage, read_write> cell_of: array<u32>;
@group(0) @binding(4) var<storage, read_write> slot: array<u32>;

@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    if (i >= P.n) { return; }
    let p = vec3<f32>(points[P.stride * i], points[P.stride * i + 1u], points[P.stride * i + 2u]);
    let c = cell_index(cell_coords(p));
    cell_of[i] = c;
    slot[i] = atomicAdd(&cell_count[c], 1u);
}
