// Box pairs, in two passes over the boxes sorted by the cell of their min
// corner: `box_count` writes each box's number of overlapping boxes of a
// higher index (so each pair is counted once, by its lower box), `box_fill`
// writes them, sorted, into its CSR row; both run the one walk
// below. Cells are wider than any box, so the min corners of two
// overlapping boxes are at most one cell apart, and the 3x3x3 cells around
// a box's min corner hold its partners.
@group(0) @binding(7) var<storage, read> boxes: array<f32>; // min xyz, max xyz

fn box_max(id: u32) -> vec3<f32> {
    return vec3<f32>(boxes[6u * id + 3u], boxes[6u * id + 4u], boxes[6u * id + 5u]);
}

// Inclusive, as on the CPU: touching faces overlap. Comparisons only, so exact.
fn overlaps(a_min: vec3<f32>, a_max: vec3<f32>, b_min: vec3<f32>, b_max: vec3<f32>) -> bool {
    return all(a_min <= b_max) && all(b_min <= a_max);
}

// The partners of a higher index of the box in slot s: returns how many,
// and hands each id to `keep` by `mode`
// for the row from entries[base].
fn partners_of_box(s: u32, mode: u32, base: u32) -> u32 {
    let a = sorted_id[s];
    let a_min = sorted_pos[s].xyz;
    let a_max = box_max(a);
    let c = cell_coords(a_min);
    let xs = stencil_axis(c.x, P.dims.x, false);
    let ys = stencil_axis(c.y, P.dims.y, false);
    let zs = stencil_axis(c.z, P.dims.z, false);
    var at = 0u;
    for (var dz = zs.x; dz <= zs.y; dz++) {
        for (var dy = ys.x; dy <= ys.y; dy++) {
            let range = stencil_row(c, xs, u32(i32(c.y) + dy), u32(i32(c.z) + dz));
            for (var j = range.x; j < range.y; j++) {
                let b = sorted_id[j];
                if (b > a && overlaps(a_min, a_max, sorted_pos[j].xyz, box_max(b))) {
                    keep(b, at, base, mode);
                    at += 1u;
                }
            }
        }
    }
    return at;
}

@compute @workgroup_size(256)
fn box_count(@builtin(global_invocation_id) gid: vec3<u32>) {
    let s = gid.x;
    if (s >= P.n) { return; }
    row_count[sorted_id[s]] = partners_of_box(s, COUNT, 0u);
}

@compute @workgroup_size(FILL_WG)
fn box_fill(
    @builtin(workgroup_id) group: vec3<u32>,
    @builtin(num_workgroups) groups: vec3<u32>,
    @builtin(local_invocation_index) local: u32,
) {
    let s = fill_slot(group, groups, local);
    if (s >= P.n) { return; }
    let row = sorted_id[s];
    let base = row_start[row];
    let mode = fill_mode(row);
    finish_row(base, partners_of_box(s, mode, base), mode);
}
