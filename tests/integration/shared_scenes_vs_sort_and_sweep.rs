//! The adaptive grid against the sort-and-sweep oracle on every shared box
//! scene of at most 100k boxes, on both paths (`find_pairs`, and `build`
//! then `pairs`) with every pair kernel this CPU runs; the tree invariants
//! on the scenes small enough for the O(boxes × leaves) checker; and queries
//! against query10k by brute force.

use broadphase::{
    Aabb, AdaptiveGrid,
    grid::{GridConfig, PairKernel},
    oracle::{SortAndSweep, brute_force_query},
};
use broadphase_scenes::{all_box_scenes_up_to_100k, query_boxes, query10k};

/// Largest scene `validate()` is run on (sparse20k and dense20k have 20,004).
const VALIDATE_UP_TO: usize = 20_004;

fn grid(kernel: PairKernel) -> AdaptiveGrid {
    AdaptiveGrid::with_config(GridConfig { kernel, ..GridConfig::default() })
}

/// Panics with a summary unless `got` (sorted) equals `expected` (sorted).
fn assert_same(got: &[[u32; 2]], expected: &[[u32; 2]], what: &str) {
    if got != expected {
        let missing = expected.iter().filter(|p| got.binary_search(p).is_err()).count();
        let repeated = got.windows(2).filter(|w| w[0] == w[1]).count();
        panic!(
            "{what}: {} pairs, sort-and-sweep {}; {missing} missing, {repeated} repeated",
            got.len(),
            expected.len()
        );
    }
}

fn check_all_scenes(kernel: PairKernel) {
    let mut grid = grid(kernel);
    let mut sweep = SortAndSweep::default();
    let (mut got, mut expected) = (Vec::new(), Vec::new());
    for scene in all_box_scenes_up_to_100k() {
        let boxes = &scene.boxes;
        assert!(boxes.len() <= 100_000, "{}", scene.name);
        sweep.find_pairs(boxes, &mut expected).unwrap();
        expected.sort_unstable();

        grid.find_pairs(boxes, &mut got).unwrap_or_else(|e| panic!("{}: {e}", scene.name));
        got.sort_unstable();
        assert_same(&got, &expected, &format!("{}, {kernel:?}, find_pairs", scene.name));

        grid.build(boxes).unwrap_or_else(|e| panic!("{}: {e}", scene.name));
        if boxes.len() <= VALIDATE_UP_TO {
            grid.validate(boxes).unwrap_or_else(|e| panic!("{}, {kernel:?}: {e}", scene.name));
        }
        grid.pairs(&mut got);
        got.sort_unstable();
        assert_same(&got, &expected, &format!("{}, {kernel:?}, build + pairs", scene.name));
    }
}

/// The default grid equals sort-and-sweep on every scene, on both paths.
#[test]
fn default_grid_equals_sort_and_sweep_on_all_scenes() {
    assert_eq!(GridConfig::default().kernel, PairKernel::Auto);
    check_all_scenes(PairKernel::Auto);
}

/// Every kernel this CPU runs equals sort-and-sweep on every scene (pile:
/// 1,999 partners per box, one big leaf), on both paths.
#[test]
fn every_kernel_equals_sort_and_sweep_on_all_scenes() {
    for kernel in PairKernel::available() {
        check_all_scenes(kernel);
    }
}

/// 200 query boxes from query10k's distribution, plus each teapot, hit
/// exactly what brute force hits.
#[test]
fn query10k_queries_equal_brute_force() {
    let scene = query10k();
    let mut queries: Vec<Aabb> = query_boxes(200, 2024);
    queries.extend_from_slice(&scene.boxes[scene.boxes.len() - 3..]);
    for kernel in PairKernel::available() {
        let mut grid = grid(kernel);
        grid.build(&scene.boxes).unwrap();
        grid.validate(&scene.boxes).unwrap();
        let (mut got, mut expected) = (Vec::new(), Vec::new());
        let mut total = 0;
        for q in &queries {
            grid.query_aabb(q, &mut got).unwrap();
            got.sort_unstable();
            brute_force_query(&scene.boxes, q, &mut expected).unwrap();
            assert_eq!(got, expected, "{kernel:?}: query {q:?}");
            total += got.len();
        }
        assert!(total > 0, "the queries should hit something");
    }
}
