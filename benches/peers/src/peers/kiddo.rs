//! kiddo 6.3 (`ImmutableKdTree`), used the way benches/neighbors-peers uses
//! it: build, then one `within::<SquaredEuclidean>(r²).unsorted()` query per
//! particle (inclusive boundary, like ours); partners with a higher index kept.

use broadphase::glam::Vec3;
use kiddo::{ImmutableKdTree, SquaredEuclidean};

type Tree = ImmutableKdTree<f32, 3>;

/// Points as kiddo wants them.
pub fn entries(points: &[Vec3]) -> Vec<[f32; 3]> {
    points.iter().map(|p| p.to_array()).collect()
}

/// Contacts of spheres: each queried with `r_i + max radius`.
pub fn contacts(points: &[[f32; 3]], radii: &[f32], max: f32, out: &mut Vec<[u32; 2]>) {
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

/// Pairs of points closer than `radius` (inclusive).
pub fn pairs(points: &[[f32; 3]], radius: f32, out: &mut Vec<[u32; 2]>) {
    let tree = Tree::new_from_slice(points).expect("valid points");
    out.clear();
    for (i, p) in points.iter().enumerate() {
        let found =
            tree.query(p).within::<SquaredEuclidean<f32>>(radius * radius).unsorted().execute();
        out.extend(
            found.iter().map(|h| h.item as usize).filter(|&j| j > i).map(|j| [i as u32, j as u32]),
        );
    }
}
