//! Prints the naturalness tables of [`ikarus_bench::natural`] (markdown, for BENCHMARKS.md):
//! `cargo run --release -p ikarus-bench --bin natural [mean] [first] [previous] [two-to-six]`:
//! a table per group and start (default: the mean start and the three effector sets of
//! [`EFFECTOR_SETS`]; `two-to-six` uses [`TWO_TO_SIX`]).

use std::fmt::Write as _;

use ikarus_bench::natural::{
    Case, DIMS, EFFECTOR_SETS, EffectorSet, Protocol, Start, TWO_TO_SIX, score,
};

fn main() {
    let mut starts = Vec::new();
    let mut sets: &[EffectorSet] = &EFFECTOR_SETS;
    let mut other_clips = false;
    for arg in std::env::args().skip(1) {
        match arg.as_str() {
            "mean" => starts.push(Start::Mean),
            "first" => starts.push(Start::First),
            "previous" => starts.push(Start::Previous),
            "two-to-six" => sets = &TWO_TO_SIX,
            "other-clips" => other_clips = true,
            other => {
                panic!("unknown argument `{other}`: mean, first, previous, two-to-six, other-clips")
            }
        }
    }
    if starts.is_empty() {
        starts.push(Start::Mean);
    }
    let protocol = Protocol::load_groups(DIMS, &starts, sets, other_clips);
    for (g, group) in protocol.groups.iter().enumerate() {
        for &from in &starts {
            let all: Vec<&Case> = protocol
                .cases
                .iter()
                .filter(|c| c.group == g && c.from == from)
                .collect();
            let present: Vec<&str> = sets
                .iter()
                .map(|s| s.0)
                .filter(|set| all.iter().any(|c| c.set == *set))
                .collect();
            let mut kinds: Vec<&str> = all.iter().map(|c| c.kind).collect();
            kinds.dedup();
            println!(
                "\n**{}** from the {}: {} held-out tasks ({} effector sets); model: {} joints, {} frames, {} dims\n",
                group.name,
                from.name(),
                all.len(),
                present.len(),
                group.model.joints().len(),
                group.model.frames(),
                group.model.dims()
            );
            let mut header = String::from("| solver | MPJPE all (mm) |");
            for column in present.iter().chain(&kinds) {
                _ = write!(header, " {column} |");
            }
            header.push_str(" reached ≤ 1 mm | poses off limits |");
            println!("{header}");
            println!("|{}", "---|".repeat(4 + present.len() + kinds.len()));
            for (name, config) in protocol.solvers(g) {
                let whole = score(&group.skeleton, &all, &config);
                let mut row = format!("| {name} | {:.1} |", whole.mpjpe * 1e3);
                let columns = present
                    .iter()
                    .map(|set| all.iter().copied().filter(|c| c.set == *set).collect())
                    .chain(
                        kinds
                            .iter()
                            .map(|kind| all.iter().copied().filter(|c| c.kind == *kind).collect()),
                    );
                for cases in columns {
                    let cases: Vec<&Case> = cases;
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
}
