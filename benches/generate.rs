//! What generating and screening programs costs, one job against two: seconds per program
//! for each generator, and that two jobs give the same programs and verdicts as one.
//!
//!     cargo bench --bench generate

use std::path::PathBuf;
use std::time::Instant;

use ctos::program::{generate_many, screen_many, GenConfig, Generated, Generator, Screen, Screening};

fn write(dir: &std::path::Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

fn main() {
    let seeds: Vec<u64> = (100..110).collect();
    for generator in [Generator::Csmith, Generator::Swarm, Generator::SwarmV] {
        let config = GenConfig { generator, ..GenConfig::default() };
        let mut runs = Vec::new();
        for jobs in [1, 2] {
            let started = Instant::now();
            let programs: Vec<Generated> =
                generate_many(&seeds, &config, jobs).into_iter().map(Result::unwrap).collect();
            let seconds = started.elapsed().as_secs_f64() / seeds.len() as f64;
            let attempts: usize = programs.iter().map(|p| p.attempts).sum();
            let kb: usize = programs.iter().map(|p| p.source.len()).sum::<usize>() / 1000 / seeds.len();
            println!(
                "generate {generator:?} jobs={jobs}: {seconds:.2} s/program, {attempts} csmith runs, {kb} KB mean"
            );
            runs.push(programs);
        }
        assert_eq!(runs[0], runs[1]);
        let dir = tempfile::tempdir().unwrap();
        let paths: Vec<PathBuf> =
            runs[0].iter().map(|p| write(dir.path(), &format!("{}.c", p.seed), &p.source)).collect();
        let mut verdicts = Vec::new();
        for jobs in [1, 2] {
            let started = Instant::now();
            let v = screen_many(&paths, &Screen::default(), jobs);
            let seconds = started.elapsed().as_secs_f64() / paths.len() as f64;
            let clean = v.iter().filter(|s| matches!(s, Screening::Clean { .. })).count();
            println!("screen {generator:?} jobs={jobs}: {seconds:.2} s/program, {clean}/{} clean", paths.len());
            for (p, s) in runs[0].iter().zip(&v) {
                if !matches!(s, Screening::Clean { .. }) {
                    println!("  seed {}: {s:?}", p.seed);
                }
            }
            verdicts.push(v.into_iter().map(|s| std::mem::discriminant(&s)).collect::<Vec<_>>());
        }
        assert_eq!(verdicts[0], verdicts[1]);
    }
}
