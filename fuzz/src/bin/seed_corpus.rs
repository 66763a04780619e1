//! Write the seed corpus: `seed_corpus <dir>` creates `<dir>/<target>/<name>` for each seed.
fn main() {
    let dir = std::env::args().nth(1).unwrap_or_else(|| "corpus".into());
    for (target, name, bytes) in fluss_writer_fuzz::seeds() {
        let d = std::path::Path::new(&dir).join(target);
        std::fs::create_dir_all(&d).expect("create corpus directory");
        std::fs::write(d.join(name), bytes).expect("write seed");
    }
}
