// Search, in two passes over the sorted points: `count` writes each
// point's number of neighbors (in the caller's order), `fill` writes them
// into its CSR row and sorts the row. Both visit the same 3x3x3 cells
// (wrapped on a periodic domain's axes) with the same test, so a row holds
// exactly the count the scan sized it for.

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
