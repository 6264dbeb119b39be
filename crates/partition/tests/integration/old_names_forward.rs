//! The names kept one release as deprecated aliases answer exactly as the
//! names that replaced them.

#![allow(deprecated)]

use broadphase_jobs::JobSystem;
use broadphase_kernel::{Aabb, AdaptiveGrid};
use broadphase_partition::{BatchHits, GridTree};
use broadphase_scenes::dense20k;
use glam::Vec3;

#[test]
fn grid_tree_pairs_is_find_pairs() {
    let boxes = dense20k().boxes;
    let jobs = JobSystem::new(2);
    let mut tree = GridTree::default();
    let (mut old, mut new) = (Vec::new(), Vec::new());
    tree.find_pairs(&jobs, &boxes, &mut new).unwrap();
    tree.pairs(&jobs, &boxes, &mut old).unwrap();
    assert!(!new.is_empty());
    assert_eq!(old, new);
    tree.try_pairs(&jobs, &boxes, &mut old).unwrap();
    assert_eq!(old, new);
    let bad = [Aabb::new(Vec3::ONE, Vec3::ZERO)];
    assert_eq!(tree.try_pairs(&jobs, &bad, &mut old), tree.try_find_pairs(&jobs, &bad, &mut new));
}

#[test]
fn query_boxes_is_query_aabbs() {
    let boxes = dense20k().boxes;
    let mut grid = AdaptiveGrid::default();
    grid.build(&boxes).unwrap();
    let jobs = JobSystem::new(2);
    let queries = &boxes[..500];
    let (mut old, mut new) = (BatchHits::default(), BatchHits::default());
    new.query_aabbs(&jobs, &grid, queries).unwrap();
    old.query_boxes(&jobs, &grid, queries).unwrap();
    assert_eq!(new.len(), queries.len());
    assert_eq!((old.offsets(), old.ids()), (new.offsets(), new.ids()));
}
