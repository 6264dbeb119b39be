// The CSR rows the count and fill passes write: prepended to
// neighbors.wgsl, boxes.wgsl and spheres.wgsl.
@group(0) @binding(4) var<storage, read_write> row_count: array<u32>;
@group(0) @binding(5) var<storage, read> row_start: array<u32>; // rows + 1
@group(0) @binding(6) var<storage, read_write> entries: array<u32>;

// How the walk shared by a count and a fill pass hands on what it finds:
// COUNT only counts; SHORT keeps each id in the invocation's `short_row`,
// which `finish_row` then writes out sorted; LONG writes each id straight
// to entries[base + at] and heapsorts the row there. A fill knows its
// row's length before the walk (the scan sized it), so it takes SHORT
// when the row fits: LONG keeps piles of coincident points correct at any
// size. The count entry points pass COUNT as a constant, so they never
// touch `short_row`.
//
// FILL_WG (the fill's workgroup size) and SHORT_ROW (at most 64) are
// prepended by `Pipelines::new`.
const COUNT: u32 = 0u;
const SHORT: u32 = 1u;
const LONG: u32 = 2u;

var<private> short_row: array<u32, SHORT_ROW>;

// Records `id` as the at-th entry found for the row from entries[base].
fn keep(id: u32, at: u32, base: u32, mode: u32) {
    if (mode == SHORT) {
        short_row[at] = id;
    } else if (mode == LONG) {
        entries[base + at] = id;
    }
}

// The mode that fills row `row` (`row_start` holds its length).
fn fill_mode(row: u32) -> u32 {
    return select(LONG, SHORT, row_start[row + 1u] - row_start[row] <= SHORT_ROW);
}

// Leaves the row of `len` entries from entries[base] sorted. A short row
// is sorted by rank: each id goes to the place its count of smaller ids
// says (a row's ids are distinct). Every invocation of a warp reads the
// same slot at each step, so the reads of the private array stay
// coalesced; an insertion sort's shifts scatter them. On an H100 the fill
// of sph1M took 2.1 ms this way, 5.1 ms by insertion sort and 7.3 ms by
// heapsort in the list buffer, against 0.9 ms for writing the rows
// unsorted.
fn finish_row(base: u32, len: u32, mode: u32) {
    if (mode == SHORT) {
        for (var i = 0u; i < len; i++) {
            let id = short_row[i];
            var rank = 0u;
            for (var j = 0u; j < len; j++) { rank += select(0u, 1u, short_row[j] < id); }
            entries[base + rank] = id;
        }
    } else if (mode == LONG) {
        sort_row(base, len);
    }
}

// The sorted slot a fill invocation walks from: fills are dispatched in
// two dimensions (a million points need more than 65,535 workgroups of
// FILL_WG).
fn fill_slot(group: vec3<u32>, groups: vec3<u32>, local: u32) -> u32 {
    return (group.y * groups.x + group.x) * FILL_WG + local;
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
