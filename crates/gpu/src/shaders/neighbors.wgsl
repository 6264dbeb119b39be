// Search, in two passes over the sorted points: `count` writes each
// point's number of neighbors (in the caller's order), `fill` writes them
// into its CSR row and sorts the row. Both visit the same 3x3x3 cells with
// the same test, so a row holds exactly the count the scan sized it for.
@group(0) @binding(1) var<storage, read> sorted_pos: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read> sorted_id: array<u32>;
@group(0) @binding(3) var<storage, read> cell_start: array<u32>; // cells + 1
@group(0) @binding(4) var<storage, read_write> row_count: array<u32>;
@group(0) @binding(5) var<storage, read> row_start: array<u32>; // n + 1
@group(0) @binding(6) var<storage, read_write> entries: array<u32>;

// The slots of the cells x-1..=x+1 in row (y + dy, z + dz) around cell c:
// cells are numbered x fastest, so a row of cells is one range.
fn stencil_row(c: vec3<u32>, dy: i32, dz: i32) -> vec2<u32> {
    let y = i32(c.y) + dy;
    let z = i32(c.z) + dz;
    if (y < 0 || y >= i32(P.dims.y) || z < 0 || z >= i32(P.dims.z)) {
        return vec2<u32>(0u, 0u);
    }
    let row = (u32(z) * P.dims.y + u32(y)) * P.dims.x;
    let x0 = select(c.x - 1u, 0u, c.x == 0u);
    let x1 = min(c.x + 1u, P.dims.x - 1u);
    return vec2<u32>(cell_start[row + x0], cell_start[row + x1 + 1u]);
}

@compute @workgroup_size(256)
fn count(@builtin(global_invocation_id) gid: vec3<u32>) {
    let s = gid.x;
    if (s >= P.n) { return; }
    let p = sorted_pos[s].xyz;
    let c = cell_coords(p);
    var found = 0u;
    for (var dz = -1; dz <= 1; dz++) {
        for (var dy = -1; dy <= 1; dy++) {
            let range = stencil_row(c, dy, dz);
            for (var j = range.x; j < range.y; j++) {
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
    var at = base;
    for (var dz = -1; dz <= 1; dz++) {
        for (var dy = -1; dy <= 1; dy++) {
            let range = stencil_row(c, dy, dz);
            for (var j = range.x; j < range.y; j++) {
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
