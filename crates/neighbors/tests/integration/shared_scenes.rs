//! The shared particle scenes: particles5k's contacts equal brute force for
//! every structure; an SPH lattice's neighbor lists equal brute force and
//! hold 30–50 neighbors inside; on a bigger lattice, too big for brute
//! force in a test, the three structures agree with each other.

use crate::support;

use broadphase_neighbors::{
    NeighborLists, brute_force_neighbor_pairs, brute_force_neighbor_rows,
    brute_force_sphere_contacts,
};
use broadphase_scenes::{SPH1M_RADIUS, particles5k, sph};
use support::{check_built, default_structures};

#[test]
fn particles5k_contacts_match_brute_force() {
    let scene = particles5k();
    let mut expected = Vec::new();
    brute_force_sphere_contacts(&scene.centers, &scene.radii, &mut expected).unwrap();
    // About two contacts per sphere (the scene's own test pins 1.7–2.1).
    assert!((4_000..5_500).contains(&expected.len()), "{} contacts", expected.len());
    for (name, mut s) in default_structures() {
        s.build_spheres(&scene.centers, &scene.radii).unwrap();
        check_built(&name, &s, scene.centers.len(), &expected);
    }
}

#[test]
fn sph_lattice_lists_match_brute_force() {
    let n = 16;
    let points = sph(n);
    let mut expected = Vec::new();
    brute_force_neighbor_pairs(&points, SPH1M_RADIUS, &mut expected).unwrap();
    let rows = brute_force_neighbor_rows(points.len(), &expected);
    // Interior points (whole neighbor ball inside the lattice): 30-50 each.
    let (lo, hi) = (SPH1M_RADIUS + 0.5, n as f32 - 1.5 - SPH1M_RADIUS);
    let interior: Vec<usize> = (0..points.len())
        .filter(|&i| points[i].min_element() >= lo && points[i].max_element() <= hi)
        .collect();
    let mean =
        interior.iter().map(|&i| rows[i].len()).sum::<usize>() as f64 / interior.len() as f64;
    assert!((30.0..=50.0).contains(&mean), "mean interior neighbors {mean}");
    for (name, mut s) in default_structures() {
        s.build(&points, SPH1M_RADIUS).unwrap();
        check_built(&name, &s, points.len(), &expected);
    }
}

#[test]
fn structures_agree_on_a_larger_lattice() {
    let points = sph(48); // 110,592 points, ~3.4M neighbor entries
    let mut reference: Option<(String, Vec<[u32; 2]>, Vec<usize>)> = None;
    let mut lists = NeighborLists::default();
    for (name, mut s) in default_structures() {
        s.build(&points, SPH1M_RADIUS).unwrap();
        let mut pairs = Vec::new();
        s.pairs(&mut pairs);
        pairs.sort_unstable();
        s.lists(&mut lists);
        let counts: Vec<usize> = lists.rows().map(<[u32]>::len).collect();
        assert_eq!(lists.total(), 2 * pairs.len(), "{name}");
        match &reference {
            None => reference = Some((name, pairs, counts)),
            Some((first, expected, expected_counts)) => {
                assert!(pairs == *expected, "{name} and {first} disagree on pairs");
                assert!(counts == *expected_counts, "{name} and {first} disagree on lists");
            }
        }
    }
}
