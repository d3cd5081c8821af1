//! Tensor aliases in the front-end: `const A: Tensor<D> = X;` names the tensor `X` of the body
//! `A` too. The IR holds `X` alone, so a taskflow written with an alias is the one written
//! without it; an alias that names nothing, another element type, or itself in a cycle is an
//! error at its tokens.

use hpmoe_core::schedule::UnitCost;
use hpmoe_core::syntax::{Frontend, parse_file, render_error};

fn one(src: &str) -> Frontend {
    let mut found = parse_file(src).unwrap_or_else(|e| panic!("{}", render_error(&e, "test.rs")));
    assert_eq!(found.len(), 1);
    found.remove(0)
}

/// Every error of `src` as `line:col: message` (first line of the message).
fn errors(src: &str) -> Vec<String> {
    let fe = one(src);
    let err = fe.compile(&UnitCost).expect_err("the taskflow was accepted");
    render_error(&err, "t").lines().filter(|l| l.starts_with("t:")).map(|l| l[2..].to_string()).collect()
}

/// `IN` is the name a shared tile reads; the taskflow says which tensor it is.
const ALIASED: &str = r#"
#[taskflow(profile = small(1), ranks = 2)]
fn aliased() {
    const X: Tensor<F32> = input([8, 4]);
    const Z: Tensor<F32> = input([8, 4]);
    const IN: Tensor<F32> = X;
    const Y: Tensor<F32> = output([8, 4]);
    #[tile(aiv, grid(i in 0..8))]
    fn a(i: Idx) {
        let row = IN.at(i);
        copy(row, Y.at(i));
    }
}
"#;

#[test]
fn an_alias_lowers_to_the_tensor_it_names() {
    let fe = one(ALIASED);
    assert!(fe.errors.is_empty(), "{:?}", fe.errors);
    let names: Vec<&str> = fe.taskflow.tensors.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["X", "Z", "Y"], "an alias declares no tensor");
    let direct = one(&ALIASED.replace("IN.at(i)", "X.at(i)"));
    assert_eq!(fe.taskflow.families[0].body, direct.taskflow.families[0].body);
    assert!(fe.taskflow.same_structure(&direct.taskflow));
    // Another target is another taskflow; an alias of an alias is followed to its tensor.
    let other = one(&ALIASED.replace("= X;", "= Z;"));
    assert_eq!(other.taskflow.families[0].body[0].args[0].tensor, "Z");
    assert!(!other.taskflow.same_structure(&direct.taskflow));
    let chained = one(&ALIASED.replace("= X;", "= X2;\n    const X2: Tensor<F32> = X;"));
    assert!(chained.errors.is_empty(), "{:?}", chained.errors);
    assert_eq!(chained.taskflow.families[0].body, direct.taskflow.families[0].body);
    // It compiles to the same table.
    let (a, b) = (fe.compile(&UnitCost).unwrap(), direct.compile(&UnitCost).unwrap());
    assert!(a.table.to_bytes() == b.table.to_bytes());
}

#[test]
fn an_alias_names_a_tensor_of_its_element_type_without_a_cycle() {
    // One error: the use of a refused alias adds nothing more.
    assert_eq!(
        errors(&ALIASED.replace("= X;", "= XX;")),
        ["6:29: error: `IN` is an alias of `XX`, which is not a tensor declared in the taskflow body"]
    );
    assert_eq!(
        errors(&ALIASED.replace("const IN: Tensor<F32>", "const IN: Tensor<Bf16>")),
        ["6:15: error: `IN` is declared `Tensor<Bf16>` but the tensor it names, `X`, holds F32"]
    );
    let cycle = ALIASED.replace("= X;", "= J;\n    const J: Tensor<F32> = IN;");
    // One error per cycle, at its first alias; an alias leading into it adds none.
    assert_eq!(errors(&cycle), ["6:29: error: the aliases `IN` → `J` → `IN` name one another in a cycle"]);
    let into_cycle =
        cycle.replace("const J: Tensor<F32> = IN;", "const J: Tensor<F32> = IN;\n    const K: Tensor<F32> = J;");
    assert_eq!(errors(&into_cycle), ["6:29: error: the aliases `IN` → `J` → `IN` name one another in a cycle"]);
    assert_eq!(
        errors(
            &ALIASED.replace("const IN: Tensor<F32> = X;", "const IN: Tensor<F32> = X;\n    const Z: Tensor<F32> = X;")
        ),
        ["7:11: error: `Z` is declared twice: as a tensor and as an alias"]
    );
}

/// A tensor whose declaration is wrong (another constructor, an unknown element type, a shape
/// not written as an array, for a tensor or an alias) gets one error: its uses in tiles and in
/// aliases add none.
#[test]
fn a_tensor_declared_wrong_is_one_error() {
    for (wrong, expected) in [
        ("const X: Tensor<F32> = inputs([8, 4]);", "4:28: error: a tensor is declared with"),
        ("const X: Tensor<Q7> = input([8, 4]);", "4:21: error: unknown element type"),
        ("const X: Tensor<F32> = input(8);", "4:34: error: a tensor's shape is an array"),
    ] {
        let src = ALIASED.replace("const X: Tensor<F32> = input([8, 4]);", wrong);
        let errs = errors(&src);
        assert_eq!(errs.len(), 1, "{wrong}: {errs:?}");
        assert!(errs[0].starts_with(expected), "{wrong}: {errs:?}");
    }
    let src = ALIASED.replace("const IN: Tensor<F32> = X;", "const IN: Tensor<Q7> = X;");
    let errs = errors(&src);
    assert_eq!(errs.len(), 1, "{errs:?}");
    assert!(errs[0].starts_with("6:22: error: unknown element type"), "{errs:?}");
}
