// The CSR rows the count and fill passes write: prepended to
// neighbors.wgsl, boxes.wgsl and spheres.wgsl.
@group(0) @binding(4) var<storage, read_write> row_count: array<u32>;
@group(0) @binding(5) var<storage, read> row_start: array<u32>; // rows + 1
@group(0) @binding(6) var<storage, read_write> entries: array<u32>;

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
