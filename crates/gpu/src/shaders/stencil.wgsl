// The sorted items and the cells' slots, and the walk over the cells
// around one: prepended to neighbors.wgsl, boxes.wgsl and spheres.wgsl.
@group(0) @binding(1) var<storage, read> sorted_pos: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read> sorted_id: array<u32>;
@group(0) @binding(3) var<storage, read> cell_start: array<u32>; // cells + 1

// The cells around c along one axis, as offsets lo..=hi: -1..=1 inside
// the grid, cut at a wall, and on a periodic axis wrapped, each cell once
// (a periodic axis of two cells has neighbors 0 and +1, of one cell, 0).
fn stencil_axis(c: u32, dims: u32, periodic: bool) -> vec2<i32> {
    if (periodic) {
        return vec2<i32>(select(-1, 0, dims < 3u), select(1, 0, dims < 2u));
    }
    return vec2<i32>(select(-1, 0, c == 0u), select(1, 0, c + 1u >= dims));
}

fn wrapped(c: u32, offset: i32, dims: u32) -> u32 {
    return u32((i32(c) + offset + i32(dims)) % i32(dims));
}

// The slots of row (y, z) around cell c, in at most two ranges: cells are
// numbered x fastest, so the cells x-1..=x+1 are one range unless the row
// wraps, when it is split where it wraps.
fn stencil_row(c: vec3<u32>, x: vec2<i32>, y: u32, z: u32) -> vec4<u32> {
    let row = (z * P.dims.y + y) * P.dims.x;
    let x0 = i32(c.x) + x.x;
    let x1 = i32(c.x) + x.y;
    if (x0 >= 0 && x1 < i32(P.dims.x)) {
        return vec4<u32>(cell_start[row + u32(x0)], cell_start[row + u32(x1) + 1u], 0u, 0u);
    }
    // A periodic row of three or more cells, wrapping at one end.
    let a = wrapped(c.x, x.x, P.dims.x);
    let b = wrapped(c.x, x.y, P.dims.x);
    if (x0 < 0) {
        // The last cell, then 0..=b.
        return vec4<u32>(cell_start[row + a], cell_start[row + a + 1u],
                         cell_start[row], cell_start[row + b + 1u]);
    }
    // a..=last, then the first cell.
    return vec4<u32>(cell_start[row + a], cell_start[row + P.dims.x],
                     cell_start[row], cell_start[row + b + 1u]);
}

fn periodic(axis: u32) -> bool {
    return (P.wrap & (1u << axis)) != 0u;
}
