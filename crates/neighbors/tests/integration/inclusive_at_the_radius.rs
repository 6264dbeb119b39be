//! The distance rule, tested where it matters: on lattices whose spacing and
//! radius are exact in binary, neighbors exactly at the radius are included
//! (`distance <= radius`, like touching boxes overlap), and the largest
//! `f32` below the radius excludes them. Expected counts come from integer
//! arithmetic on the lattice indices, not from floats.

use crate::support;

use broadphase_neighbors::{NeighborLists, brute_force_neighbor_pairs};
use glam::Vec3;
use support::{all_structures, check_points};

const N: i32 = 6;

/// The `N³` lattice of spacing `h`, offset so it straddles zero.
fn lattice(h: f32) -> (Vec<Vec3>, Vec<[i32; 3]>) {
    let mut points = Vec::new();
    let mut ijk = Vec::new();
    for k in 0..N {
        for j in 0..N {
            for i in 0..N {
                let c = [i - 2, j - 3, k - 1];
                points.push(Vec3::new(c[0] as f32, c[1] as f32, c[2] as f32) * h);
                ijk.push(c);
            }
        }
    }
    (points, ijk)
}

/// Pairs whose squared index distance is at most `steps2`: exact.
fn integer_pairs(ijk: &[[i32; 3]], steps2: i32) -> Vec<[u32; 2]> {
    let mut pairs = Vec::new();
    for a in 0..ijk.len() {
        for b in a + 1..ijk.len() {
            let d2: i32 = (0..3).map(|t| (ijk[a][t] - ijk[b][t]).pow(2)).sum();
            if d2 <= steps2 {
                pairs.push([a as u32, b as u32]);
            }
        }
    }
    pairs
}

#[test]
fn points_exactly_at_the_radius_are_neighbors() {
    // Spacing h and radius m·h, both exact: a pair m steps apart on an axis
    // is exactly at the radius.
    for (h, m) in [(1.0f32, 1), (1.0, 2), (0.25, 1), (0.25, 3), (8.0, 2)] {
        let (points, ijk) = lattice(h);
        let radius = h * m as f32;
        let expected = integer_pairs(&ijk, m * m);
        let mut oracle = Vec::new();
        brute_force_neighbor_pairs(&points, radius, &mut oracle).unwrap();
        assert_eq!(oracle, expected, "the oracle itself, h {h} m {m}");
        let at_radius = expected
            .iter()
            .filter(|[a, b]| {
                let (a, b) = (ijk[*a as usize], ijk[*b as usize]);
                (0..3).map(|t| (a[t] - b[t]).pow(2)).sum::<i32>() == m * m
            })
            .count();
        assert!(at_radius > 0);
        check_points(&points, radius, &points[..2], &[radius]);

        // Just below the radius, the pairs at exactly the radius go away.
        let below = radius.next_down();
        let expected_below = integer_pairs(&ijk, m * m - 1);
        assert_eq!(expected.len() - expected_below.len(), at_radius);
        for (name, mut s) in all_structures() {
            s.build(&points, below).unwrap();
            let mut pairs = Vec::new();
            s.pairs(&mut pairs);
            pairs.sort_unstable();
            assert_eq!(pairs, expected_below, "{name}: h {h} m {m}, radius just below");
        }
    }
}

#[test]
fn query_radius_is_inclusive_too() {
    let (points, _) = lattice(0.5);
    let center = points[(2 * N * N + 3 * N + 2) as usize]; // an interior lattice point
    for (name, mut s) in all_structures() {
        s.build(&points, 0.5).unwrap();
        let mut hits = Vec::new();
        s.query(center, 0.5, &mut hits).unwrap();
        assert_eq!(hits.len(), 7, "{name}: the point and its 6 axis neighbors");
        s.query(center, 0.5f32.next_down(), &mut hits).unwrap();
        assert_eq!(hits.len(), 1, "{name}: only the point itself");
        s.query(center, 0.0, &mut hits).unwrap();
        assert_eq!(hits.len(), 1, "{name}: radius 0 finds the coincident point");
    }
}

#[test]
fn lattice_neighbor_counts() {
    // Radius 1 on spacing 1: interior points have exactly 6 neighbors, a
    // corner 3; the lists never hold the point itself.
    let (points, ijk) = lattice(1.0);
    for (name, mut s) in all_structures() {
        s.build(&points, 1.0).unwrap();
        let mut lists = NeighborLists::default();
        s.lists(&mut lists);
        for (i, row) in lists.rows().enumerate() {
            let faces = ijk[i]
                .iter()
                .zip([-2, -3, -1])
                .filter(|&(&c, lo)| c == lo || c == lo + N - 1)
                .count();
            assert_eq!(row.len(), 6 - faces, "{name}: point {i} {:?}", ijk[i]);
            assert!(!row.contains(&(i as u32)), "{name}: point {i} lists itself");
        }
    }
}
