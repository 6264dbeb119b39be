// Search, in two passes over the sorted points: `count` writes each
// point's number of neighbors (in the caller's order), `fill` writes them,
// sorted, into its CSR row. Both run the one walk below, so a
// row holds exactly the count the scan sized it for.

// Point s's neighbors in the 3x3x3 cells around it (wrapped on a periodic
// domain's axes): returns how many, and hands each id to `keep` by `mode`
// for the row from entries[base].
fn neighbors_of(s: u32, mode: u32, base: u32) -> u32 {
    let p = sorted_pos[s].xyz;
    let c = cell_coords(p);
    let xs = stencil_axis(c.x, P.dims.x, periodic(0u));
    let ys = stencil_axis(c.y, P.dims.y, periodic(1u));
    let zs = stencil_axis(c.z, P.dims.z, periodic(2u));
    var at = 0u;
    for (var dz = zs.x; dz <= zs.y; dz++) {
        let z = wrapped(c.z, dz, P.dims.z);
        for (var dy = ys.x; dy <= ys.y; dy++) {
            let ranges = stencil_row(c, xs, wrapped(c.y, dy, P.dims.y), z);
            for (var j = ranges.x; j < ranges.y; j++) { at = keep_if_near(s, p, j, mode, base, at); }
            for (var j = ranges.z; j < ranges.w; j++) { at = keep_if_near(s, p, j, mode, base, at); }
        }
    }
    return at;
}

// Whether slot j is a neighbor of point s at p: if so, its id is the row's
// at-th entry, and the next one is one further.
fn keep_if_near(s: u32, p: vec3<f32>, j: u32, mode: u32, base: u32, at: u32) -> u32 {
    if (j != s && dist2(p, sorted_pos[j].xyz) <= P.r2) {
        keep(sorted_id[j], at, base, mode);
        return at + 1u;
    }
    return at;
}

@compute @workgroup_size(256)
fn count(@builtin(global_invocation_id) gid: vec3<u32>) {
    let s = gid.x;
    if (s >= P.n) { return; }
    row_count[sorted_id[s]] = neighbors_of(s, COUNT, 0u);
}

@compute @workgroup_size(FILL_WG)
fn fill(
    @builtin(workgroup_id) group: vec3<u32>,
    @builtin(num_workgroups) groups: vec3<u32>,
    @builtin(local_invocation_index) local: u32,
) {
    let s = fill_slot(group, groups, local);
    if (s >= P.n) { return; }
    let row = sorted_id[s];
    let base = row_start[row];
    let mode = fill_mode(row);
    finish_row(base, neighbors_of(s, mode, base), mode);
}
