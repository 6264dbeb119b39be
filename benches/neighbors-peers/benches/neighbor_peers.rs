//! Our neighbor search against kiddo 6.3, a kd-tree, in the same run, on
//! the shared particle scenes, one thread.
//!
//! kiddo is used the way its documentation suggests for radius search: an
//! `ImmutableKdTree` built from the points, then one
//! `query(p).within::<SquaredEuclidean<f32>>(r²).unsorted().execute()` per
//! particle (inclusive boundary, like ours).
//!
//! - `particles5k`: contact pairs of 5,000 spheres, radii 1–4. kiddo
//!   queries each sphere with `r_i + max radius` and keeps partners with a
//!   higher index that touch; ours is `CountingSortGrid` build + contacts.
//! - `sph1m`: CSR neighbor lists of 1,000,000 jittered-lattice points,
//!   radius 2 (~31 neighbors each). kiddo: build, then one query per point,
//!   appended row by row; ours: `CountingSortGrid` build + sorted lists, and
//!   build + caller-order lists.
//!
//! Before timing, each peer's answer is checked against ours (same contact
//! pairs; same neighbor-list total).
//!
//! ```text
//! cd benches/neighbors-peers && cargo bench
//! ```

use std::hint::black_box;
use std::time::Duration;

use broadphase::glam::Vec3;
use broadphase::neighbors::{CountingSortGrid, NeighborLists, NeighborSearch};
use broadphase_scenes::{SPH1M_RADIUS, particles5k, sph1m};
use criterion::{Criterion, SamplingMode, criterion_main};
use kiddo::{ImmutableKdTree, SquaredEuclidean};

type Tree = ImmutableKdTree<f32, 3>;

fn entries(points: &[Vec3]) -> Vec<[f32; 3]> {
    points.iter().map(|p| p.to_array()).collect()
}

/// kiddo contacts: every sphere queried with `r_i + max`, partners kept if
/// they touch and have a higher index.
fn kiddo_contacts(points: &[[f32; 3]], radii: &[f32], max: f32, out: &mut Vec<[u32; 2]>) {
    let tree = Tree::new_from_slice(points).expect("valid points");
    out.clear();
    for (i, p) in points.iter().enumerate() {
        let reach = radii[i] + max;
        let found =
            tree.query(p).within::<SquaredEuclidean<f32>>(reach * reach).unsorted().execute();
        for hit in found {
            let j = hit.item as usize;
            let touch = radii[i] + radii[j];
            if j > i && hit.distance <= touch * touch {
                out.push([i as u32, j as u32]);
            }
        }
    }
}

/// kiddo neighbor lists in CSR form (rows in caller order, self left out).
fn kiddo_lists(points: &[[f32; 3]], radius: f32, offsets: &mut Vec<usize>, indices: &mut Vec<u32>) {
    let tree = Tree::new_from_slice(points).expect("valid points");
    offsets.clear();
    indices.clear();
    offsets.push(0);
    for (i, p) in points.iter().enumerate() {
        let found =
            tree.query(p).within::<SquaredEuclidean<f32>>(radius * radius).unsorted().execute();
        indices.extend(found.iter().map(|hit| hit.item).filter(|&j| j as usize != i));
        offsets.push(indices.len());
    }
}

fn particles(c: &mut Criterion) {
    let scene = particles5k();
    let max = scene.radii.iter().fold(0.0f32, |m, &r| m.max(r));
    let points = entries(&scene.centers);
    let mut grid = CountingSortGrid::default();
    let (mut ours, mut theirs) = (Vec::new(), Vec::new());
    grid.build_spheres(&scene.centers, &scene.radii).expect("valid scene");
    grid.neighbor_pairs(&mut ours);
    kiddo_contacts(&points, &scene.radii, max, &mut theirs);
    ours.sort_unstable();
    theirs.sort_unstable();
    assert!(ours == theirs, "kiddo and the grid disagree on particles5k");

    let mut group = c.benchmark_group("particles5k");
    group.sample_size(30).warm_up_time(Duration::from_millis(500));
    group.measurement_time(Duration::from_secs(2));
    group.bench_function("grid/build+contacts", |b| {
        b.iter(|| {
            grid.build_spheres(black_box(&scene.centers), &scene.radii).expect("valid scene");
            grid.neighbor_pairs(&mut ours);
            black_box(ours.len())
        });
    });
    group.bench_function("kiddo/build+contacts", |b| {
        b.iter(|| {
            kiddo_contacts(black_box(&points), &scene.radii, max, &mut theirs);
            black_box(theirs.len())
        });
    });
    group.finish();
}

fn sph(c: &mut Criterion) {
    let scene = sph1m();
    let points = entries(&scene);
    let mut grid = CountingSortGrid::default();
    let mut lists = NeighborLists::default();
    let (mut offsets, mut indices) = (Vec::new(), Vec::new());
    grid.build(&scene, SPH1M_RADIUS).expect("valid scene");
    grid.neighbor_lists(&mut lists);
    kiddo_lists(&points, SPH1M_RADIUS, &mut offsets, &mut indices);
    assert_eq!(lists.total(), indices.len(), "kiddo and the grid disagree on sph1m");
    assert_eq!(lists.offsets(), offsets, "kiddo and the grid disagree on sph1m rows");

    let mut group = c.benchmark_group("sph1m");
    group.sample_size(10).sampling_mode(SamplingMode::Flat);
    group.warm_up_time(Duration::from_millis(500)).measurement_time(Duration::from_secs(5));
    group.bench_function("grid/build+sorted_lists", |b| {
        b.iter(|| {
            grid.build(black_box(&scene), SPH1M_RADIUS).expect("valid scene");
            grid.sorted_neighbor_lists(0..grid.len(), &mut lists);
            black_box(lists.total())
        });
    });
    group.bench_function("grid/build+lists", |b| {
        b.iter(|| {
            grid.build(black_box(&scene), SPH1M_RADIUS).expect("valid scene");
            grid.neighbor_lists(&mut lists);
            black_box(lists.total())
        });
    });
    group.bench_function("kiddo/build+lists", |b| {
        b.iter(|| {
            kiddo_lists(black_box(&points), SPH1M_RADIUS, &mut offsets, &mut indices);
            black_box(indices.len())
        });
    });
    let tree = Tree::new_from_slice(&points).expect("valid points");
    group.bench_function("kiddo/build", |b| {
        b.iter(|| black_box(Tree::new_from_slice(black_box(&points)).expect("valid").size()));
    });
    group.bench_function("kiddo/queries", |b| {
        b.iter(|| {
            let mut total = 0;
            for p in &points {
                let found = tree.query(p).within::<SquaredEuclidean<f32>>(4.0).unsorted().execute();
                total += found.len();
            }
            black_box(total)
        });
    });
    group.finish();
}

/// The benchmark groups (a private module: `criterion_group!`'s `pub fn`
/// cannot carry a doc comment).
mod groups {
    use super::{particles, sph};
    use criterion::criterion_group;

    criterion_group!(benches, particles, sph);
}

criterion_main!(groups::benches);
