//! Point scenes for neighbor search: spheres of mixed radii, and SPH-like
//! particle lattices with one fixed radius.

use glam::Vec3;

use crate::SplitMix64;

/// Spheres of varying radii: sphere `i` is `centers[i]`, `radii[i]`; two
/// spheres are in contact when `distance <= r_i + r_j`.
///
/// # Examples
///
/// ```
/// let s = broadphase_scenes::particles5k();
/// assert_eq!(s.centers.len(), s.radii.len());
/// ```
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Spheres {
    /// Sphere centers.
    pub centers: Vec<Vec3>,
    /// Sphere radii, one per center.
    pub radii: Vec<f32>,
}

const PARTICLES5K_SEED: u64 = 0x5EED_0000_0000_0101;
const SPH_SEED: u64 = 0x5EED_0000_0000_0102;

/// How many spheres particles5k has.
const PARTICLES_COUNT: usize = 5_000;
/// The smallest and largest particles5k radius.
const PARTICLES_RADII: (f32, f32) = (1.0, 4.0);
/// The mean number of contacts per sphere particles5k is sized for.
const PARTICLES_CONTACTS: f64 = 2.0;

/// Side of the cube particles5k's centers fill (see [`particles5k`]).
fn particles_side() -> f32 {
    let (lo, hi) = (f64::from(PARTICLES_RADII.0), f64::from(PARTICLES_RADII.1));
    let mean = lo + hi;
    let half = (hi - lo) / 2.0;
    // Variance of the sum of two uniforms on [-half, half].
    let variance = 2.0 * (2.0 * half) * (2.0 * half) / 12.0;
    let mean_sum_cubed = mean * mean * mean + 3.0 * mean * variance;
    let contact_volume = 4.0 / 3.0 * std::f64::consts::PI * mean_sum_cubed;
    let volume = (PARTICLES_COUNT - 1) as f64 * contact_volume / PARTICLES_CONTACTS;
    volume.cbrt() as f32
}

/// particles5k: 5,000 spheres with radii uniform in `[1, 4)` and centers
/// uniform in a cube `[0, side)³` sized for about 2 contacts per sphere. For
/// each sphere the center is drawn (x, y, z), then the radius.
///
/// The side: sphere `i` touches sphere `j` when `j`'s center lies in the
/// ball of radius `s = r_i + r_j` around `i`'s, so with `N` centers uniform
/// in a cube of volume `V` the mean contact count is
/// `(N - 1) · (4/3)π · E[s³] / V`. Radii uniform in `[1, 4]` make `s = 5 + w`,
/// `w` the sum of two independent uniforms on `[-1.5, 1.5]` (mean 0, variance
/// 2 · 3²/12 = 1.5, symmetric), so `E[s³] = 5³ + 3 · 5 · 1.5 = 147.5` (the
/// cube of the mean sum, 125, would undercount by 15%). The contact volume is
/// `(4/3)π · 147.5 ≈ 617.8`; two contacts each on average needs
/// `V = 4999 · 617.8 / 2 ≈ 1.544·10⁶`, a side of about 115.6.
///
/// Balls near a face stick out of the cube (about `9s / 8L ≈ 5%` of their
/// volume on average), so the measured mean is a little below 2: 1.85 for
/// this seed (the tests hold it to `[1.7, 2.1]`).
///
/// # Examples
///
/// ```
/// let s = broadphase_scenes::particles5k();
/// assert_eq!(s.centers.len(), 5_000);
/// assert!(s.radii.iter().all(|r| (1.0..4.0).contains(r)));
/// ```
pub fn particles5k() -> Spheres {
    let side = particles_side();
    let mut rng = SplitMix64::new(PARTICLES5K_SEED);
    let mut spheres = Spheres {
        centers: Vec::with_capacity(PARTICLES_COUNT),
        radii: Vec::with_capacity(PARTICLES_COUNT),
    };
    for _ in 0..PARTICLES_COUNT {
        let x = rng.range_f32(0.0, side);
        let y = rng.range_f32(0.0, side);
        let z = rng.range_f32(0.0, side);
        spheres.centers.push(Vec3::new(x, y, z));
        spheres.radii.push(rng.range_f32(PARTICLES_RADII.0, PARTICLES_RADII.1));
    }
    spheres
}

/// The neighbor radius for [`sph1m`] and every [`sph`] lattice.
///
/// The lattice has spacing 1, so one point per unit volume: a ball of radius
/// `r` holds about `(4/3)πr³` points, and `r = 2.0` gives about 33.5. On the
/// jittered lattice the count is a little lower: the 26 sites at distance 1,
/// √2 and √3 are always inside, the 6 at distance exactly 2 about half the
/// time, the 24 at √5 ≈ 2.24 rarely. Measured on an interior sample of
/// `sph(20)`: 30.7 neighbors per point (the tests hold it to 30–50).
pub const SPH1M_RADIUS: f32 = 2.0;

/// A jittered lattice of `count_per_axis³` points: lattice point
/// `(i, j, k)` with `i, j, k` in `0..count_per_axis` (spacing 1.0) plus a
/// jitter uniform in `[-0.25, 0.25)` per axis, then shuffled
/// (Fisher–Yates) so that slice order carries no spatial locality, as after
/// many steps of a simulation. Use with [`SPH1M_RADIUS`].
///
/// # Examples
///
/// ```
/// let points = broadphase_scenes::sph(10);
/// assert_eq!(points.len(), 1_000);
/// assert!(points.iter().all(|p| p.min_element() >= -0.25 && p.max_element() < 9.25));
/// ```
pub fn sph(count_per_axis: usize) -> Vec<Vec3> {
    let n = count_per_axis;
    let mut rng = SplitMix64::new(SPH_SEED);
    let mut points = Vec::with_capacity(n * n * n);
    for k in 0..n {
        for j in 0..n {
            for i in 0..n {
                let lattice = Vec3::new(i as f32, j as f32, k as f32);
                let jx = rng.range_f32(-0.25, 0.25);
                let jy = rng.range_f32(-0.25, 0.25);
                let jz = rng.range_f32(-0.25, 0.25);
                points.push(lattice + Vec3::new(jx, jy, jz));
            }
        }
    }
    for i in (1..points.len()).rev() {
        points.swap(i, rng.below(i + 1));
    }
    points
}

/// sph1m: 1,000,000 points, [`sph`]`(100)`: a jittered 100×100×100 lattice
/// (spacing 1.0, jitter ±0.25 per axis), shuffled. With [`SPH1M_RADIUS`]
/// each interior point has about 31 neighbors.
///
/// # Examples
///
/// ```
/// assert_eq!(broadphase_scenes::sph1m().len(), 1_000_000);
/// ```
pub fn sph1m() -> Vec<Vec3> {
    sph(100)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generators_are_deterministic() {
        assert_eq!(particles5k(), particles5k());
        assert_eq!(sph(12), sph(12));
    }

    #[test]
    fn counts_and_ranges() {
        let s = particles5k();
        assert_eq!((s.centers.len(), s.radii.len()), (5_000, 5_000));
        let side = particles_side();
        assert!((side - 115.6).abs() < 0.1, "side {side}");
        assert!(s.centers.iter().all(|c| c.is_finite()
            && c.cmpge(Vec3::ZERO).all()
            && c.cmplt(Vec3::splat(side)).all()));
        assert!(s.radii.iter().all(|r| (1.0..4.0).contains(r)));

        for n in [0, 1, 7, 20] {
            let points = sph(n);
            assert_eq!(points.len(), n * n * n);
            let hi = n as f32 - 1.0 + 0.25;
            assert!(
                points
                    .iter()
                    .all(|p| p.is_finite() && p.min_element() >= -0.25 && p.max_element() < hi)
            );
        }
    }

    #[test]
    fn sph_is_a_shuffled_jittered_lattice() {
        let n = 15;
        let points = sph(n);
        let mut seen = vec![false; n * n * n];
        for p in &points {
            let cell = p.round();
            assert!((*p - cell).abs().max_element() <= 0.25);
            let (i, j, k) = (cell.x as usize, cell.y as usize, cell.z as usize);
            let slot = &mut seen[(k * n + j) * n + i];
            assert!(!*slot, "two points near lattice site {cell}");
            *slot = true;
        }
        // Shuffled: far fewer than half the consecutive points are lattice neighbors.
        let adjacent = points.windows(2).filter(|w| w[0].distance(w[1]) < 1.6).count();
        assert!(adjacent < points.len() / 10, "{adjacent} adjacent consecutive points");
    }

    #[test]
    fn sph1m_has_a_million_points() {
        let points = sph1m();
        assert_eq!(points.len(), 1_000_000);
        assert_eq!(points[..1000], sph(100)[..1000]);
    }

    #[test]
    fn sph_radius_gives_30_to_50_neighbors() {
        // Brute force on a 20³ lattice; only interior points, whose whole
        // neighbor ball lies inside the lattice, are counted.
        let n = 20;
        let points = sph(n);
        let r2 = SPH1M_RADIUS * SPH1M_RADIUS;
        let interior_lo = SPH1M_RADIUS + 0.5;
        let interior_hi = n as f32 - 1.0 - SPH1M_RADIUS - 0.5;
        let (mut sampled, mut neighbors) = (0usize, 0usize);
        for (i, p) in points.iter().enumerate() {
            if p.min_element() < interior_lo || p.max_element() > interior_hi {
                continue;
            }
            sampled += 1;
            neighbors += points
                .iter()
                .enumerate()
                .filter(|&(j, q)| j != i && p.distance_squared(*q) < r2)
                .count();
        }
        assert!(sampled > 1_000, "{sampled} interior points");
        let mean = neighbors as f64 / sampled as f64;
        assert!((30.0..=50.0).contains(&mean), "mean neighbors {mean}");
    }

    #[test]
    fn particles5k_has_about_two_contacts_each() {
        let s = particles5k();
        let mut contacts = 0usize;
        for i in 0..s.centers.len() {
            for j in i + 1..s.centers.len() {
                let reach = s.radii[i] + s.radii[j];
                if s.centers[i].distance_squared(s.centers[j]) <= reach * reach {
                    contacts += 2;
                }
            }
        }
        let mean = contacts as f64 / s.centers.len() as f64;
        assert!((1.7..=2.1).contains(&mean), "mean contacts {mean}");
    }

    /// FNV-1a over the bit patterns of every coordinate.
    fn fingerprint(values: impl IntoIterator<Item = f32>) -> u64 {
        let mut h = 0xCBF2_9CE4_8422_2325_u64;
        for v in values {
            for byte in v.to_bits().to_le_bytes() {
                h = (h ^ u64::from(byte)).wrapping_mul(0x0000_0100_0000_01B3);
            }
        }
        h
    }

    /// Pinned like the box scenes: a change here is a breaking change.
    #[test]
    fn scenes_are_pinned() {
        let s = particles5k();
        let spheres = s.centers.iter().flat_map(|c| c.to_array()).chain(s.radii.iter().copied());
        let lattice = sph(20);
        let got = [fingerprint(spheres), fingerprint(lattice.iter().flat_map(|c| c.to_array()))];
        assert_eq!(got, [18115592506232733429, 4549788313187046628]);
    }
}
