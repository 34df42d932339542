//! DiWi's declaration rules (1–14): add or remove the qualifiers `volatile`, `const`,
//! `restrict`, and add, replace or remove the modifiers `unsigned`, `signed`, `short`,
//! `long`, by editing the words in front of a declared name (spec diwi.md §3.4).
//!
//! csmith declares most variables with `<stdint.h>` names (`int32_t`, `uint8_t`), which
//! have no words to edit: the modifier rules rename those to the type the edit would
//! give (`unsigned` on `int32_t` is `uint32_t`, `short` is `int16_t`).

use rand::Rng;

use super::Rule;
use crate::mutate::ast::{Kind, NodeId, Shape, Tu};
use crate::mutate::witness::{RuleClass, RuleInfo};
use crate::mutate::Edit;

/// A word of a declaration's specifiers, with its byte range in the source.
struct Word {
    start: usize,
    end: usize,
    text: String,
}

/// The identifiers and keywords between a declaration's start and its name.
fn specifier_words(tu: &Tu, decl: NodeId) -> Vec<Word> {
    let node = tu.node(decl);
    let text = &tu.source[node.start..node.end];
    let bytes = text.as_bytes();
    let mut words = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i].is_ascii_alphabetic() || bytes[i] == b'_' {
            let start = i;
            while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_') {
                i += 1;
            }
            let word = &text[start..i];
            if word == node.name {
                break;
            }
            words.push(Word { start: node.start + start, end: node.start + i, text: word.to_string() });
        } else if matches!(bytes[i], b'=' | b'[' | b'(' | b';' | b',') {
            break;
        } else {
            i += 1;
        }
    }
    words
}

/// Declarations a declaration rule may edit: variables and (for qualifiers) parameters,
/// one per start offset (`int a, b;` has one specifier list for both).
fn declarations(tu: &Tu, with_params: bool) -> Vec<NodeId> {
    let mut seen = std::collections::HashSet::new();
    (0..tu.nodes.len())
        .filter(|&i| {
            let n = tu.node(i);
            (n.kind == Kind::VarDecl || with_params && n.kind == Kind::ParmDecl) && !n.name.is_empty()
        })
        .filter(|&i| seen.insert(tu.node(i).start))
        .collect()
}

const QUALIFIERS: [&str; 3] = ["volatile", "const", "restrict"];
const MODIFIERS: [&str; 4] = ["unsigned", "signed", "short", "long"];
const INT_WORDS: [&str; 4] = ["char", "short", "int", "long"];

/// `int32_t` and friends: (unsigned, bits).
fn stdint(word: &str) -> Option<(bool, u32)> {
    let (unsigned, rest) = match word.strip_prefix('u') {
        Some(rest) => (true, rest),
        None => (false, word),
    };
    let bits = rest.strip_prefix("int")?.strip_suffix("_t")?.parse().ok()?;
    [8, 16, 32, 64].contains(&bits).then_some((unsigned, bits))
}

fn stdint_name(unsigned: bool, bits: u32) -> String {
    format!("{}int{bits}_t", if unsigned { "u" } else { "" })
}

/// Add or remove a qualifier (rules 1–6).
pub struct Qualifier {
    info: RuleInfo,
    word: &'static str,
    add: bool,
}

impl Rule for Qualifier {
    fn info(&self) -> &RuleInfo {
        &self.info
    }

    fn sites(&self, tu: &Tu) -> Vec<NodeId> {
        declarations(tu, true)
            .into_iter()
            .filter(|&d| {
                let has = specifier_words(tu, d).iter().any(|w| w.text == self.word);
                // `restrict` qualifies pointers only: anything else cannot compile.
                let fits =
                    self.word != "restrict" || matches!(tu.node(d).ty.as_ref().map(|t| &t.shape), Some(Shape::Pointer));
                has != self.add && fits
            })
            .collect()
    }

    fn edits(&self, tu: &Tu, site: NodeId, _rng: &mut dyn Rng) -> Option<Vec<Edit>> {
        if self.add {
            if self.word == "restrict" {
                // `int *restrict p`: the pointer is what is restricted.
                let name = name_offset(tu, site)?;
                return Some(vec![Edit::insert(name, "restrict ")]);
            }
            return Some(vec![Edit::insert(tu.node(site).start, format!("{} ", self.word))]);
        }
        let word = specifier_words(tu, site).into_iter().find(|w| w.text == self.word)?;
        Some(vec![delete_word(tu, &word)])
    }
}

/// The byte offset of the declared name.
fn name_offset(tu: &Tu, decl: NodeId) -> Option<usize> {
    let words = specifier_words(tu, decl);
    let node = tu.node(decl);
    let from = words.last().map_or(node.start, |w| w.end);
    let text = &tu.source[from..node.end];
    let at = text.find(node.name.as_str())?;
    Some(from + at)
}

/// Delete a word and the blank after it.
fn delete_word(tu: &Tu, word: &Word) -> Edit {
    let blank = tu.source[word.end..].bytes().take_while(|b| *b == b' ').count();
    Edit::replace(word.start, word.end + blank, "")
}

/// Add (or replace the opposite of) a modifier, or remove one (rules 7–14).
pub struct Modifier {
    info: RuleInfo,
    word: &'static str,
    add: bool,
}

impl Modifier {
    fn edit(&self, tu: &Tu, words: &[Word]) -> Option<Edit> {
        let find = |w: &str| words.iter().find(|x| x.text == w);
        if let Some(typedef) = words.iter().find(|w| stdint(&w.text).is_some()) {
            let (unsigned, bits) = stdint(&typedef.text)?;
            let (unsigned, bits) = match (self.word, self.add) {
                ("unsigned", true) => (true, bits),
                ("signed", true) | ("unsigned", false) => (false, bits),
                ("short", true) => (unsigned, 16),
                ("long", true) => (unsigned, 64),
                ("short", false) if bits == 16 => (unsigned, 32),
                ("long", false) if bits == 64 => (unsigned, 32),
                _ => return None,
            };
            let name = stdint_name(unsigned, bits);
            return (name != typedef.text).then(|| Edit::replace(typedef.start, typedef.end, name));
        }
        if !words.iter().any(|w| INT_WORDS.contains(&w.text.as_str()) || w.text.ends_with("signed")) {
            return None;
        }
        if !self.add {
            let word = find(self.word)?;
            let others = words.iter().filter(|w| w.start != word.start);
            let base_left = others.into_iter().any(|w| INT_WORDS.contains(&w.text.as_str()));
            return Some(if base_left { delete_word(tu, word) } else { Edit::replace(word.start, word.end, "int") });
        }
        if find(self.word).is_some() {
            return None;
        }
        let (opposite, anchors): (&str, &[&str]) = match self.word {
            "unsigned" => ("signed", &["short", "long", "int", "char"]),
            "signed" => ("unsigned", &["short", "long", "int", "char"]),
            "short" => ("long", &["int"]),
            _ => ("short", &["int"]),
        };
        if let Some(w) = find(opposite) {
            return Some(Edit::replace(w.start, w.end, self.word));
        }
        let anchor = words.iter().find(|w| anchors.contains(&w.text.as_str()))?;
        Some(Edit::insert(anchor.start, format!("{} ", self.word)))
    }
}

impl Rule for Modifier {
    fn info(&self) -> &RuleInfo {
        &self.info
    }

    fn sites(&self, tu: &Tu) -> Vec<NodeId> {
        declarations(tu, false).into_iter().filter(|&d| self.edit(tu, &specifier_words(tu, d)).is_some()).collect()
    }

    fn edits(&self, tu: &Tu, site: NodeId, _rng: &mut dyn Rng) -> Option<Vec<Edit>> {
        self.edit(tu, &specifier_words(tu, site)).map(|e| vec![e])
    }
}

/// Rules 1–14 in DiWi's order.
pub fn rules() -> Vec<Box<dyn Rule>> {
    let mut out: Vec<Box<dyn Rule>> = Vec::new();
    for add in [true, false] {
        for word in QUALIFIERS {
            let (verb, class) = if add { ("add", RuleClass::AddQualifier) } else { ("remove", RuleClass::Remove) };
            out.push(Box::new(Qualifier { info: RuleInfo { name: format!("{verb} {word}"), class }, word, add }));
        }
    }
    for add in [true, false] {
        for word in MODIFIERS {
            let (verb, class) = if add { ("add", RuleClass::AddModifier) } else { ("remove", RuleClass::Remove) };
            out.push(Box::new(Modifier { info: RuleInfo { name: format!("{verb} {word}"), class }, word, add }));
        }
    }
    out
}
