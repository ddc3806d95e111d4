//! The `rea` command line.

fn main() {
    println!("rea");
}
