//! Subcommands that turn many input files into as many outputs (`mocap`, `retarget`, `ground`,
//! `track`): the output names, one worker thread per core with a progress bar, one line per result.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use anyhow::{Context, Result, bail, ensure};

/// `--out` / `--out-dir` / `--format` of the subcommands that write one motion per input
/// (`ground`, `track`).
#[derive(clap::Args)]
pub struct MotionOutput {
    /// Output file (one input); its extension picks the format: bvh, glb or vrma.
    #[arg(long, conflicts_with = "out_dir")]
    pub out: Option<PathBuf>,
    /// Output directory (any number of inputs; `NAME.FORMAT` each).
    #[arg(long)]
    pub out_dir: Option<PathBuf>,
    /// Output format with `--out-dir`.
    #[arg(long, value_parser = ["bvh", "glb", "vrma"], default_value = "bvh")]
    pub format: String,
}

impl MotionOutput {
    /// The output path of each of `inputs` ([`outputs`], the extension `--out`'s or
    /// `--format`).
    ///
    /// # Errors
    /// As [`outputs`].
    pub fn paths(&self, inputs: &[PathBuf], noun: &str) -> Result<Vec<PathBuf>> {
        let extension = self
            .out
            .as_deref()
            .and_then(|o| o.extension())
            .and_then(|e| e.to_str())
            .unwrap_or(&self.format)
            .to_ascii_lowercase();
        outputs(
            inputs,
            self.out.as_deref(),
            self.out_dir.as_deref(),
            &extension,
            noun,
        )
    }
}

/// The output paths: `--out` for one input, or `--out-dir` with `NAME.EXTENSION` per input
/// (`NAME.EXT.EXTENSION` when two inputs share a stem). `noun` names the inputs in messages.
///
/// # Errors
/// `--out` with several inputs, neither or both options, a directory that cannot be created.
pub fn outputs(
    inputs: &[PathBuf],
    out: Option<&Path>,
    out_dir: Option<&Path>,
    extension: &str,
    noun: &str,
) -> Result<Vec<PathBuf>> {
    match (out, out_dir) {
        (Some(out), None) => {
            ensure!(
                inputs.len() == 1,
                "--out names one file; use --out-dir for {} {noun}s",
                inputs.len()
            );
            Ok(vec![out.to_path_buf()])
        }
        (None, Some(dir)) => {
            std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
            Ok(inputs
                .iter()
                .map(|i| {
                    let stem = i.file_stem().unwrap_or_default();
                    let shared = inputs
                        .iter()
                        .filter(|o| o.file_stem().unwrap_or_default() == stem)
                        .count()
                        > 1;
                    let mut name = if shared {
                        i.file_name().unwrap_or_default().to_owned()
                    } else {
                        stem.to_owned()
                    };
                    name.push(".");
                    name.push(extension);
                    dir.join(name)
                })
                .collect())
        }
        _ => bail!("give --out OUT.{extension} (one {noun}) or --out-dir DIR"),
    }
}

/// Runs `job(i)` for every input on one thread per core (at most one per input) with a
/// progress bar showing `message`; prints `OUTPUT: line` for each success in input order and
/// one error line per failure.
///
/// # Errors
/// How many of the inputs failed.
pub fn run_each(
    inputs: &[PathBuf],
    outputs: &[PathBuf],
    message: String,
    noun: &str,
    job: impl Fn(usize) -> Result<String> + Sync,
) -> Result<()> {
    let progress = indicatif::ProgressBar::new(inputs.len() as u64).with_message(message);
    let next = AtomicUsize::new(0);
    let threads = std::thread::available_parallelism()
        .map_or(1, std::num::NonZero::get)
        .min(inputs.len());
    let mut results: Vec<(usize, Result<String>)> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads)
            .map(|_| {
                scope.spawn(|| {
                    let mut done = Vec::new();
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        if i >= inputs.len() {
                            break;
                        }
                        let result = job(i);
                        progress.inc(1);
                        done.push((i, result));
                    }
                    done
                })
            })
            .collect();
        workers
            .into_iter()
            .flat_map(|w| w.join().unwrap_or_default())
            .collect()
    });
    progress.finish_and_clear();
    results.sort_by_key(|r| r.0);
    let mut failed = 0;
    for (i, result) in results {
        match result {
            Ok(line) => println!("{}: {line}", outputs[i].display()),
            Err(error) => {
                failed += 1;
                let name = inputs[i].display().to_string();
                let line = one_line(&error);
                if line.starts_with(&name) {
                    eprintln!("error: {line}");
                } else {
                    eprintln!("error: {name}: {line}");
                }
            }
        }
    }
    ensure!(failed == 0, "{failed} of {} {noun}s failed", inputs.len());
    Ok(())
}

/// The error's causes on one line, leaving out a cause whose text the line already holds.
pub fn one_line(error: &anyhow::Error) -> String {
    let mut line = String::new();
    for cause in error.chain() {
        let text = cause.to_string();
        let text = text
            .strip_prefix(&format!("{line}: "))
            .map_or(text.clone(), str::to_owned);
        if line.contains(&text) {
            continue;
        }
        if !line.is_empty() {
            line.push_str(": ");
        }
        line.push_str(&text);
    }
    line
}
