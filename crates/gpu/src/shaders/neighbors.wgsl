// Search, in two passes over the sorted points: `count` writes each
// point's number of neighbors (in the caller's order), `fill` writes them
// into its CSR row and sorts the row. Both visit the same 3x3x3 cells
// (wrapped on a periodic domain's axes) with the same test, so a row holds
// exactly the count the scan sized it for.
@group(0) @binding(1) var<storage, read> sorted_pos: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read> sorted_id: array<u32>;
@group(0) @binding(3) var<storage, read> cell_start: array<u32>; // cells + 1
@group(0) @binding(4) var<storage, read_write> row_count: array<u32>;
@group(0) @binding(5) var<storage, read> row_start: array<u32>; // n + 1
@group(0) @binding(6) var<storage, read_write> entries: array<u32>;

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

@compute @workgroup_size(256)
fn count(@builtin(global_invocation_id) gid: vec3<u32>) {
    let s = gid.x;
    if (s >= P.n) { return; }
    let p = sorted_pos[s].xyz;
    let c = cell_coords(p);
    let xs = stencil_axis(c.x, P.dims.x, periodic(0u));
    let ys = stencil_axis(c.y, P.dims.y, periodic(1u));
    let zs = stencil_axis(c.z, P.dims.z, periodic(2u));
    var found = 0u;
    for (var dz = zs.x; dz <= zs.y; dz++) {
        let z = wrapped(c.z, dz, P.dims.z);
        for (var dy = ys.x; dy <= ys.y; dy++) {
            let ranges = stencil_row(c, xs, wrapped(c.y, dy, P.dims.y), z);
            for (var j = ranges.x; j < ranges.y; j++) {
                if (j != s && dist2(p, sorted_pos[j].xyz) <= P.r2) { found += 1u; }
            }
            for (var j = ranges.z; j < ranges.w; j++) {
                if (j != s && dist2(p, sorted_pos[j].xyz) <= P.r2) { found += 1u; }
            }
        }
    }
    row_count[sorted_id[s]] = found;
}

@compute @workgroup_size(256)
fn fill(@builtin(global_invocation_id) gid: vec3<u32>) {
    let s = gid.x;
    if (s >= P.n) { return; }
    let p = sorted_pos[s].xyz;
    let c = cell_coords(p);
    let base = row_start[sorted_id[s]];
    let xs = stencil_axis(c.x, P.dims.x, periodic(0u));
    let ys = stencil_axis(c.y, P.dims.y, periodic(1u));
    let zs = stencil_axis(c.z, P.dims.z, periodic(2u));
    var at = base;
    for (var dz = zs.x; dz <= zs.y; dz++) {
        let z = wrapped(c.z, dz, P.dims.z);
        for (var dy = ys.x; dy <= ys.y; dy++) {
            let ranges = stencil_row(c, xs, wrapped(c.y, dy, P.dims.y), z);
            for (var j = ranges.x; j < ranges.y; j++) {
                if (j != s && dist2(p, sorted_pos[j].xyz) <= P.r2) {
                    entries[at] = sorted_id[j];
                    at += 1u;
                }
            }
            for (var j = ranges.z; j < ranges.w; j++) {
                if (j != s && dist2(p, sorted_pos[j].xyz) <= P.r2) {
                    entries[at] = sorted_id[j];
                    at += 1u;
                }
            }
        }
    }
    sort_row(base, at - base);
}

// Heapsort of entries[base..base + len] in place: O(len log len) even for
// the rows of a pile of coincident points, and no scratch memory.
fn sort_row(base: u32, len: u32) {
    if (len < 2u) { return; }
    var start = len / 2u;
    while (start > 0u) {
        start -= 1u;
        sift_down(base, start, len);
    }
    var end = len;
    while (end > 1u) {
        end -= 1u;
        let top = entries[base];
        entries[base] = entries[base + end];
        entries[base + end] = top;
        sift_down(base, 0u, end);
    }
}

fn sift_down(base: u32, start: u32, end: u32) {
    var root = start;
    loop {
        var child = 2u * root + 1u;
        if (child >= end) { break; }
        if (child + 1u < end && entries[base + child + 1u] > entries[base + child]) {
            child += 1u;
        }
        let r = entries[base + root];
        let c = entries[base + child];
        if (r >= c) { break; }
        entries[base + root] = c;
        entries[base + child] = r;
        root = child;
    }
}
