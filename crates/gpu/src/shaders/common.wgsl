// Prepended to every shader but scan.wgsl (see `Pipelines::new`).

// The grid and the radius of one search; `Params` in grid.rs.
struct Params {
    half_lo: vec3<f32>, // half the bounds' min corner
    r2: f32,            // radius * radius, rounded once in f32 like the CPU's
    inv2: vec3<f32>,    // 2 / cell size per axis (0 for a grid of one cell)
    one: f32,           // always 1.0, read from here so no compiler knows it
    dims: vec3<u32>,    // cells per axis, x fastest
    n: u32,             // points
    size: vec3<f32>,    // a periodic domain's lengths (max - min in f32)
    wrap: u32,          // bit a set: axis a is periodic (cells tile the domain)
    stride: u32,        // floats per input item: 3 (a point), 6 (a box: min, max)
    unused0: u32,
    unused1: u32,
    unused2: u32,
}

@group(0) @binding(0) var<uniform> P: Params;

const WG: u32 = 256u;

// floor((v - lo) / cell), clamped into the grid. Computed on halves: halving
// is exact, so this rounds as (v - lo) * (1 / cell) would, and no difference
// of two finite f32 overflows. Monotone in v, which is what the stencil's
// proof of completeness needs (see docs/GPU.md).
fn axis_cell(v: f32, half_lo: f32, inv2: f32, last: u32) -> u32 {
    let t = (v * 0.5 - half_lo) * inv2;
    return u32(clamp(floor(t), 0.0, f32(last)));
}

fn cell_coords(p: vec3<f32>) -> vec3<u32> {
    return vec3<u32>(
        axis_cell(p.x, P.half_lo.x, P.inv2.x, P.dims.x - 1u),
        axis_cell(p.y, P.half_lo.y, P.inv2.y, P.dims.y - 1u),
        axis_cell(p.z, P.half_lo.z, P.inv2.z, P.dims.z - 1u),
    );
}

fn cell_index(c: vec3<u32>) -> u32 {
    return (c.z * P.dims.y + c.y) * P.dims.x + c.x;
}

// Squared distance, bit for bit the CPU's ((dx*dx + dy*dy) + dz*dz) with
// every operation rounded on its own. WGSL cannot forbid a driver to
// contract a*b + c into fma(a, b, c), which rounds once and would move
// pairs near the radius across it. Each square is multiplied by P.one
// (1.0, unknown to the compiler): the only products that can feed an add
// are then `square * one`, and fma(square, 1.0, c) == square + c exactly.
//
// On a periodic axis the difference goes through the nearest image first,
// with the CPU's rule: d - L if d > L / 2, d + L if d < -L / 2 (no product
// there, so nothing to contract).
fn dist2(p: vec3<f32>, q: vec3<f32>) -> f32 {
    var d = q - p;
    if (P.wrap != 0u) {
        for (var a = 0u; a < 3u; a++) {
            if ((P.wrap & (1u << a)) != 0u) {
                let half = P.size[a] * 0.5;
                if (d[a] > half) {
                    d[a] = d[a] - P.size[a];
                } else if (d[a] < -half) {
                    d[a] = d[a] + P.size[a];
                }
            }
        }
    }
    let xx = (d.x * d.x) * P.one;
    let yy = (d.y * d.y) * P.one;
    let zz = (d.z * d.z) * P.one;
    return (xx + yy) + zz;
}
