//! Prints the naturalness table of [`ikarus_bench::natural`] (markdown, for BENCHMARKS.md):
//! `cargo run --release -p ikarus-bench --bin natural`.

use std::fmt::Write as _;

use ikarus_bench::natural::{EFFECTOR_SETS, Protocol, score};

fn main() {
    let protocol = Protocol::load();
    for (g, group) in protocol.groups.iter().enumerate() {
        let all: Vec<_> = protocol.cases.iter().filter(|c| c.group == g).collect();
        println!(
            "\n**{}**: {} held-out tasks ({} frames × {} effector sets); model: {} joints, {} frames, {} dims\n",
            group.name,
            all.len(),
            all.len() / EFFECTOR_SETS.len(),
            EFFECTOR_SETS.len(),
            group.model.joints().len(),
            group.model.frames(),
            group.model.dims()
        );
        let kinds: Vec<&str> = {
            let mut k: Vec<&str> = all.iter().map(|c| c.kind).collect();
            k.dedup();
            k
        };
        let mut header = String::from("| solver | MPJPE all (mm) |");
        for (set, _) in EFFECTOR_SETS {
            _ = write!(header, " {set} |");
        }
        for kind in &kinds {
            _ = write!(header, " {kind} |");
        }
        header.push_str(" reached ≤ 1 mm | poses off limits |");
        println!("{header}");
        println!("|{}", "---|".repeat(4 + EFFECTOR_SETS.len() + kinds.len()));
        for (name, config) in protocol.solvers(g) {
            let whole = score(&group.skeleton, &all, &config);
            let mut row = format!("| {name} | {:.1} |", whole.mpjpe * 1e3);
            for (set, _) in EFFECTOR_SETS {
                let cases: Vec<_> = all.iter().copied().filter(|c| c.set == set).collect();
                _ = write!(
                    row,
                    " {:.1} |",
                    score(&group.skeleton, &cases, &config).mpjpe * 1e3
                );
            }
            for kind in &kinds {
                let cases: Vec<_> = all.iter().copied().filter(|c| c.kind == *kind).collect();
                _ = write!(
                    row,
                    " {:.1} |",
                    score(&group.skeleton, &cases, &config).mpjpe * 1e3
                );
            }
            _ = write!(
                row,
                " {:.0}% | {:.0}% |",
                whole.reached * 100.0,
                whole.violations * 100.0
            );
            println!("{row}");
        }
    }
}
