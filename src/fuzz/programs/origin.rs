//! What a program's origin record says: whether the campaign runs it, and how a bug
//! folder's program is made again.

use crate::fuzz::programs::hermes;

/// Whether the campaign runs `origin`'s program: an IR mutant whose edits may change what
/// it computes is judged on the optimizer alone (nothing screens IR for undefined behaviour).
pub fn executes(origin: &str) -> bool {
    let origin: serde_json::Value = serde_json::from_str(origin).unwrap_or_default();
    origin.get("execute").and_then(|e| e.as_bool()).unwrap_or(true)
}

/// How a bug folder's generated IR program is made again, for its README.
pub fn provenance(origin: &str) -> Option<String> {
    let origin: serde_json::Value = serde_json::from_str(origin).ok()?;
    match origin.get("generator")?.as_str()? {
        "llvm-stress" => Some(format!(
            "\nThe program is llvm-stress output (one function, no `main`), made again with:\n\n```sh\n{}\n```\n",
            origin.get("command")?.as_str()?
        )),
        "ir-mutate" => {
            let edits: Vec<String> =
                origin.get("edits")?.as_array()?.iter().filter_map(|e| Some(format!("* {}", e.as_str()?))).collect();
            Some(format!(
                "\nThe program is an IR mutant of {} by these edits, in order:\n\n{}\n{}",
                origin.get("seed_program")?.as_str()?,
                edits.join("\n"),
                knob_note(&origin)
            ))
        }
        "seeds" => Some(format!(
            "\nThe program is the module of LLVM's test `{}`, run with its RUN line's options.\n{}",
            origin.get("file")?.as_str()?,
            knob_note(&origin)
        )),
        _ => hermes::provenance(&origin.to_string()),
    }
}

/// What a seed's program changed of its RUN line's options, if anything.
fn knob_note(origin: &serde_json::Value) -> String {
    match origin.get("knob").and_then(|k| k.as_str()) {
        Some(change) => format!(
            "\nOne knob of the test's RUN line was changed (`{change}`); the commands above carry the new value.\n"
        ),
        None => String::new(),
    }
}
