//! The names kept one release as deprecated aliases answer exactly as the
//! names that replaced them, and `query`, the contract's name, answers as
//! `query_aabb`.

#![allow(deprecated)]

use broadphase_kernel::parts::{Bounds, Cell, Item, Quantizer};
use broadphase_kernel::{Aabb, AdaptiveGrid, GridConfig, PairKernel, Ray, SortAndSweep};
use glam::Vec3;

/// Unit boxes every 0.75 along x, so neighbours overlap, some taller.
fn row() -> Vec<Aabb> {
    (0..60)
        .map(|i| {
            let min = Vec3::new(i as f32 * 0.75, 0.0, 0.0);
            Aabb::new(min, min + Vec3::new(1.0, 1.0 + (i % 3) as f32, 1.0))
        })
        .collect()
}

#[test]
fn query_is_query_aabb() {
    let boxes = row();
    let mut grid = AdaptiveGrid::default();
    grid.build(&boxes).unwrap();
    let (mut old, mut new) = (Vec::new(), Vec::new());
    let query = Aabb::new(Vec3::new(10.0, 1.5, 0.0), Vec3::new(20.0, 2.0, 1.0));
    grid.query(&query, &mut old).unwrap();
    grid.query_aabb(&query, &mut new).unwrap();
    assert!(!new.is_empty());
    assert_eq!(old, new);
    let inverted = Aabb::new(Vec3::ONE, Vec3::ZERO);
    assert_eq!(grid.query(&inverted, &mut old), grid.query_aabb(&inverted, &mut new));
}

#[test]
fn ray_aliases_forward() {
    let boxes = row();
    let mut grid = AdaptiveGrid::default();
    grid.build(&boxes).unwrap();
    let ray = Ray::new(Vec3::new(-1.0, 0.5, 0.5), Vec3::X, 30.0);
    let skip_first = |id: u32| if id == 0 { None } else { ray.entry(&boxes[id as usize]) };
    let new = grid.cast_ray_where(&ray, skip_first).unwrap();
    assert_eq!(new, Some((1, 1.75)));
    assert_eq!(grid.cast_ray_by(&ray, skip_first).unwrap(), new);
    let (mut old_hits, mut new_hits) = (Vec::new(), Vec::new());
    grid.ray_hits_where(&ray, skip_first, &mut new_hits).unwrap();
    grid.ray_hits_by(&ray, skip_first, &mut old_hits).unwrap();
    assert!(new_hits.len() > 10);
    assert_eq!(old_hits, new_hits);
}

#[test]
fn node_walk_aliases_forward() {
    let boxes = row();
    let quantizer = Quantizer::new(&Bounds::of(&boxes), &boxes).unwrap();
    let mut items = vec![Item::default(); boxes.len()];
    quantizer.quantize_chunk(&boxes, 0, &mut items, PairKernel::Auto);
    let mut grid = AdaptiveGrid::with_config(GridConfig { leaf_capacity: 4, ..Default::default() });
    let fill = |stack: &mut [Item]| stack.copy_from_slice(&items);
    let run = |grid: &mut AdaptiveGrid, walk: &dyn Fn(&mut AdaptiveGrid, &mut Vec<[u32; 2]>)| {
        let mut out = Vec::new();
        walk(grid, &mut out);
        out.sort_unstable();
        out
    };
    let new = run(&mut grid, &|g, out| g.find_node_pairs(&items, Cell::ROOT, &boxes, out).unwrap());
    assert!(!new.is_empty());
    let old =
        run(&mut grid, &|g, out| g.find_subtree_pairs(&items, Cell::ROOT, &boxes, out).unwrap());
    assert_eq!(old, new);
    let n = items.len();
    let old = run(&mut grid, &|g, out| {
        g.find_subtree_pairs_with(n, Cell::ROOT, &boxes, out, fill).unwrap()
    });
    assert_eq!(old, new);
    let new_all = run(&mut grid, &|g, out| {
        g.find_node_overlaps_with(n, Cell::ROOT, &boxes, out, fill).unwrap()
    });
    let old_all = run(&mut grid, &|g, out| {
        g.find_subtree_overlaps_with(n, Cell::ROOT, &boxes, out, fill).unwrap()
    });
    assert_eq!(old_all, new_all);
}

#[test]
fn sort_and_sweep_pairs_is_find_pairs() {
    let boxes = row();
    let (mut old, mut new) = (Vec::new(), Vec::new());
    SortAndSweep::default().find_pairs(&boxes, &mut new).unwrap();
    SortAndSweep::default().pairs(&boxes, &mut old).unwrap();
    assert!(!new.is_empty());
    assert_eq!(old, new);
}
