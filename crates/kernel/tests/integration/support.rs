//! Shared by this crate's tests: the grid's two paths (`find_pairs`, and
//! `build` then `pairs`) and its queries against the brute-force oracles.

#![allow(dead_code, unreachable_pub)]

use broadphase_kernel::{Aabb, AdaptiveGrid, GridConfig, brute_force_pairs, brute_force_query};

/// Sorted pairs from `build` then `pairs` (leaving the grid built), after
/// checking that one frame of `find_pairs` gives the same set.
pub fn sorted_pairs(grid: &mut AdaptiveGrid, boxes: &[Aabb]) -> Vec<[u32; 2]> {
    let mut found = Vec::new();
    grid.find_pairs(boxes, &mut found).expect("valid scene");
    found.sort_unstable();
    grid.build(boxes).expect("valid scene");
    let mut pairs = Vec::new();
    grid.pairs(&mut pairs);
    pairs.sort_unstable();
    assert!(
        found == pairs,
        "{:?}: find_pairs {} pairs, build + pairs {}",
        grid.config(),
        found.len(),
        pairs.len()
    );
    pairs
}

/// Both paths and the queries on `boxes`, with every config, against brute
/// force; the kept tree validates. Returns the number of pairs.
pub fn check_against_brute_force(
    what: &str,
    boxes: &[Aabb],
    configs: &[GridConfig],
    queries: &[Aabb],
) -> usize {
    let mut expected = Vec::new();
    brute_force_pairs(boxes, &mut expected).unwrap();
    let expected_hits: Vec<Vec<u32>> = queries
        .iter()
        .map(|q| {
            let mut hits = Vec::new();
            brute_force_query(boxes, q, &mut hits).unwrap();
            hits.sort_unstable();
            hits
        })
        .collect();
    for config in configs {
        let mut grid = AdaptiveGrid::with_config(*config);
        let mut pairs = Vec::new();
        grid.find_pairs(boxes, &mut pairs).unwrap();
        pairs.sort_unstable();
        assert_pairs(&pairs, &expected, &format!("{what}, {config:?}, find_pairs"));

        grid.build(boxes).unwrap();
        grid.validate(boxes).unwrap_or_else(|e| panic!("{what}, {config:?}: {e}"));
        grid.pairs(&mut pairs);
        pairs.sort_unstable();
        assert_pairs(&pairs, &expected, &format!("{what}, {config:?}, build + pairs"));

        let mut hits = Vec::new();
        for (q, want) in queries.iter().zip(&expected_hits) {
            grid.query_aabb(q, &mut hits).unwrap();
            hits.sort_unstable();
            assert_eq!(&hits, want, "{what}, {config:?}: query {q:?}");
        }
    }
    expected.len()
}

/// Equal sorted pair lists, or a message naming a missing or extra pair.
fn assert_pairs(got: &[[u32; 2]], expected: &[[u32; 2]], what: &str) {
    if got != expected {
        let missing = expected.iter().find(|p| got.binary_search(p).is_err());
        let extra = got.iter().find(|p| expected.binary_search(p).is_err());
        let repeated = got.windows(2).find(|w| w[0] == w[1]);
        panic!(
            "{what}: {} pairs, brute force {}; first missing {missing:?}, first extra \
             {extra:?}, first repeated {repeated:?}",
            got.len(),
            expected.len()
        );
    }
}
