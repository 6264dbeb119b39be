// Sphere contacts, in two passes over the spheres sorted by the cell of
// their center (radius in the fourth component): `sphere_count` writes each
// sphere's number of touching spheres of a higher index (so each pair is
// counted once, by its lower sphere), `sphere_fill` writes them, sorted, into its
// CSR row; both run the one walk below. Cells are wider
// than the largest sum of two radii, so the 3x3x3 cells around a center
// hold every sphere touching it.

// The CPU's rule: (dx*dx + dy*dy) + dz*dz <= (ra + rb) * (ra + rb), each
// operation rounded in f32. The distance is dist2's (guarded against
// fused multiply-adds); the sum is an add of two loads and its square is
// compared, never added, so neither can be contracted.
fn touching(p: vec4<f32>, q: vec4<f32>) -> bool {
    let t = p.w + q.w;
    return dist2(p.xyz, q.xyz) <= t * t;
}

// The touching spheres of a higher index of the sphere in slot s: returns
// how many, and hands each id to `keep` by `mode`
// for the row from entries[base].
fn contacts_of_sphere(s: u32, mode: u32, base: u32) -> u32 {
    let a = sorted_id[s];
    let p = sorted_pos[s];
    let c = cell_coords(p.xyz);
    let xs = stencil_axis(c.x, P.dims.x, false);
    let ys = stencil_axis(c.y, P.dims.y, false);
    let zs = stencil_axis(c.z, P.dims.z, false);
    var at = 0u;
    for (var dz = zs.x; dz <= zs.y; dz++) {
        for (var dy = ys.x; dy <= ys.y; dy++) {
            let range = stencil_row(c, xs, u32(i32(c.y) + dy), u32(i32(c.z) + dz));
            for (var j = range.x; j < range.y; j++) {
                let b = sorted_id[j];
                if (b > a && touching(p, sorted_pos[j])) {
                    keep(b, at, base, mode);
                    at += 1u;
                }
            }
        }
    }
    return at;
}

@compute @workgroup_size(256)
fn sphere_count(@builtin(global_invocation_id) gid: vec3<u32>) {
    let s = gid.x;
    if (s >= P.n) { return; }
    row_count[sorted_id[s]] = contacts_of_sphere(s, COUNT, 0u);
}

@compute @workgroup_size(FILL_WG)
fn sphere_fill(
    @builtin(workgroup_id) group: vec3<u32>,
    @builtin(num_workgroups) groups: vec3<u32>,
    @builtin(local_invocation_index) local: u32,
) {
    let s = fill_slot(group, groups, local);
    if (s >= P.n) { return; }
    let row = sorted_id[s];
    let base = row_start[row];
    let mode = fill_mode(row);
    finish_row(base, contacts_of_sphere(s, mode, base), mode);
}
