//! The generated page (Markdown) and its SVG plots.

use std::fmt::Write as _;
use std::fs;
use std::io;
use std::path::Path;

use plotters::prelude::*;

use crate::shapes::QuerySet;
use crate::{Outcome, SceneResult};

const LOCK: &str = include_str!("../Cargo.lock");
const PEERS: [&str; 7] = ["broccoli", "parry3d", "rstar", "bvh", "obvhs", "kiddo", "plotters"];

/// The pinned version of a peer (as in Cargo.toml), checked present in
/// this package's Cargo.lock (a crate may be locked at several versions,
/// e.g. rstar also comes in through parry3d).
fn locked(name: &str) -> String {
    let pinned = match name {
        "broccoli" => "6.3.0",
        "parry3d" => "0.31.1",
        "rstar" => "0.14.0",
        "bvh" => "0.13.0",
        "kiddo" => "6.3.0",
        _ => "",
    };
    let key = format!("name = \"{name}\"\nversion = \"");
    let all: Vec<&str> = LOCK
        .match_indices(&key)
        .filter_map(|(at, _)| LOCK[at + key.len()..].split('"').next())
        .collect();
    if pinned.is_empty() {
        return all.join(" + ");
    }
    assert!(all.contains(&pinned), "{name} {pinned} is not in Cargo.lock ({all:?})");
    pinned.to_string()
}

fn machine() -> String {
    let cpu = fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split(':').nth(1))
                .map(|m| m.trim().to_string())
        })
        .unwrap_or_else(|| "unknown CPU".to_string());
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    // Same model names have come with and without AVX-512, which changes
    // which kernels run.
    #[cfg(target_arch = "x86_64")]
    let simd = if std::arch::is_x86_feature_detected!("avx512f") {
        ", AVX-512F and AVX2"
    } else if std::arch::is_x86_feature_detected!("avx2") {
        ", AVX2 (no AVX-512)"
    } else {
        ", no AVX2"
    };
    #[cfg(not(target_arch = "x86_64"))]
    let simd = "";
    format!("{cpu}{simd}, {cores} hardware threads available")
}

fn rustc() -> String {
    std::process::Command::new("rustc")
        .arg("--version")
        .output()
        .ok()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_else(|| "unknown rustc".to_string())
}

/// Today (UTC) as YYYY-MM-DD, from the system clock (civil-from-days).
fn today() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let z = (secs / 86_400) as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!("{y:04}-{m:02}-{d:02}")
}

fn ms(d: std::time::Duration) -> String {
    let v = d.as_secs_f64() * 1e3;
    if v < 10.0 {
        format!("{v:.3}")
    } else if v < 100.0 {
        format!("{v:.2}")
    } else {
        format!("{v:.1}")
    }
}

/// Median of the best peer on a scene: (name, median).
fn best_peer(s: &SceneResult) -> Option<(&'static str, std::time::Duration)> {
    s.rows
        .iter()
        .filter(|(_, peer, _)| *peer)
        .filter_map(|(n, _, o)| o.median().map(|m| (*n, m)))
        .min_by_key(|&(_, m)| m)
}

fn scene_table(md: &mut String, s: &SceneResult) {
    let best = best_peer(s);
    let _ = writeln!(md, "\n### {} ({} items, {} rounds)\n", s.name, s.boxes, s.rounds);
    let _ = writeln!(md, "| method | median ms | min ms | pairs | median / best peer |");
    let _ = writeln!(md, "|---|---:|---:|---:|---:|");
    for (name, _, o) in &s.rows {
        match o {
            Outcome::Timed { pairs, .. } => {
                let m = o.median().expect("timed");
                let ratio = best.map_or("n/a".to_string(), |(_, b)| {
                    format!("{:.2}", m.as_secs_f64() / b.as_secs_f64())
                });
                let _ = writeln!(
                    md,
                    "| {name} | {} | {} | {pairs} | {ratio} |",
                    ms(m),
                    ms(o.min().expect("timed"))
                );
            }
            Outcome::Skipped(why) => {
                let _ = writeln!(md, "| {name} | {why} | | | |");
            }
        }
    }
}

fn short(name: &str) -> &str {
    name.split(" (").next().unwrap_or(name)
}

/// Horizontal bars of medians for one scene.
fn bars(path: &Path, s: &SceneResult) -> Result<(), Box<dyn std::error::Error>> {
    let rows: Vec<(&str, f64)> = s
        .rows
        .iter()
        .filter_map(|(n, _, o)| o.median().map(|m| (*n, m.as_secs_f64() * 1e3)))
        .collect();
    let max = rows.iter().fold(0.0f64, |a, r| a.max(r.1)) * 1.6;
    let h = 60 + 34 * rows.len() as u32;
    let root = SVGBackend::new(path, (900, h)).into_drawing_area();
    root.fill(&WHITE)?;
    let mut chart = ChartBuilder::on(&root)
        .caption(format!("{}: median ms per frame (lower is better)", s.name), ("sans-serif", 18))
        .margin(10)
        .x_label_area_size(30)
        .build_cartesian_2d(0.0..max, 0.0..rows.len() as f64)?;
    chart.configure_mesh().disable_y_mesh().y_labels(0).x_desc("ms").draw()?;
    chart.draw_series(rows.iter().enumerate().map(|(i, (n, v))| {
        let c = if n.starts_with("broadphase") { BLUE } else { RGBColor(200, 90, 40) };
        let y = (rows.len() - 1 - i) as f64;
        Rectangle::new([(0.0, y + 0.15), (*v, y + 0.85)], c.filled())
    }))?;
    chart.draw_series(rows.iter().enumerate().map(|(i, (n, v))| {
        let y = (rows.len() - 1 - i) as f64;
        Text::new(format!(" {n}: {v:.3} ms"), (*v, y + 0.75), ("sans-serif", 13))
    }))?;
    root.present()?;
    Ok(())
}

/// Median ns per query of every method on every query set, one bar each,
/// grouped by set, on a log axis (rays and boxes differ by 10×, peers by
/// more).
fn query_plot(path: &Path, sets: &[QuerySet]) -> Result<(), Box<dyn std::error::Error>> {
    use crate::shapes::median;
    // Top to bottom: a set's label line, then its methods.
    let mut lines: Vec<(String, Option<(bool, f64)>)> = Vec::new();
    for set in sets {
        lines.push((format!("{}, {}", set.scene, set.queries), None));
        for (n, v) in &set.rows {
            lines.push((short(n).to_string(), Some((n.starts_with("broadphase"), median(v)))));
        }
    }
    let values = lines.iter().filter_map(|l| l.1.map(|(_, v)| v));
    let (lo, hi) = values.fold((f64::MAX, 0.0f64), |(lo, hi), v| (lo.min(v), hi.max(v)));
    let h = 60 + 20 * lines.len() as u32;
    let root = SVGBackend::new(path, (900, h)).into_drawing_area();
    root.fill(&WHITE)?;
    let mut chart = ChartBuilder::on(&root)
        .caption(
            "Queries on static sets: median ns per query, log scale (lower is better)",
            ("sans-serif", 18),
        )
        .margin(10)
        .x_label_area_size(30)
        .build_cartesian_2d((lo * 0.5..hi * 40.0).log_scale(), 0.0..lines.len() as f64)?;
    chart.configure_mesh().disable_y_mesh().y_labels(0).x_desc("ns per query").draw()?;
    let y = |i: usize| (lines.len() - 1 - i) as f64;
    chart.draw_series(lines.iter().enumerate().filter_map(|(i, (_, bar))| {
        bar.map(|(ours, v)| {
            let c = if ours { BLUE } else { RGBColor(200, 90, 40) };
            Rectangle::new([(lo * 0.5, y(i) + 0.15), (v, y(i) + 0.85)], c.filled())
        })
    }))?;
    chart.draw_series(lines.iter().enumerate().map(|(i, (label, bar))| match bar {
        Some((_, v)) => {
            Text::new(format!(" {label}: {v:.0}"), (*v, y(i) + 0.75), ("sans-serif", 12))
        }
        None => Text::new(
            label.clone(),
            (lo * 0.5, y(i) + 0.75),
            ("sans-serif", 13).into_font().style(FontStyle::Bold),
        ),
    }))?;
    root.present()?;
    Ok(())
}

/// Log-log lines of median vs box count.
fn scaling_plot(path: &Path, sc: &[SceneResult]) -> Result<(), Box<dyn std::error::Error>> {
    let names: Vec<&str> = sc[0].rows.iter().map(|r| r.0).collect();
    let series: Vec<Vec<(f64, f64)>> = (0..names.len())
        .map(|i| {
            sc.iter()
                .filter_map(|s| {
                    s.rows[i].2.median().map(|m| (s.boxes as f64, m.as_secs_f64() * 1e3))
                })
                .collect()
        })
        .collect();
    let all = series.iter().flatten();
    let lo = all.clone().fold(f64::MAX, |a, p| a.min(p.1)) * 0.7;
    let hi = all.fold(0.0f64, |a, p| a.max(p.1)) * 1.5;
    let root = SVGBackend::new(path, (900, 600)).into_drawing_area();
    root.fill(&WHITE)?;
    let mut chart = ChartBuilder::on(&root)
        .caption("Uniform density: median ms per frame vs box count (log-log)", ("sans-serif", 18))
        .margin(10)
        .x_label_area_size(35)
        .y_label_area_size(60)
        .build_cartesian_2d((700.0..1.4e6).log_scale(), (lo..hi).log_scale())?;
    chart.configure_mesh().x_desc("boxes").y_desc("ms").draw()?;
    for (i, (n, pts)) in names.iter().zip(&series).enumerate() {
        let c = Palette99::pick(i).to_rgba();
        chart
            .draw_series(LineSeries::new(pts.iter().copied(), c.stroke_width(2)))?
            .label(*n)
            .legend(move |(x, y)| PathElement::new([(x, y), (x + 18, y)], c.stroke_width(2)));
        chart.draw_series(pts.iter().map(|&p| Circle::new(p, 3, c.filled())))?;
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .draw()?;
    root.present()?;
    Ok(())
}

fn slug(name: &str) -> String {
    name.chars()
        .map(|c| if c.is_ascii_alphanumeric() { c.to_ascii_lowercase() } else { '_' })
        .collect::<String>()
        .split('_')
        .filter(|p| !p.is_empty())
        .collect::<Vec<_>>()
        .join("_")
}

/// Everything one run measured, section by section.
pub struct Results<'a> {
    pub scenes: &'a [SceneResult],
    pub scaling: &'a [SceneResult],
    pub queries: &'a [(&'a str, Vec<f64>)],
    pub shape_sets: &'a [QuerySet],
    pub neighbors: &'a [crate::neighbor_sets::NeighborSet],
    pub moving: &'a [crate::coherence::CoherenceResult],
}

/// Writes the page at `out` and its plots in `<out dir>/peers/`.
pub fn write(out: &Path, quick: bool, results: &Results<'_>) -> io::Result<()> {
    let Results { scenes, scaling, queries, shape_sets, neighbors, moving } = *results;
    let dir = out.parent().unwrap_or(Path::new(".")).join("peers");
    fs::create_dir_all(&dir)?;
    let mut md = String::new();
    let _ = writeln!(md, "# Peer comparison (generated)\n");
    let _ = writeln!(
        md,
        "Generated by `cd benches/peers && cargo run --release -- --out ../../docs/PEERS.md`{}. \
         Do not edit by hand: rerun the command.\n",
        if quick { " **with --quick (3 rounds: a smoke test, not a measurement)**" } else { "" }
    );
    let _ = writeln!(md, "- Machine: {}", machine());
    let _ = writeln!(md, "- Date (UTC): {}", today());
    let _ = writeln!(md, "- Compiler: {}, release profile", rustc());
    let versions: Vec<String> = PEERS.iter().map(|p| format!("{p} {}", locked(p))).collect();
    let _ =
        writeln!(md, "- Peer versions (from benches/peers/Cargo.lock): {}", versions.join(", "));
    let _ = writeln!(
        md,
        "\n## Method\n\n\
         All methods run in one process. Each scene: every method runs once and its pair set \
         (sorted, de-duplicated, `a < b`) must equal broadphase `SortAndSweep`'s, or the run aborts; \
         then rounds are interleaved round-robin (round r: method 1, method 2, …), one whole frame \
         per timing (build from the box slice + all pairs into a reused `Vec`; broadphase's \
         `AdaptiveGrid` runs `find_pairs`, which finds each leaf's pairs as the build reaches it, \
         and `GridTree` runs `find_pairs`). Tables give the \
         median and min over rounds; \"median / best peer\" divides by the fastest peer crate's \
         median (below 1 = faster than every peer). A method whose one gate run takes more than 2 s \
         on a scene, or whose median times 10 exceeds 2 s at the previous scaling size, is skipped there.\n\n\
         Every peer reports candidates and keeps only those that pass broadphase's exact inclusive \
         `Aabb::overlaps`, so every peer method pays the same exact-test filter. broccoli is a 2D \
         crate: it runs on x,y (rects padded one ulp outward so touching boxes stay candidates) and \
         z is filtered in the callback by that test. parry3d's `Bvh` (rapier's broad phase) is timed \
         two ways: build + `traverse_bvtt_single_tree` self traversal, and build + one \
         `intersect_aabb` per box. rstar: `bulk_load` + `intersection_candidates_with_other_tree(self)`. \
         bvh has no self join: build + one `traverse_iterator` per box. Peers run one thread \
         (no rayon features). \"all threads\" is `JobSystem::new(0)`; the machine is shared, so \
         timings are noisy: compare medians and mins, not single runs."
    );
    let _ = writeln!(md, "\n## Headline\n");
    let _ = writeln!(
        md,
        "| scene | AdaptiveGrid 1 thread ms | GridTree all threads ms | best peer | best peer ms | AdaptiveGrid / best peer | GridTree all / best peer |"
    );
    let _ = writeln!(md, "|---|---:|---:|---|---:|---:|---:|");
    for s in scenes {
        let k = s.rows[0].2.median();
        let g = s.rows[2].2.median();
        if let (Some(k), Some(g), Some((bn, b))) = (k, g, best_peer(s)) {
            let _ = writeln!(
                md,
                "| {} | {} | {} | {} | {} | {:.2} | {:.2} |",
                s.name,
                ms(k),
                ms(g),
                short(bn),
                ms(b),
                k.as_secs_f64() / b.as_secs_f64(),
                g.as_secs_f64() / b.as_secs_f64()
            );
        }
    }
    let _ = writeln!(md, "\n## Scenes (all pairs, one frame)\n");
    for s in scenes {
        let file = format!("scene_{}.svg", slug(&s.name));
        bars(&dir.join(&file), s).map_err(|e| io::Error::other(e.to_string()))?;
        scene_table(&mut md, s);
        let _ = writeln!(md, "\n![{}](peers/{file})", s.name);
    }
    let _ = writeln!(md, "\n## Single-box query latency (query10k)\n");
    let _ = writeln!(
        md,
        "10,003 static boxes built once per structure; 1,000 query boxes (`query_boxes(1000, 1)`), \
         every hit list checked against brute force first. One timing = all 1,000 queries; \
         ns per query = that / 1,000; median and min over interleaved rounds.\n"
    );
    let _ = writeln!(md, "| method | median ns/query | min ns/query | median / best peer |");
    let _ = writeln!(md, "|---|---:|---:|---:|");
    let stat = |v: &[f64]| {
        let mut s = v.to_vec();
        s.sort_by(f64::total_cmp);
        (s[s.len() / 2], s[0])
    };
    let best_q = queries[1..].iter().map(|(_, v)| stat(v).0).fold(f64::MAX, f64::min);
    for (n, v) in queries {
        let (m, lo) = stat(v);
        let _ = writeln!(md, "| {n} | {m:.0} | {lo:.0} | {:.2} |", m / best_q);
    }
    let _ = writeln!(md, "\n## Rays, boxes and spheres on static sets\n");
    let _ = writeln!(
        md,
        "Each structure is built once per scene (untimed), one thread. Rays: the first box hit \
         (`cast_ray`), random origins and directions unless said; spheres and boxes: every box \
         met. Every peer's leaf test is broadphase's exact one (`Ray::entry`, `Aabb::overlaps`, \
         `Sphere::overlaps`); peers without a sphere query answer it as a box query on the \
         sphere's bounds, then the exact test. The answers are checked equal to brute force on \
         a sample of each set first, so the times are the traversals'. Median and min ns per \
         query over interleaved rounds (a round runs every query of the set once; switching \
         structures between rounds leaves caches cold for the first queries of each).\n"
    );
    let _ = writeln!(md, "![queries](peers/queries.svg)\n");
    let _ = writeln!(md, "| scene | queries | method | median ns | min ns | / best peer |");
    let _ = writeln!(md, "|---|---|---|---:|---:|---:|");
    for set in shape_sets {
        let best = set.rows[1..].iter().map(|(_, v)| stat(v).0).fold(f64::MAX, f64::min);
        for (n, v) in &set.rows {
            let (m, lo) = stat(v);
            let _ = writeln!(
                md,
                "| {} ({} boxes) | {} | {n} | {m:.0} | {lo:.0} | {:.2} |",
                set.scene,
                set.boxes,
                set.queries,
                m / best
            );
        }
    }
    let _ = writeln!(md, "\n## Frame coherence (moving scenes)\n");
    let _ = writeln!(
        md,
        "Each method keeps its structure across frames and runs on its own copy of the scene, \
         stepped the same way (`broadphase_scenes::MovingScene`: drift scenes move every moving box \
         by up to 2% of its size per axis per frame; teleport100k moves every box anywhere). A frame \
         is the scene step (untimed), then the method's whole frame: broadphase's \
         `set_aabbs` + `update`; parry's `insert_or_update_partially` for every moving box (margin \
         0.5 × its size, broadphase's default), `refit`, the self traversal with change detection, \
         `optimize_incremental`, and the kept candidates re-tested (as rapier drives it, without a narrow phase); a full \
         rebuild with the grid tree. Pairs of two static boxes are left out everywhere. Gate: the \
         first 3 frames' pair sets must be equal. Median and min over the timed frames; a method \
         whose frame takes over 2 s stops there (its frame count is shown).\n"
    );
    for m in moving {
        let _ = writeln!(
            md,
            "### {} ({} boxes, {} moving, {} frames)\n",
            m.name,
            m.boxes,
            m.moving,
            m.rows[0].2.len()
        );
        let _ = writeln!(md, "| method | frames | median ms | min ms | median / parry |");
        let _ = writeln!(md, "|---|---:|---:|---:|---:|");
        let median = |v: &[std::time::Duration]| {
            let mut s = v.to_vec();
            s.sort();
            (s[s.len() / 2], s[0])
        };
        let parry = m.rows.iter().find(|r| r.1).map(|r| median(&r.2).0);
        for (name, _, times) in &m.rows {
            let (med, lo) = median(times);
            let ratio = parry.map_or(String::from("—"), |p| {
                format!("{:.2}", med.as_secs_f64() / p.as_secs_f64())
            });
            let _ =
                writeln!(md, "| {name} | {} | {} | {} | {ratio} |", times.len(), ms(med), ms(lo));
        }
        let _ = writeln!(md);
    }
    let _ = writeln!(md, "\n## Scaling (uniform density, 1k → 1M boxes)\n");
    let _ = writeln!(
        md,
        "`uniform(n, 0x5CA1E)` for 1k, 10k, 100k; the 1M point is the `uniform1m` scene (same \
         density, its own seed). Median ms per frame:\n"
    );
    let names: Vec<&str> = scaling[0].rows.iter().map(|r| r.0).collect();
    let _ = writeln!(
        md,
        "| method | {} |",
        scaling.iter().map(|s| s.boxes.to_string()).collect::<Vec<_>>().join(" | ")
    );
    let _ = writeln!(md, "|---|{}", "---:|".repeat(scaling.len()));
    for (i, n) in names.iter().enumerate() {
        let cells: Vec<String> = scaling
            .iter()
            .map(|s| match &s.rows[i].2 {
                o @ Outcome::Timed { .. } => ms(o.median().expect("timed")),
                Outcome::Skipped(w) => w.clone(),
            })
            .collect();
        let _ = writeln!(md, "| {n} | {} |", cells.join(" | "));
    }
    let _ = writeln!(
        md,
        "\nThreads 1 → all for GridTree (median ms, speed-up = 1 thread / all threads):\n"
    );
    let _ = writeln!(md, "| boxes | 1 thread | all threads | speed-up |");
    let _ = writeln!(md, "|---:|---:|---:|---:|");
    for s in scaling {
        if let (Some(a), Some(b)) = (s.rows[1].2.median(), s.rows[2].2.median()) {
            let _ = writeln!(
                md,
                "| {} | {} | {} | {:.2} |",
                s.boxes,
                ms(a),
                ms(b),
                a.as_secs_f64() / b.as_secs_f64()
            );
        }
    }
    scaling_plot(&dir.join("scaling.svg"), scaling).map_err(|e| io::Error::other(e.to_string()))?;
    query_plot(&dir.join("queries.svg"), shape_sets)
        .map_err(|e| io::Error::other(e.to_string()))?;
    let _ = writeln!(md, "\n![scaling](peers/scaling.svg)");
    let _ = writeln!(md, "\n## Neighbor search (fixed radius)\n");
    let _ = writeln!(
        md,
        "Each frame builds from the points and finds every point's neighbors: broadphase's \
         `CountingSortGrid` writes the CSR lists in sorted order (`sorted_neighbor_lists` on one \
         thread; on a 2-thread job system, `build_parallel` then `ParallelNeighborLists::fill`); the \
         plain grid (`benches/peers/src/peers/plain_grid.rs`: cells of the reach, a counting \
         sort, 27 cells as 9 x-runs per point) only counts; kiddo builds its tree and queries \
         `within` once per point (pairs `j > i` kept). particles5k is contacts of 5,000 spheres \
         of radii 1–4 (`d <= r_i + r_j`); the lattices are jittered, radius 2 (about 30 \
         neighbors a point); sph1m shuffled is sph1m in a random order. Every method's \
         per-point counts are checked equal first. Median and min ms per frame over \
         interleaved rounds; ratios are to the plain grid's median.\n"
    );
    let _ = writeln!(
        md,
        "| scene | points | neighbor entries | method | median ms | min ms | / plain grid |"
    );
    let _ = writeln!(md, "|---|---:|---:|---|---:|---:|---:|");
    for set in neighbors {
        let yardstick = set
            .rows
            .iter()
            .find(|(n, _)| *n == crate::neighbor_sets::YARDSTICK)
            .map_or(f64::NAN, |(_, v)| stat(v).0);
        for (n, v) in &set.rows {
            let (m, lo) = stat(v);
            let _ = writeln!(
                md,
                "| {} | {} | {} | {n} | {m:.2} | {lo:.2} | {:.2} |",
                set.name,
                set.points,
                set.entries,
                m / yardstick
            );
        }
    }
    md.push_str(PUBLISHED_GPU);
    fs::write(out, md)
}

/// The last sections of PEERS.md: the GPU backend's figures from one run
/// on a lent GPU, and the GPU peers' published figures, quoted with their
/// sources. This binary measures none of them (it runs no GPU code), so
/// every run writes them as they stand.
pub const PUBLISHED_GPU: &str = include_str!("published_gpu.md");

#[cfg(test)]
mod tests {
    /// PEERS.md is generated; the quoted section in it must be the one a
    /// rerun writes, so an edit of one without the other shows here.
    #[test]
    fn peers_md_ends_with_the_published_gpu_section() {
        let peers = include_str!("../../../docs/PEERS.md");
        assert!(peers.ends_with(super::PUBLISHED_GPU));
    }
}
