//! The README's Rust programs: every ```rust block is one of `examples/*.rs` as it is (after the
//! file's `//!` header), so the tests that run those examples run the README's programs; and the
//! quick start (`examples/readme.rs`) runs here. The GPU and mesh examples run over the CUDA
//! driver test double in `readme_gpu.rs` and `example_mesh.rs`.
use std::path::Path;

#[path = "../examples/readme.rs"]
mod readme_example;

/// A file's text after its leading `//!` lines: what the README shows of it.
fn program_of(text: &str) -> String {
    let lines: Vec<&str> = text.lines().skip_while(|line| line.starts_with("//!")).collect();
    lines.join("\n") + "\n"
}

fn rust_blocks(readme: &str) -> Vec<String> {
    let mut blocks = Vec::new();
    let mut rest = readme;
    while let Some(start) = rest.find("```rust\n") {
        rest = &rest[start + "```rust\n".len()..];
        let end = rest.find("\n```").expect("a ```rust block without its closing fence");
        blocks.push(rest[..=end].to_string());
        rest = &rest[end + 1..];
    }
    blocks
}

#[test]
fn readme_rust_blocks_are_the_examples() {
    let crate_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let readme = std::fs::read_to_string(crate_dir.join("../README.md")).expect("README.md");
    let mut examples = Vec::new();
    for entry in std::fs::read_dir(crate_dir.join("examples")).expect("examples/") {
        let path = entry.expect("an examples/ entry").path();
        if path.extension().is_some_and(|extension| extension == "rs") {
            examples.push((path.clone(), program_of(&std::fs::read_to_string(&path).expect("an example"))));
        }
    }
    let blocks = rust_blocks(&readme);
    assert!(blocks.iter().any(|block| block.contains("Executor::for_ram")), "the README shows a Rust quick start");
    for block in &blocks {
        assert!(
            examples.iter().any(|(_, program)| program == block),
            "this README block is none of rust/examples/*.rs as it is (copy the file, or change it too):\n{block}"
        );
    }
}

#[test]
fn readme_quick_start_runs() {
    readme_example::main().expect("the README's Rust quick start");
}
