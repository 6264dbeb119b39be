// Counting sort: point i goes to slot start[cell] + its place in the cell.
@group(0) @binding(1) var<storage, read> points: array<f32>;
@group(0) @binding(2) var<storage, read> cell_start: array<u32>; // cells + 1
@group(0) @binding(3) var<storage, read> cell_of: array<u32>;
@group(0) @binding(4) var<storage, read> slot: array<u32>;
@group(0) @binding(5) var<storage, read_write> sorted_pos: array<vec4<f32>>;
@group(0) @binding(6) var<storage, read_write> sorted_id: array<u32>;

@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    if (i >= P.n) { return; }
    let s = cell_start[cell_of[i]] + slot[i];
    // Spheres (four floats each) carry their radius along; the other
    // items need only their position.
    var w = 0.0;
    if (P.stride == 4u) { w = points[P.stride * i + 3u]; }
    sorted_pos[s] = vec4<f32>(points[P.stride * i], points[P.stride * i + 1u], points[P.stride * i + 2u], w);
    sorted_id[s] = i;
}
