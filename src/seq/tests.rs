use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

use super::random::random_flat_between;
use super::reduce::reduce;
use super::*;

fn catalog() -> Catalog {
    Catalog::for_llvm(crate::llvm::version().0).unwrap()
}

fn render(text: &str) -> String {
    let c = catalog();
    Sequence::parse(text, &c).unwrap().render(&c).unwrap()
}

#[test]
fn flat_passes_get_the_adaptors_of_their_level() {
    assert_eq!(render("sroa,licm,gvn"), "function(sroa,loop-mssa(licm),gvn)");
    assert_eq!(render("globalopt,sroa,inline,function-attrs"), "globalopt,function(sroa),cgscc(inline,function-attrs)");
    assert_eq!(render("loop-rotate,licm,indvars"), "function(loop(loop-rotate),loop-mssa(licm),loop(indvars))");
    assert_eq!(render("loop-rotate,indvars"), "function(loop(loop-rotate,indvars))");
    assert_eq!(render("require<memoryssa>,gvn"), "function(require<memoryssa>,gvn)");
    assert_eq!(render("verify"), "verify");
}

#[test]
fn per_pass_nesting_gives_each_pass_its_adaptor() {
    let c = catalog();
    let opts = RenderOptions { nesting: Nesting::PerPass, ..Default::default() };
    let seq = Sequence::parse_with("sroa,licm,gvn", &c, &opts).unwrap();
    assert_eq!(render_with(&seq, &c, &opts).unwrap(), "function(sroa),function(loop-mssa(licm)),function(gvn)");
}

#[test]
fn legacy_flags_parse_through_the_rename_map() {
    let c = catalog();
    let seq = Sequence::parse("-loop-unswitch -licm -gvn -early-cse-memssa -functionattrs -O2", &c).unwrap();
    let names: Vec<String> = seq.passes().iter().map(|p| p.to_string()).collect();
    assert_eq!(
        names,
        ["simple-loop-unswitch<nontrivial>", "licm", "gvn", "early-cse<memssa>", "function-attrs", "default<O2>"]
    );
    assert_eq!(
        Sequence::parse("-scalar-evolution -sroa", &c).unwrap().render(&c).unwrap(),
        "function(require<scalar-evolution>,sroa)"
    );
}

#[test]
fn instcombine_defaults_to_no_verify_fixpoint_unless_asked() {
    assert_eq!(render("instcombine"), "function(instcombine<no-verify-fixpoint>)");
    assert_eq!(render("instcombine<max-iterations=2>"), "function(instcombine<max-iterations=2;no-verify-fixpoint>)");
    assert_eq!(render("instcombine<verify-fixpoint>"), "function(instcombine<verify-fixpoint>)");
    let c = catalog();
    let opts = RenderOptions { verify_fixpoint: true, ..Default::default() };
    let seq = Sequence::parse_with("instcombine", &c, &opts).unwrap();
    assert_eq!(render_with(&seq, &c, &opts).unwrap(), "function(instcombine)");
}

#[test]
fn explicit_structure_is_kept_when_flattening_would_change_it() {
    // Two function adaptors are not one: functions see the passes in another order.
    assert_eq!(render("function(sroa),function(gvn)"), "function(sroa),function(gvn)");
    // A user's loop(...) around licm is kept (LLVM then aborts: that is the user's choice).
    assert_eq!(render("function(loop(licm))"), "function(loop(licm))");
    assert_eq!(render("function<eager-inv>(sroa,licm)"), "function<eager-inv>(sroa,loop-mssa(licm))");
    assert_eq!(render("repeat<2>(sroa)"), "repeat<2>(function(sroa))");
    let c = catalog();
    assert!(!Sequence::parse("function(sroa),function(gvn)", &c).unwrap().is_flat());
    assert!(Sequence::parse("function(sroa,gvn)", &c).unwrap().is_flat());
}

#[test]
fn parse_of_render_is_identity_on_random_sequences() {
    let c = catalog();
    let pool = c.set("safe").unwrap();
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    for _ in 0..300 {
        let seq = random_flat_between(&mut rng, &pool, 1, 30);
        for nesting in [Nesting::Grouped, Nesting::PerPass] {
            let opts = RenderOptions { nesting, ..Default::default() };
            let text = render_with(&seq, &c, &opts).unwrap();
            let back = Sequence::parse_with(&text, &c, &opts).unwrap();
            assert_eq!(back, seq, "{text}");
            assert_eq!(render_with(&back, &c, &opts).unwrap(), text);
        }
    }
}

#[test]
fn default_o3_expansion_round_trips_as_a_tree() {
    let c = catalog();
    // What `opt -passes=default<O3> -print-pipeline-passes` printed for LLVM 19 (bench 140481).
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/bugs/140481/seq_expanded.v19.txt");
    let text = std::fs::read_to_string(path).expect(path);
    let seq = Sequence::parse(text.trim(), &c).unwrap();
    assert!(!seq.is_flat());
    let rendered = seq.render(&c).unwrap();
    assert_eq!(Sequence::parse(&rendered, &c).unwrap(), seq);
    assert!(seq.len() > 80, "{}", seq.len());
}

#[test]
fn bad_tokens_are_named_with_suggestions() {
    let c = catalog();
    match Sequence::parse("sroa,licmm", &c) {
        Err(SeqError::UnknownPass { name, suggestions }) => {
            assert_eq!(name, "licmm");
            assert!(suggestions.contains(&"licm".to_string()), "{suggestions:?}");
        }
        other => panic!("{other:?}"),
    }
    let e = Sequence::parse("-sroa -lcim", &c).unwrap_err().to_string();
    assert!(e.contains("'-lcim'") && e.contains("licm"), "{e}");
    assert!(matches!(Sequence::parse("-constprop", &c), Err(SeqError::Removed { .. })));
    assert!(matches!(Sequence::parse("-slp-threshold=-50", &c), Err(SeqError::NotAPass { .. })));
    assert!(matches!(Sequence::parse("instcombine,(", &c), Err(SeqError::Syntax { .. })));
    assert!(matches!(Sequence::parse("sroa)", &c), Err(SeqError::Syntax { .. })));
    assert!(matches!(Sequence::parse("require<memssa>", &c), Err(SeqError::UnknownAnalysis { .. })));
    assert!(matches!(Sequence::parse("function(globalopt)", &c), Err(SeqError::Misplaced { .. })));
    assert!(matches!(Sequence::parse("  # nothing\n", &c), Err(SeqError::Empty)));
}

#[test]
fn seq_files_may_list_one_pass_per_line_with_comments() {
    let c = catalog();
    let seq = Sequence::parse("# from a bug report\nsroa\nlicm   # hoist\n\ngvn\n", &c).unwrap();
    assert_eq!(seq.render(&c).unwrap(), "function(sroa,loop-mssa(licm),gvn)");
    assert_eq!(Sequence::parse("-passes='sroa,gvn'", &c).unwrap().len(), 2);
}

#[test]
fn top_level_elements_and_the_passes_they_name() {
    let text = "function(loop-mssa(licm<allowspeculation>),instcombine<max-iterations=1;no-verify-fixpoint>),sroa,cgscc(inline)";
    let elements = super::top_level_elements(text);
    assert_eq!(elements.len(), 3);
    assert_eq!(elements[1], "sroa");
    assert!(super::names_pass(elements[0], "licm"));
    assert!(super::names_pass(elements[0], "instcombine"));
    assert!(super::names_pass(elements[0], "loop-mssa"));
    assert!(!super::names_pass(elements[0], "sroa"));
    // Parameters are not passes, and a name must match whole.
    assert!(!super::names_pass(elements[0], "allowspeculation"));
    assert!(!super::names_pass(elements[0], "max-iterations=1"));
    assert!(!super::names_pass(text, "inst"));
    assert!(super::names_pass(elements[2], "inline"));
}

#[test]
fn sets_have_the_papers_sizes() {
    let c = catalog();
    assert_eq!(c.set("locseq").unwrap().len(), 32);
    assert_eq!(c.set("ctos").unwrap().len(), 107);
    assert!(c.missing_from_sets.is_empty(), "{:?}", c.missing_from_sets);
    let o3 = c.set("o3").unwrap();
    assert!(o3.iter().any(|p| p.name == "slp-vectorizer") && o3.len() > 50);
    assert!(c.unsafe_reason("trigger-crash-function").is_some());
    assert!(c.unsafe_reason("print<domtree>").is_some(), "prefix patterns apply");
    assert!(c.unsafe_reason("licm").is_none());
    assert!(c.set("nope").is_err());
    // Sets hand out what parsing would give, so generated sequences never hit the
    // fixpoint abort.
    assert!(c.set("locseq").unwrap().iter().any(|p| p.to_string() == "instcombine<no-verify-fixpoint>"));
}

#[test]
fn reduction_keeps_what_the_failure_needs_in_order() {
    let c = catalog();
    let seq = Sequence::parse("sroa,instsimplify,licm,dce,adce,gvn,sccp,bdce,gvn,dse", &c).unwrap();
    // "Fails" while some licm is followed, later, by some gvn.
    let mut calls = 0;
    let fails = |s: &Sequence| {
        calls += 1;
        let names: Vec<&str> = s.passes().iter().map(|p| p.name.as_str()).collect();
        names.iter().position(|&n| n == "licm").is_some_and(|i| names[i..].contains(&"gvn"))
    };
    let reduced = reduce(&seq, fails);
    assert_eq!(reduced.render(&c).unwrap(), "function(loop-mssa(licm),gvn)");
    assert!(calls < 40, "{calls} oracle calls");
}

#[test]
fn reduction_walks_into_adaptors_and_drops_empty_ones() {
    let c = catalog();
    let seq = Sequence::parse("function(sroa),function<eager-inv>(gvn,dce),repeat<2>(function(sccp))", &c).unwrap();
    let reduced = reduce(&seq, |s| s.passes().iter().any(|p| p.name == "dce"));
    assert_eq!(reduced.render(&c).unwrap(), "function<eager-inv>(dce)");
}

#[test]
fn preconditions_are_inserted_once_and_patterns_match_whole_names_in_order() {
    use super::random::{contains_ordered, with_preconditions};
    let c = catalog();
    let seq = Sequence::parse("sroa,structurizecfg,lower-switch,fix-irreducible,unify-loop-exits,structurizecfg", &c)
        .unwrap();
    let fixed = with_preconditions(&seq, &c);
    assert_eq!(
        fixed.render(&c).unwrap(),
        "function(sroa,lower-switch,fix-irreducible,unify-loop-exits,structurizecfg,\
         lower-switch,fix-irreducible,unify-loop-exits,structurizecfg)"
    );
    let seq = Sequence::parse("newgvn,licm,early-cse<memssa>,gvn-hoist,gvn", &c).unwrap();
    assert!(contains_ordered(&seq, &["licm", "gvn"]));
    assert!(contains_ordered(&seq, &["early-cse<memssa>", "gvn"]));
    assert!(!contains_ordered(&seq, &["gvn", "licm"]), "gvn must not match newgvn or gvn-hoist");
    assert!(!contains_ordered(&seq, &["early-cse", "early-cse"]));
}

mod excluded_patterns {
    use proptest::prelude::*;
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;

    use super::super::random::random_pool_excluding;
    use super::*;

    /// Whether `pattern` occurs in order among `names` — written apart from
    /// `contains_ordered`, by positions, so that the two can disagree.
    fn occurs(names: &[String], pattern: &[String]) -> bool {
        let mut from = 0;
        pattern.iter().all(|want| match names[from..].iter().position(|n| n == want) {
            Some(i) => {
                from += i + 1;
                true
            }
            None => false,
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

        /// A known bug's reduced sequence never reappears, in order, in a generated pool.
        #[test]
        fn no_generated_sequence_contains_an_excluded_pattern(
            seed in any::<u64>(),
            picks in proptest::collection::vec(proptest::collection::vec(0usize..1000, 1..4), 1..4),
        ) {
            let c = catalog();
            // Bare names: a pattern names the pass, whatever its parameters.
            let pool: Vec<Pass> = c.set("ctos").unwrap().into_iter().filter(|p| p.params.is_none()).collect();
            let patterns: Vec<Vec<String>> =
                picks.iter().map(|p| p.iter().map(|&i| pool[i % pool.len()].name.clone()).collect()).collect();
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            if let Some((seqs, _)) = random_pool_excluding(&mut rng, &pool, (5, 30), 40, &patterns, &c) {
                prop_assert_eq!(seqs.len(), 40);
                for seq in &seqs {
                    let names: Vec<String> = seq.passes().iter().map(|p| p.name.clone()).collect();
                    for pattern in &patterns {
                        prop_assert!(!occurs(&names, pattern), "{:?} holds {:?}", names, pattern);
                    }
                }
            }
        }
    }

    #[test]
    fn without_patterns_nothing_is_dropped_and_a_one_pass_pattern_leaves_the_pool() {
        let c = catalog();
        let pool: Vec<Pass> = c.set("ctos").unwrap().into_iter().filter(|p| p.params.is_none()).collect();
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        let (seqs, dropped) = random_pool_excluding(&mut rng, &pool, (50, 60), 30, &[], &c).unwrap();
        assert_eq!((seqs.len(), dropped), (30, 0));
        assert!(seqs.iter().any(|s| s.passes().iter().any(|p| p.name == "licm")));
        let only_licm = vec![vec!["licm".to_string()]];
        let (seqs, dropped) = random_pool_excluding(&mut rng, &pool, (50, 60), 30, &only_licm, &c).unwrap();
        assert_eq!(dropped, 0, "licm is taken out of the pool, not rejected sequence by sequence");
        assert!(seqs.iter().all(|s| s.passes().iter().all(|p| p.name != "licm")));
    }
}

mod arbitrary_text {
    use proptest::prelude::*;

    use super::*;

    /// Pieces of pipeline text, valid and not, with multi-byte characters among them: most
    /// strings built from them are errors, enough of them parse to test the round trip.
    fn piece() -> impl Strategy<Value = String> {
        prop_oneof![
            Just("sroa".to_string()),
            Just("licm".to_string()),
            Just("gvn".to_string()),
            Just("instcombine".to_string()),
            Just("loop-unroll<O3>".to_string()),
            Just("function(".to_string()),
            Just("loop(".to_string()),
            Just("cgscc(".to_string()),
            Just(")".to_string()),
            Just(",".to_string()),
            Just("<".to_string()),
            Just(">".to_string()),
            Just(" ".to_string()),
            Just("-".to_string()),
            Just("#".to_string()),
            Just("\n".to_string()),
            Just("“gvn”".to_string()),
            Just("é".to_string()),
            any::<char>().prop_map(String::from),
            "\\PC{0,6}",
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

        #[test]
        fn parsing_never_panics_and_what_it_accepts_round_trips(
            pieces in proptest::collection::vec(piece(), 0..12)
        ) {
            let c = catalog();
            let text: String = pieces.concat();
            if let Ok(seq) = Sequence::parse(&text, &c) {
                let rendered = seq.render(&c);
                prop_assert!(rendered.is_ok(), "{text:?} parses but does not render: {rendered:?}");
                let rendered = rendered.unwrap();
                let back = Sequence::parse(&rendered, &c);
                prop_assert_eq!(back.as_ref(), Ok(&seq), "{:?} -> {:?}", text, rendered);
                prop_assert_eq!(seq.render(&c).unwrap(), rendered);
            }
        }

        #[test]
        fn any_unicode_string_is_an_answer_not_a_panic(text in "\\PC{0,40}") {
            let _ = Sequence::parse(&text, &catalog());
        }
    }
}

#[test]
fn batched_reduction_finds_what_one_at_a_time_finds() {
    let c = catalog();
    let seq = Sequence::parse("sroa,instsimplify,licm,dce,adce,gvn,sccp,bdce,gvn,dse,licm,sroa,dce,gvn", &c).unwrap();
    let oracles: [fn(&[&str]) -> bool; 3] = [
        |n| n.iter().position(|&p| p == "licm").is_some_and(|i| n[i..].contains(&"gvn")),
        |n| n.iter().filter(|&&p| p == "dce").count() >= 2 && n.contains(&"sccp"),
        |n| n.len() >= 5,
    ];
    for oracle in oracles {
        let fails = |s: &Sequence| oracle(&s.passes().iter().map(|p| p.name.as_str()).collect::<Vec<_>>());
        let one_at_a_time = reduce(&seq, fails).render(&c).unwrap();
        for width in [2, 3, 8] {
            let mut tested = 0;
            let batched = super::reduce::reduce_batched(&seq, width, |batch| {
                assert!(batch.len() <= width, "{} candidates for width {width}", batch.len());
                tested += batch.len();
                batch.iter().map(fails).collect()
            });
            assert_eq!(batched.render(&c).unwrap(), one_at_a_time, "width {width}");
            assert!(tested > 0);
        }
    }
}

#[test]
fn a_sequence_loses_the_passes_at_its_end_that_cannot_change_the_ir() {
    let c = catalog();
    let inert = |text: &str| Sequence::parse(text, &c).unwrap().without_inert_tail().render(&c).unwrap();
    assert_eq!(inert("function(sroa,verify,gvn),verify"), "function(sroa,verify,gvn)");
    assert_eq!(inert("function(gvn,require<memoryssa>),invalidate<memoryssa>,verify"), "function(gvn)");
    assert_eq!(inert("sroa,gvn"), "function(sroa,gvn)");
    // Nothing that changes the IR: nothing is dropped.
    assert_eq!(inert("verify"), "verify");
}

#[test]
fn the_part_of_a_sequence_that_ran_ends_with_the_element_the_optimizer_stopped_in() {
    let c = catalog();
    let opts = RenderOptions::default();
    let seq = Sequence::parse("function(sroa),function(loop(loop-unroll-full)),globaldce,constmerge", &c).unwrap();
    let ran = |e| through_element(&seq, e, &c, &opts).map(|s| s.render(&c).unwrap());
    assert_eq!(ran(1).as_deref(), Some("function(sroa),function(loop(loop-unroll-full))"));
    assert_eq!(ran(0).as_deref(), Some("function(sroa)"));
    // The last element stopped: nothing to cut.
    assert_eq!(ran(3), None);
    assert_eq!(ran(9), None);
}
