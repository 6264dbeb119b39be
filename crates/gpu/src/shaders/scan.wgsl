// Prefix sums of `len` counts into `sums` (len + 1 entries: sums[0] = 0,
// sums[i + 1] = counts[0] + ... + counts[i]), in three dispatches:
//   scan_blocks        one workgroup per 256 counts: local sums, block totals
//   scan_block_sums    one workgroup: the block totals' exclusive sums
//   add_block_offsets  each block's offset added to its sums
// Additions saturate at 0xffffffff, so a total that does not fit u32 reads
// back as that value instead of wrapping to a small, wrong one.
struct ScanParams {
    len: u32,
    blocks: u32,
    _unused0: u32,
    _unused1: u32,
}

@group(0) @binding(0) var<uniform> S: ScanParams;
@group(0) @binding(1) var<storage, read> counts: array<u32>;
@group(0) @binding(2) var<storage, read_write> sums: array<u32>;
@group(0) @binding(3) var<storage, read_write> block_sums: array<u32>;

const WG: u32 = 256u;
const SATURATED: u32 = 0xffffffffu;

var<workgroup> tmp: array<u32, 256>;

// Saturating addition: associative on u32, so any scan order gives the same sums.
fn add(a: u32, b: u32) -> u32 {
    let s = a + b;
    return select(s, SATURATED, s < a);
}

// Hillis-Steele inclusive scan of one value per invocation, left in `tmp`.
// Call from uniform control flow only (it has barriers).
fn wg_inclusive_scan(lid: u32, v: u32) -> u32 {
    tmp[lid] = v;
    workgroupBarrier();
    for (var off = 1u; off < WG; off = off << 1u) {
        var t = 0u;
        if (lid >= off) { t = tmp[lid - off]; }
        workgroupBarrier();
        tmp[lid] = add(tmp[lid], t);
        workgroupBarrier();
    }
    return tmp[lid];
}

@compute @workgroup_size(256)
fn scan_blocks(@builtin(local_invocation_id) lid3: vec3<u32>,
               @builtin(workgroup_id) wid: vec3<u32>) {
    let lid = lid3.x;
    let i = wid.x * WG + lid;
    var v = 0u;
    if (i < S.len) { v = counts[i]; }
    let inclusive = wg_inclusive_scan(lid, v);
    if (i < S.len) { sums[i + 1u] = inclusive; }
    if (i == 0u) { sums[0] = 0u; }
    if (lid == WG - 1u) { block_sums[wid.x] = inclusive; }
}

// Each invocation owns a run of consecutive block totals: it sums its run,
// the workgroup scans the 256 run totals once, and each invocation writes
// its run's exclusive sums. Two serial loops of blocks / 256 loads each,
// where scanning 256 totals at a time would take 16 barriers per 256.
@compute @workgroup_size(256)
fn scan_block_sums(@builtin(local_invocation_id) lid3: vec3<u32>) {
    let lid = lid3.x;
    let per = (S.blocks + WG - 1u) / WG;
    let first = min(lid * per, S.blocks);
    let last = min(first + per, S.blocks);
    var total = 0u;
    for (var i = first; i < last; i++) { total = add(total, block_sums[i]); }
    _ = wg_inclusive_scan(lid, total);
    var running = 0u;
    if (lid > 0u) { running = tmp[lid - 1u]; }
    for (var i = first; i < last; i++) {
        let v = block_sums[i];
        block_sums[i] = running;
        running = add(running, v);
    }
}

@compute @workgroup_size(256)
fn add_block_offsets(@builtin(global_invocation_id) gid: vec3<u32>,
                     @builtin(workgroup_id) wid: vec3<u32>) {
    let i = gid.x;
    if (i < S.len) { sums[i + 1u] = add(sums[i + 1u], block_sums[wid.x]); }
}
