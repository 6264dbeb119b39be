// Search, in two passes over the sorted points: `count` writes each
// point's number of neighbors (in the caller's order), `fill` writes them
// into its CSR row and sorts the row. Both run the one walk below, so a
// row holds exactly the count the scan sized it for.

// Point s's neighbors in the 3x3x3 cells around it (wrapped on a periodic
// domain's axes): returns how many, and when `filling`, writes their ids
// from entries[base] on.
fn neighbors_of(s: u32, filling: bool, base: u32) -> u32 {
    let p = sorted_pos[s].xyz;
    let c = cell_coords(p);
    let xs = stencil_axis(c.x, P.dims.x, periodic(0u));
    let ys = stencil_axis(c.y, P.dims.y, periodic(1u));
    let zs = stencil_axis(c.z, P.dims.z, periodic(2u));
    var at = base;
    for (var dz = zs.x; dz <= zs.y; dz++) {
        let z = wrapped(c.z, dz, P.dims.z);
        for (var dy = ys.x; dy <= ys.y; dy++) {
            let ranges = stencil_row(c, xs, wrapped(c.y, dy, P.dims.y), z);
            for (var j = ranges.x; j < ranges.y; j++) { at = keep_if_near(s, p, j, filling, at); }
            for (var j = ranges.z; j < ranges.w; j++) { at = keep_if_near(s, p, j, filling, at); }
        }
    }
    return at - base;
}

// Whether slot j is a neighbor of point s at p: if so, its id goes to
// entries[at] when `filling`, and the next one goes one further.
fn keep_if_near(s: u32, p: vec3<f32>, j: u32, filling: bool, at: u32) -> u32 {
    if (j != s && dist2(p, sorted_pos[j].xyz) <= P.r2) {
        if (filling) { entries[at] = sorted_id[j]; }
        return at + 1u;
    }
    return at;
}

@compute @workgroup_size(256)
fn count(@builtin(global_invocation_id) gid: vec3<u32>) {
    let s = gid.x;
    if (s >= P.n) { return; }
    row_count[sorted_id[s]] = neighbors_of(s, false, 0u);
}

@compute @workgroup_size(256)
fn fill(@builtin(global_invocation_id) gid: vec3<u32>) {
    let s = gid.x;
    if (s >= P.n) { return; }
    let base = row_start[sorted_id[s]];
    sort_row(base, neighbors_of(s, true, base));
}
