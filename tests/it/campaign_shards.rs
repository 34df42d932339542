//! Shards of one campaign: sharing causes while they run (`--sync`), and `ctos merge`
//! joining faces of one cause that shards found under different keys.

use std::path::Path;
use std::process::{Child, Command, Stdio};

use serde_json::Value;

fn ctos(args: &[&str]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_ctos"));
    command.args(args).stdout(Stdio::piped()).stderr(Stdio::piped());
    command
}

fn finished(child: Child) -> String {
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Two csmith programs on which one `loop-extract` sequence crashes LLVM 19 and 22 with
/// different top frames (`LoopInfo::erase` on the first, `removeBlockFromLoop` on the
/// second): one cause, two keys. Shard 0 of two tests the first, shard 1 the second.
fn one_cause_two_faces(work: &Path) {
    let programs = work.join("programs");
    std::fs::create_dir(&programs).unwrap();
    for (name, seed) in [("a.c", "1000"), ("b.c", "2646955483")] {
        let out = Command::new("csmith").args(["--seed", seed]).output().unwrap();
        assert!(out.status.success());
        std::fs::write(programs.join(name), out.stdout).unwrap();
    }
    let sequence = "loop-extract,function(instcombine<no-verify-fixpoint>,simplifycfg),loop-extract\n";
    std::fs::write(work.join("sequences.txt"), sequence).unwrap();
}

/// Both shards of a two-shard campaign at once, each on one of the programs.
fn run_shards(work: &Path, name: &str, extra: &[&str]) -> [std::path::PathBuf; 2] {
    let (programs, sequences) = (work.join("programs"), work.join("sequences.txt"));
    let dirs = [work.join(format!("{name}0")), work.join(format!("{name}1"))];
    let children: Vec<Child> = dirs
        .iter()
        .enumerate()
        .map(|(i, dir)| {
            let shard = format!("{i}/2");
            let mut args = vec!["fuzz", "--out", dir.to_str().unwrap(), "--shard", &shard, "--iterations", "1"];
            args.extend_from_slice(&["--programs", programs.to_str().unwrap()]);
            args.extend_from_slice(&["--sequences", sequences.to_str().unwrap(), "-j", "1"]);
            args.extend_from_slice(&["--reduce-ir-time", "0", "--localize-time", "0"]);
            args.extend_from_slice(extra);
            ctos(&args).spawn().unwrap()
        })
        .collect();
    for child in children {
        finished(child);
    }
    dirs
}

fn stats(dir: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(dir.join("stats.json")).unwrap()).unwrap()
}

fn bug_folders(dir: &Path) -> Vec<String> {
    match std::fs::read_dir(dir.join("bugs")) {
        Ok(entries) => entries.map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect(),
        Err(_) => Vec::new(),
    }
}

#[test]
fn shards_sharing_a_sync_folder_report_one_cause_once_and_merge_joins_its_faces_without_one() {
    let work = tempfile::tempdir().unwrap();
    one_cause_two_faces(work.path());

    // Apart, each shard reports the cause under its own key; merged, it is one bug with
    // the other face as its variant, found by cross-reproduction.
    let apart = run_shards(work.path(), "apart", &[]);
    let signature =
        |dir: &Path| std::fs::read_to_string(dir.join("bugs").join(&bug_folders(dir)[0]).join("README.md")).unwrap();
    assert!(signature(&apart[0]).contains("LoopInfo::erase"), "{}", signature(&apart[0]));
    assert!(signature(&apart[1]).contains("removeBlockFromLoop"), "{}", signature(&apart[1]));
    let merged = work.path().join("merged");
    let shards = [apart[0].to_str().unwrap(), apart[1].to_str().unwrap()];
    let stdout = finished(ctos(&["merge", "--out", merged.to_str().unwrap(), shards[0], shards[1]]).spawn().unwrap());
    assert!(stdout.contains("1 unique bugs"), "{stdout}");
    let readme = std::fs::read_to_string(merged.join("bugs").join(&bug_folders(&merged)[0]).join("README.md")).unwrap();
    assert!(readme.contains("## Also seen as") && readme.contains("also-1/"), "{readme}");

    // Together, through one sync folder, at the same time: one folder in all, and the other
    // shard counts its failure as found elsewhere.
    let sync = work.path().join("causes");
    let shared = run_shards(work.path(), "synced", &["--sync", sync.to_str().unwrap()]);
    let folders: Vec<String> = shared.iter().flat_map(|d| bug_folders(d)).collect();
    assert_eq!(folders.len(), 1, "{folders:?}");
    let elsewhere: Vec<i64> = shared.iter().map(|d| stats(d)["known_elsewhere"].as_i64().unwrap()).collect();
    assert!(elsewhere.contains(&0) && elsewhere.iter().any(|&n| n >= 1), "{elsewhere:?}");
    let causes = std::fs::read_dir(sync.join("causes"))
        .unwrap()
        .filter(|e| e.as_ref().unwrap().path().extension().is_some_and(|x| x == "json"));
    assert_eq!(causes.count(), 1);
}
